"""Test data shared by every test area: L1 records stored as the records app stores them
(row + a change row, `last_change` pointing at it) and scene blocks written through the
scene service."""

from __future__ import annotations

import itertools
from datetime import timedelta

from django.utils import timezone

from apps.records.models import L1Change, L1Record

_seq = itertools.count(1)


def make_record(profile, content: str = "The build uses make test for every change", *, action: str = "store", **fields) -> L1Record:
    """A record with one change row (`action`). Without `created_at` each new record is a
    minute older than the one before, so lists have a stable order. Given the `record_id`
    of an existing record, the call changes that record (new fields, one more change row),
    as a fix or a tombstone does."""
    n = next(_seq)
    record_id = fields.pop("record_id", None) or f"l1_{1700000000000 + n}_t{n:03d}"
    existing = L1Record.objects.filter(profile=profile, record_id=record_id).first()
    if existing is not None:
        for name, value in {"content": content, "updated_at": timezone.now(), **fields}.items():
            setattr(existing, name, value)
        existing.save()
        record = existing
    else:
        now = fields.pop("created_at", None) or timezone.now() - timedelta(minutes=n)
        record = L1Record.objects.create(
            profile=profile,
            record_id=record_id,
            content=content,
            type=fields.pop("type", "work_fact"),
            priority=fields.pop("priority", 60),
            metadata=fields.pop("metadata", {"scope": "global", "project": ""}),
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
