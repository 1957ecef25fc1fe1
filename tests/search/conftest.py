"""Fixtures for retrieval tests: a private embedded index per test; records are written
by `tests.factories.make_record` and then indexed."""

from __future__ import annotations

import pytest
from django.utils import timezone

from apps.records.normalize import content_key
from apps.search import index
from apps.search.outbox import drain_outbox, enqueue_index_op
from tests import factories


def hold_index(settings):
    """What another process holding the embedded index looks like to this one: a second
    handle on the same exclusive lock (the lock is per open file, so this process sees it
    as foreign). Returns an object with close()."""
    if index.engine() == "edge":
        from apps.search.edge import EdgeStore

        return EdgeStore(settings.QDRANT_EDGE_PATH)
    from qdrant_client import QdrantClient

    return QdrantClient(path=settings.QDRANT_PATH)


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
    """Store an L1 record the way the commit service does (row, change row, index op),
    then drain: created now, with the real content key and the task state a new task gets."""
    now = timezone.now()
    record = factories.make_record(
        profile, content, record_id=record_id, type=type, priority=priority, scope=scope,
        project=project if scope == "self" else "", metadata=metadata,
        task_state=(task_state or "open") if type == "work_task" else None,
        scene=scene, scene_name=scene.name if scene else "", created_at=now, updated_at=now, content_key=content_key(content),
    )
    enqueue_index_op(profile=profile, record_id=record.record_id, op="upsert")
    if drain:
        drain_outbox(profile.pk)
    return record


def tombstone(record, *, drain=True):
    factories.make_record(record.profile, record.content, record_id=record.record_id, deleted=True, action="tombstone")
    record.refresh_from_db()
    enqueue_index_op(profile=record.profile, record_id=record.record_id, op="delete")
    if drain:
        drain_outbox(record.profile_id)
