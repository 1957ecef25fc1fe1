"""Test data shared by every test area: L1 records stored as the records app stores them
(row + a change row, `last_change` pointing at it) and scene blocks written through the
scene service."""

from __future__ import annotations

import itertools
from datetime import timedelta
from typing import Any

from django.utils import timezone

from apps.accounts.models import Profile
from apps.records.models import L1Change, L1Record

_seq = itertools.count(1)


def make_record(
    profile: Profile,
    content: str = "The build uses make test for every change",
    *,
    action: str = "store",
    record_id: str | None = None,
    type: str | None = None,
    priority: int | None = None,
    scope: str | None = None,
    project: str | None = None,
    metadata: dict[str, Any] | None = None,
    task_state: str | None = None,
    deleted: bool | None = None,
    source: str | None = None,
    **fields: Any,
) -> L1Record:
    """A record with one change row (`action`). Without `created_at` each new record is a
    minute older than the one before, so lists have a stable order. Given the `record_id`
    of an existing record, the call changes that record (the arguments given, one more
    change row), as a fix or a tombstone does.

    A new record defaults to a global `work_fact` of priority 60 from the subagent;
    `scope`/`project` set those keys of `metadata` (default `{"scope": "global",
    "project": ""}`). Any other model field (`scene`, `created_at`, `content_key`,
    `source_message_ids`, …) passes through as given."""
    n = next(_seq)
    # The number in the id is unique per call; the tail stays 4 characters (the shape
    # l1_commit accepts) however many records a run writes.
    record_id = record_id or f"l1_{1700000000000 + n}_t{n % 1000:03d}"
    existing = L1Record.objects.filter(profile=profile, record_id=record_id).first()
    given = {name: value for name, value in {
        "type": type, "priority": priority, "task_state": task_state, "deleted": deleted, "source": source,
    }.items() if value is not None}
    if existing is None or metadata is not None or scope is not None or project is not None:
        if metadata is not None:
            meta = dict(metadata)
        else:
            meta = dict(existing.metadata) if existing is not None else {"scope": "global", "project": ""}
        if scope is not None:
            meta["scope"] = scope
        if project is not None:
            meta["project"] = project
        given["metadata"] = meta
    if existing is not None:
        for name, value in {"content": content, "updated_at": timezone.now(), **given, **fields}.items():
            setattr(existing, name, value)
        existing.save()
        record = existing
    else:
        now = fields.pop("created_at", None) or timezone.now() - timedelta(minutes=n)
        record = L1Record.objects.create(
            profile=profile,
            record_id=record_id,
            content=content,
            **{"type": "work_fact", "priority": 60, **given},
            created_at=now,
            updated_at=fields.pop("updated_at", now),
            content_key=fields.pop("content_key", f"k{n}-{profile.pk}"),
            **fields,
        )
    change = L1Change.objects.create(profile=profile, record=record, action=action, actor="test", state=record.as_dict())
    L1Record.objects.filter(pk=record.pk).update(last_change=change.pk)
    record.refresh_from_db()
    return record


def make_block(profile, filename: str = "项目-构建.md", content: str = "# Build\n\nUses `make test`.", *, members=None, days_old: int = 30):
    from apps.scenes.models import SceneBlock
    from apps.scenes.services import scene_commit

    created = (timezone.now() - timedelta(days=days_old)).isoformat()
    write = {"action": "create", "filename": filename, "content": content,
             "meta": {"created": created, "updated": created, "summary": "how the build works", "heat": 3}}
    if members is not None:
        write["members"] = members
    scene_commit(profile=profile, actor="test", scene_writes=[write], cursor=None)
    block = SceneBlock.objects.get(profile=profile, filename=filename, removed=False, archived=False)
    # The archive age guard counts from the block's first write here: age it as test data.
    SceneBlock.objects.filter(pk=block.pk).update(created_at=timezone.now() - timedelta(days=days_old))
    block.refresh_from_db()
    return block
