"""embed_and_search (SPEC §3.16): worker-only dedup candidates with reusable vectors."""

from __future__ import annotations

import pytest

from apps.search import embedding, index
from apps.search.models import IndexOp
from apps.search.outbox import drain_outbox
from tests.search.conftest import tombstone, write_record


def test_agents_may_not_call_it(agent_api):
    status, _ = agent_api.call("embed_and_search", queryText="x")
    assert status == 403


def test_each_query_gets_its_vector_and_cosine_candidates(alice, worker_api):
    pool = write_record(alice, "数据库连接池的最大连接数设置为 50。")
    write_record(alice, "用户周末喜欢去郊外爬山。")
    body = worker_api.ok("embed_and_search", queries=["数据库连接池的大小", "weekend hiking"], topK=1)
    first, second = body["results"]
    assert (first["index"], first["queryText"]) == (0, "数据库连接池的大小")
    assert second["index"] == 1
    assert len(first["queryVector"]) == 384
    assert first["candidates"][0]["record_id"] == pool.record_id
    assert set(first["candidates"][0]) == {"record_id", "content", "contentTruncated", "type", "priority", "score"}
    assert 0 < first["candidates"][0]["score"] <= 1
    assert "fallback" not in first


def test_single_query_text_is_supported(alice, worker_api):
    write_record(alice, "Use pnpm in the frontend.")
    body = worker_api.ok("embed_and_search", queryText="frontend package manager")
    assert len(body["results"]) == 1 and body["results"][0]["index"] == 0


def test_content_preview_is_cut_at_200_chars(alice, worker_api):
    write_record(alice, "Long deployment notes: " + "x" * 400)
    cand = worker_api.ok("embed_and_search", queryText="deployment notes")["results"][0]["candidates"][0]
    assert len(cand["content"]) == 200
    assert cand["contentTruncated"] is True


def test_tombstoned_and_ghost_records_are_never_candidates(alice, worker_api):
    gone = write_record(alice, "The VPN password is hunter2.")
    tombstone(gone)
    ghost = write_record(alice, "The VPN password was hunter1.")
    from apps.records.models import L1Record

    L1Record.objects.filter(pk=ghost.pk).update(deleted=True)  # crash before the delete op
    body = worker_api.ok("embed_and_search", queryText="VPN password")
    assert body["results"][0]["candidates"] == []


def test_several_queries_keep_their_own_candidates_and_drop_the_dead_ones(alice, worker_api):
    from apps.records.models import L1Record

    vpn = write_record(alice, "The office VPN uses WireGuard on port 51820.")
    ghost = write_record(alice, "The office VPN used OpenVPN on port 1194.")
    L1Record.objects.filter(pk=ghost.pk).update(deleted=True)  # crash before the delete op
    cat = write_record(alice, "我家的猫叫 Mochi，三岁了。")
    body = worker_api.ok("embed_and_search", queries=["VPN port", "猫的名字", "VPN port"], topK=3)
    ids = [[c["record_id"] for c in r["candidates"]] for r in body["results"]]
    assert ids[0][0] == vpn.record_id and ids[1][0] == cat.record_id
    assert ids[2] == ids[0]  # the same query, the same answer, in its own slot
    assert all(ghost.record_id not in found for found in ids)


def test_query_vector_is_accepted_back_at_commit_for_identical_content(alice, worker_api):
    content = "Deploys happen from the release branch."
    body = worker_api.ok("embed_and_search", queryText=content)
    vector = body["results"][0]["queryVector"]
    assert index.client_vector_usable(vector, content) is not None
    assert index.client_vector_usable(vector, content + "!") is None


def test_queries_that_cannot_be_served_fall_back(alice, worker_api, settings):
    write_record(alice, "Grafana dashboards are provisioned from JSON files.")
    settings.QDRANT_URL = "http://127.0.0.1:9"
    index.close_clients()
    body = worker_api.ok("embed_and_search", queries=["grafana", "json"])
    assert all(r["fallback"] is True and r["candidates"] == [] for r in body["results"])
    assert len(body["results"][0]["queryVector"]) == 384  # the vector is still usable


def test_queries_fall_back_without_vectors_when_the_model_is_missing(alice, worker_api, settings, tmp_path):
    settings.EMBED_MODEL_DIR = tmp_path / "none"
    body = worker_api.ok("embed_and_search", queryText="anything")
    assert body["results"][0]["fallback"] is True
    assert body["results"][0]["queryVector"] is None


def test_an_empty_profile_answers_with_no_candidates(alice, worker_api):
    body = worker_api.ok("embed_and_search", queryText="anything")
    assert body["results"][0]["candidates"] == []
    assert "fallback" not in body["results"][0]


@pytest.mark.parametrize(
    ("params", "field", "fragment"),
    [
        ({"queries": ["a"] * 51}, "queries", "at most 50"),
        ({"queries": []}, "queries", "at least one"),
        ({"queries": ["ok", "  "]}, "queries.1", "whitespace"),
        ({"queryText": ""}, "queryText", "empty"),
        ({"queries": ["a"], "queryText": "b"}, "queries", "conflicts"),
        ({}, "queries", "required"),
        ({"queryText": "a", "topK": 0}, "topK", "between 1 and 20"),
        ({"queries": ["a", 3]}, "queries.1", "string"),
    ],
)
def test_bad_input_is_invalid_params(worker_api, params, field, fragment):
    status, body = worker_api.call("embed_and_search", **params)
    assert status == 400
    assert body["error"]["code"] == "invalid_params"
    assert any(d["field"] == field and fragment in d["message"] for d in body["error"]["details"]), body


def test_fifty_queries_are_accepted(alice, worker_api):
    body = worker_api.ok("embed_and_search", queries=[f"query number {i}" for i in range(50)], topK=1)
    assert [r["index"] for r in body["results"]] == list(range(50))


def test_pending_commits_are_indexed_before_searching(alice, worker_api):
    rec = write_record(alice, "Freshly committed record about Kafka retention.", drain=False)
    assert IndexOp.objects.count() == 1
    cand = worker_api.ok("embed_and_search", queryText="kafka retention")["results"][0]["candidates"]
    assert cand[0]["record_id"] == rec.record_id
    drain_outbox()
    assert embedding.cached("kafka retention", kind=embedding.PASSAGE) is not None


def test_candidates_never_come_from_another_profile(alice, bob, make_api):
    write_record(bob, "Bob's deploy key lives in ~/.ssh/deploy_bob.")
    body = make_api(alice, "worker").ok("embed_and_search", queryText="deploy key location")
    assert body["results"][0]["candidates"] == []


def test_wrong_dimension_client_embedding_is_invalid_params_naming_the_field():
    from apps.tools.errors import InvalidParams

    embedding.check_client_embedding(None, field="records.0.embedding")
    embedding.check_client_embedding([0.0] * 384, field="records.0.embedding")
    with pytest.raises(InvalidParams) as err:
        embedding.check_client_embedding([0.1] * 12, field="records.2.embedding")
    assert err.value.details == [{"field": "records.2.embedding", "message": "has 12 dimensions; the embedding model gives 384"}]
    with pytest.raises(InvalidParams):
        embedding.check_client_embedding([float("nan")] * 384, field="records.0.embedding")


def test_outbox_never_keeps_a_wrong_dimension_vector(alice):
    from apps.search.outbox import enqueue_index_op

    enqueue_index_op(profile=alice, record_id="l1_x", op="upsert", vector=[0.5] * 7)
    assert IndexOp.objects.get(record_id="l1_x").vector is None
