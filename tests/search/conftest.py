"""Fixtures for retrieval tests: a private embedded index per test and a record factory."""

from __future__ import annotations

import itertools

import pytest
from django.utils import timezone

from apps.records.models import L1Record
from apps.records.normalize import content_key
from apps.search import index
from apps.search.outbox import drain_outbox, enqueue_index_op

_ids = itertools.count(1)


@pytest.fixture(autouse=True)
def _no_background_rebuilds(request, monkeypatch):
    """A rebuild thread outlives its test (and a test database transaction it cannot see):
    only tests marked `background_rebuild` let a space change start one."""
    monkeypatch.setattr(index, "_rebuilds", {})
    monkeypatch.setattr(index, "AUTO_REBUILD", request.node.get_closest_marker("background_rebuild") is not None)


@pytest.fixture(autouse=True)
def _fresh_language_cache():
    """Record languages are remembered per process (apps/search/ranking.py): start empty."""
    from apps.search import ranking

    ranking.forget_languages()
    yield
    ranking.forget_languages()


@pytest.fixture(autouse=True)
def _private_index(private_index):
    yield


def write_record(profile, content, *, type="work_fact", scope="global", project="", task_state=None, priority=60,
                 scene=None, record_id=None, drain=True, **metadata):
    """Store an L1 record the way the commit service does (row + index op), then drain."""
    now = timezone.now()
    rid = record_id or f"l1_{int(now.timestamp() * 1000)}_{next(_ids):04d}"
    meta = {"scope": scope, "project": project if scope == "self" else "", **metadata}
    record = L1Record.objects.create(
        profile=profile, record_id=rid, content=content, type=type, priority=priority, metadata=meta,
        created_at=now, updated_at=now, content_key=content_key(content),
        task_state=(task_state or "open") if type == "work_task" else None,
        scene=scene, scene_name=scene.name if scene else "",
    )
    enqueue_index_op(profile=profile, record_id=rid, op="upsert")
    if drain:
        drain_outbox(profile.pk)
    return record


def tombstone(record, *, drain=True):
    record.deleted = True
    record.updated_at = timezone.now()
    record.save(update_fields=["deleted", "updated_at"])
    enqueue_index_op(profile=record.profile, record_id=record.record_id, op="delete")
    if drain:
        drain_outbox(record.profile_id)


@pytest.fixture
def record_factory(db):
    return write_record
