"""The in-memory search mirror of an embedded collection."""

from __future__ import annotations

import math

import numpy as np
import pytest

from apps.search import embedding, index
from apps.search.mirror import FilterSpec, Mirror
from tests.search.conftest import tombstone, write_record


def _mirror():
    m = Mirror(dim=3)
    m.upsert("g", [1, 0, 0], [1, 2], [1.0, 1.0], {"scope": "global", "type": "work_fact"})
    m.upsert("u", [0.9, 0.1, 0], [1], [1.0], {"scope": "unknown", "type": "work_task", "task_state": "done"})
    m.upsert("a", [0.8, 0.2, 0], [1], [1.0], {"scope": "self", "project": "/p/a", "type": "work_fact", "scene_id": "sc1"})
    m.upsert("b", [0.7, 0.3, 0], [1, 3], [1.0, 2.0], {"scope": "self", "project": "/p/b", "type": "work_fact"})
    return m


def _ids(hits):
    return [rid for rid, _ in hits]


def test_dense_search_ranks_by_cosine_and_applies_scope():
    m = _mirror()
    assert _ids(m.search_dense([1, 0, 0], 10, FilterSpec(project="/p/a"))) == ["g", "u", "a"]
    assert _ids(m.search_dense([1, 0, 0], 10, FilterSpec())) == ["g", "u"]
    assert _ids(m.search_dense([1, 0, 0], 10, None)) == ["g", "u", "a", "b"]


def test_filters_types_scene_and_closed_tasks():
    m = _mirror()
    assert _ids(m.search_dense([1, 0, 0], 10, FilterSpec(types=["work_task"]))) == ["u"]
    assert _ids(m.search_dense([1, 0, 0], 10, FilterSpec(hide_closed=True))) == ["g"]
    assert _ids(m.search_dense([1, 0, 0], 10, FilterSpec(project="/p/a", scene_ids=["sc1"]))) == ["a"]


def test_sparse_search_uses_qdrant_idf():
    m = _mirror()
    hits = m.search_sparse([3], [1.0], 10, None)
    n, df = 4, 1
    assert hits == [("b", math.log((n - df + 0.5) / (df + 0.5) + 1) * 2.0)]
    assert _ids(m.search_sparse([2, 1], [1.0, 1.0], 10, FilterSpec()))[0] == "g"


def test_delete_and_reupsert_update_postings():
    m = _mirror()
    m.delete("b")
    assert m.search_sparse([3], [1.0], 10, None) == []
    assert "b" not in _ids(m.search_dense([1, 0, 0], 10, None))
    m.upsert("b", [0, 0, 1], [3], [1.0], {"scope": "global"})
    assert _ids(m.search_dense([0, 0, 1], 1, None)) == ["b"]
    m.upsert("g", [1, 0, 0], [9], [1.0], {"scope": "global"})
    assert m.search_sparse([2], [1.0], 10, None) == []


def test_mirror_grows_past_its_initial_capacity():
    m = Mirror(dim=2)
    for i in range(200):
        m.upsert(f"r{i}", [1, i / 200], [i], [1.0], {"scope": "global"})
    assert m.live_count() == 200
    assert _ids(m.search_sparse([150], [1.0], 5, None)) == ["r150"]


def test_a_reloaded_mirror_answers_like_the_live_one(alice):
    recs = [write_record(alice, text) for text in ("Kafka keeps events for 7 days.", "Redis is the cache.", "用户喜欢喝茶。")]
    tombstone(recs[1])
    vec = embedding.embed_one("how long are events retained", kind=embedding.QUERY)
    live = index.search_dense(alice, vec, limit=5)
    live_sparse = index.search_sparse(alice, "Kafka events", limit=5)
    index.close_clients()  # a restart: the mirror is rebuilt from the store
    assert [(c.record_id, round(c.score, 5)) for c in index.search_dense(alice, vec, limit=5)] == \
        [(c.record_id, round(c.score, 5)) for c in live]
    assert [c.record_id for c in index.search_sparse(alice, "Kafka events", limit=5)] == [c.record_id for c in live_sparse]
    assert recs[1].record_id not in {c.record_id for c in live}


def test_mirror_scores_match_the_store_scores(alice):
    if index.engine() != "local":
        pytest.skip("the mirror serves the local-mode engine only")
    write_record(alice, "Kafka keeps events for 7 days.")
    write_record(alice, "Redis is the cache.")
    vec = embedding.embed_one("kafka retention", kind=embedding.QUERY)
    name = index.current_collection(alice)
    store = index.get_client().query_points(name, query=[float(x) for x in vec], using="dense", limit=2, with_payload=True)
    mirrored = index.search_dense(alice, vec, limit=2)
    assert [p.payload["record_id"] for p in store.points] == [c.record_id for c in mirrored]
    assert np.allclose([p.score for p in store.points], [c.score for c in mirrored], atol=1e-5)
