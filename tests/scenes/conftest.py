"""Fixtures for L2 tests: L1 records written directly as rows with their change rows."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.records.models import L1Record
from apps.scenes.models import SceneBlock
from tests import factories


def write_record(profile, *, record_id: str | None = None, content: str = "a fact worth keeping", deleted: bool = False, action: str = "store") -> L1Record:
    """Store or change a record the way the records app does: newest state + one change row."""
    return factories.make_record(profile, content, record_id=record_id, deleted=deleted, action=action, metadata={}, created_at=timezone.now())


@pytest.fixture
def make_record():
    return write_record


def meta(summary: str = "a scene", heat: int = 1, created: str = "2026-01-01T00:00:00Z", updated: str = "2026-01-02T00:00:00Z") -> dict:
    return {"created": created, "updated": updated, "summary": summary, "heat": heat}


def create(filename: str, content: str = "Body text of a scene block.", **kw) -> dict:
    write = {"action": "create", "filename": filename, "meta": kw.pop("meta", meta()), "content": content}
    write.update(kw)
    return write


def make_old(profile, filename: str, days: int = 30) -> None:
    SceneBlock.objects.filter(profile=profile, filename=filename, removed=False).update(
        created_at=timezone.now() - timedelta(days=days)
    )


def state(profile) -> dict:
    """Everything an l2_commit may change, for before == after assertions."""
    from apps.accounts.models import AuditEvent
    from apps.conversations.cursors import cursor_get
    from apps.scenes.models import SceneBlockBackup, SceneBlockMember, SceneCommit

    return {
        "blocks": sorted(SceneBlock.objects.filter(profile=profile).values_list(
            "filename", "content", "summary", "heat", "archived", "removed", "archive_reason")),
        "members": sorted(SceneBlockMember.objects.filter(profile=profile).values_list("block__filename", "record_id")),
        "backups": SceneBlockBackup.objects.filter(block__profile=profile).count(),
        "commits": SceneCommit.objects.filter(profile=profile).count(),
        "audit": AuditEvent.objects.filter(profile=profile).count(),
        "cursor": cursor_get(profile=profile, kind="l2"),
    }
