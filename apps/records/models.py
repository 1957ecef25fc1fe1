"""L1 records (SPEC §1.2) and their full history.

`L1Record` holds the newest state of each id (last writer wins). Every change appends an
`L1Change` row with the full state after the change; its autoincrement id is the change
sequence `read_l1_increment` pages by. Writers of a profile hold the profile write lock
until commit, so within one profile change ids grow in commit order.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import models
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Coalesce

from apps.accounts.models import Profile

CODE_TYPES = ("work_fact", "work_task", "work_method", "work_artifact")
CHAT_TYPES = ("persona", "episodic", "instruction")
ALL_TYPES = CODE_TYPES + CHAT_TYPES
TASK_STATES = ("open", "done", "dropped")
SCOPES = ("self", "global", "unknown")


class L1Record(models.Model):
    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="l1_records")
    record_id = models.CharField(max_length=64)
    content = models.TextField()
    type = models.CharField(max_length=32)
    priority = models.IntegerField(default=60)
    scene = models.ForeignKey("scenes.SceneEntry", null=True, blank=True, on_delete=models.SET_NULL, related_name="records")
    scene_name = models.CharField(max_length=300, blank=True)
    source_message_ids = models.JSONField(default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    timestamps = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()
    version = models.IntegerField(default=1)
    # Text, not bounded CharFields: they hold what the L0 ingest accepted (keys up to 512
    # characters, cwd up to 4096), which a varchar limit would refuse on PostgreSQL.
    session_key = models.TextField(blank=True)
    session_id = models.TextField(blank=True)
    cwd = models.TextField(blank=True)
    deleted = models.BooleanField(default=False)
    task_state = models.CharField(max_length=8, null=True, blank=True)
    replaced_by = models.CharField(max_length=64, blank=True)
    source = models.CharField(max_length=16, default="subagent")  # subagent | main-agent | dashboard | import
    # Normalised content, for exact-duplicate detection in the value check.
    content_key = models.CharField(max_length=64, db_index=True)
    last_change = models.BigIntegerField(default=0, db_index=True)
    # `metadata.scope` as a column the database keeps in step with every write (a stored
    # generated column), so the scope filter of the records list is an index range and
    # its count an index-only count instead of a JSON read of every row. A record without
    # a scope is "unknown", as `scope` below says.
    scope_key = models.GeneratedField(
        expression=Coalesce(KeyTextTransform("scope", "metadata"), models.Value("unknown"), output_field=models.TextField()),
        output_field=models.TextField(), db_persist=True,
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["profile", "record_id"], name="uniq_l1_record_per_profile")]
        indexes = [
            models.Index(fields=["profile", "deleted", "type"]),
            models.Index(fields=["profile", "created_at"]),
            models.Index(fields=["profile", "last_change"]),
            models.Index(fields=["profile", "content_key"]),
            # Covers "is this record id live?" probes (the hits page's never-recalled count).
            models.Index(fields=["profile", "record_id", "deleted"]),
            # Covers open-task counts and the task-state filter (overview, records list).
            models.Index(fields=["profile", "type", "task_state", "deleted"]),
            # The scope filter of the records list: its newest-first page in index order and
            # its count inside the index. `deleted` comes last: `deleted=False` compiles to
            # `NOT deleted`, which SQLite cannot use as an equality ahead of the order.
            models.Index(fields=["profile", "scope_key", "created_at", "id", "deleted"], name="l1_scope_created"),
        ]

    def __str__(self) -> str:
        return self.record_id

    @property
    def scope(self) -> str:
        scope: str = (self.metadata or {}).get("scope", "unknown")  # validated on write
        return scope

    @property
    def project(self) -> str:
        project: str = (self.metadata or {}).get("project", "")  # validated on write
        return project

    def as_dict(self) -> dict[str, Any]:
        """The record in the SPEC §1.2 field names (the form tools and exports use)."""
        data: dict[str, Any] = {
            "id": self.record_id,
            "content": self.content,
            "type": self.type,
            "priority": self.priority,
            "scene_id": self.scene.scene_id if self.scene_id and self.scene else None,
            "scene_name": self.scene_name,
            "source_message_ids": list(self.source_message_ids or []),
            "metadata": dict(self.metadata or {}),
            "timestamps": list(self.timestamps or []),
            "createdAt": _iso(self.created_at),
            "updatedAt": _iso(self.updated_at),
            "version": self.version,
            "sessionKey": self.session_key,
            "sessionId": self.session_id,
            "cwd": self.cwd,
            "deleted": self.deleted,
            "replacedBy": self.replaced_by or None,
        }
        if self.type == "work_task":
            data["taskState"] = self.task_state or "open"
        return data


class L1Change(models.Model):
    """One change of one record; `id` is the profile's change sequence."""

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="l1_changes")
    record = models.ForeignKey(L1Record, on_delete=models.CASCADE, related_name="changes")
    action = models.CharField(max_length=32)  # store | tombstone | replace | fix | task_state | restore | import
    actor = models.CharField(max_length=200)
    state = models.JSONField()  # full as_dict() after the change
    note = models.JSONField(null=True, blank=True)  # evidence, reason, counts
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["profile", "id"])]


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.isoformat().replace("+00:00", "Z")


class RulesLoad(models.Model):
    """`load_memory_rules` remembered per session (SPEC §3.1): `once` is cleared by the
    session's next successful `l1_commit`, `always` stays for the session."""

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="rules_loads")
    session_key = models.TextField(blank=True)  # at most 512 characters (checked by the services)
    mode = models.CharField(max_length=8)  # once | always
    loaded_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["profile", "session_key"], name="uniq_rules_load_per_session")]
