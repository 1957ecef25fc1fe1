"""The scene pool (SPEC §1.3). Scene blocks (L2, §1.4) live beside it in this app."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.utils import timezone

from apps.accounts.models import Profile

SCENE_MAIN_AGENT_LIVE = "main-agent-live"
SCENE_UNCLASSIFIED = "unclassified"
RESERVED_SCENES = (SCENE_MAIN_AGENT_LIVE, SCENE_UNCLASSIFIED)


class SceneEntry(models.Model):
    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="scene_entries")
    scene_id = models.CharField(max_length=64)  # sc0001…, or a reserved id
    name = models.CharField(max_length=300)
    aliases = models.JSONField(default=list, blank=True)
    project = models.CharField(max_length=1000, blank=True)
    cwd = models.CharField(max_length=1000, blank=True)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    use_count = models.IntegerField(default=0)
    merged_into = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="merged_from")
    reserved = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["profile", "scene_id"], name="uniq_scene_id_per_profile"),
            models.UniqueConstraint(fields=["profile", "name"], name="uniq_scene_name_per_profile"),
        ]
        ordering = ["scene_id"]

    def __str__(self) -> str:
        return f"{self.scene_id} {self.name}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.scene_id,
            "name": self.name,
            "aliases": list(self.aliases or []),
            "project": self.project,
            "cwd": self.cwd,
            "createdAt": self.created_at.isoformat().replace("+00:00", "Z") if self.created_at else None,
            "lastUsedAt": self.last_used_at.isoformat().replace("+00:00", "Z") if self.last_used_at else None,
            "useCount": self.use_count,
            "mergedInto": self.merged_into.scene_id if self.merged_into_id and self.merged_into else None,
        }


class SceneBlock(models.Model):
    """An L2 scene block (SPEC §1.4): Markdown body, meta, members, archive state."""

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="scene_blocks")
    filename = models.CharField(max_length=120)
    content = models.TextField(blank=True)
    summary = models.CharField(max_length=1000, blank=True)
    heat = models.IntegerField(default=0)
    meta_created = models.DateTimeField()
    meta_updated = models.DateTimeField()
    archived = models.BooleanField(default=False)
    archived_at = models.DateTimeField(null=True, blank=True)
    archive_reason = models.TextField(blank=True)
    # Soft-deleted / merged-away blocks keep their row (and backups) but leave the live set.
    removed = models.BooleanField(default=False)
    removed_at = models.DateTimeField(null=True, blank=True)
    # Server time of the last body write (create/update/merge/consolidate), for the
    # archive guide's "active days since the block was last written".
    written_at = models.DateTimeField(null=True, blank=True)
    # Server time the block (or, for a merge target, its oldest source) first existed;
    # the archive age rule uses it, not the caller-supplied meta.created.
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        # Like the scenes/ and archive/ folders: one live and one archived block may share
        # a name (that is the archive "name conflict"); removed blocks free their name.
        constraints = [
            models.UniqueConstraint(
                fields=["profile", "filename"], condition=models.Q(removed=False, archived=False), name="uniq_live_scene_block"
            ),
            models.UniqueConstraint(
                fields=["profile", "filename"], condition=models.Q(removed=False, archived=True), name="uniq_archived_scene_block"
            ),
        ]
        indexes = [models.Index(fields=["profile", "archived", "removed"])]

    def __str__(self) -> str:
        return self.filename

    @property
    def members(self) -> list[str]:
        return sorted(self.member_rows.values_list("record_id", flat=True))

    def meta_dict(self) -> dict[str, Any]:
        """The block's meta in the tool form (SPEC §1.4), times in UTC with `Z`."""
        return {"created": _iso(self.meta_created), "updated": _iso(self.meta_updated), "summary": self.summary, "heat": self.heat}


class SceneBlockMember(models.Model):
    """Membership of an L1 record (by record id) in a scene block."""

    block = models.ForeignKey(SceneBlock, on_delete=models.CASCADE, related_name="member_rows")
    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="+")
    record_id = models.CharField(max_length=64)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["block", "record_id"], name="uniq_block_member")]
        indexes = [models.Index(fields=["profile", "record_id"])]


class SceneBlockBackup(models.Model):
    """A previous state of a block, kept on every write (at least l2.backupsPerBlock)."""

    block = models.ForeignKey(SceneBlock, on_delete=models.CASCADE, related_name="backups")
    content = models.TextField(blank=True)
    meta = models.JSONField(default=dict)
    members = models.JSONField(default=list)
    action = models.CharField(max_length=32)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]


class SceneCommit(models.Model):
    """One applied l2_commit: what it did, the cursor move and the persona signal, for the
    dashboard (the reason of a persona request is shown there)."""

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="scene_commits")
    actor = models.CharField(max_length=200)
    applied = models.JSONField(default=list)  # [{action, filename}]
    cursor_before = models.JSONField(null=True, blank=True)
    cursor_after = models.JSONField(null=True, blank=True)
    persona_signal = models.BooleanField(default=False)
    persona_reason = models.TextField(blank=True)
    live_count = models.IntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-id"]


def _iso(value) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None
