"""Records committed through l1_commit are recalled; an l1_fix tombstone hides them."""

from __future__ import annotations

from apps.search.models import IndexOp


def test_main_agent_commit_is_recalled_and_its_tombstone_hides_it(alice, agent_api, worker_api):
    body = agent_api.ok("l1_commit", source="main-agent", records=[
        {"content": "The user wants commit messages written in English.", "type": "work_fact"},
    ], session="s1")
    rid = body["stored"][0]
    found = agent_api.ok("recall_l1_records", query="commit message language", session="s1", turn="1")
    assert found["records"][0]["recordId"] == rid
    agent_api.ok("l1_fix", recordId=rid, action="tombstone", evidence="The user said this preference was recorded by mistake.")
    found = agent_api.ok("recall_l1_records", query="commit message language", session="s1", turn="2")
    assert rid not in [r["recordId"] for r in found["records"]]
    assert IndexOp.objects.filter(profile=alice).count() == 0


def test_commit_reuses_an_embed_and_search_vector_for_identical_content(alice, agent_api, worker_api):
    content = "Releases are tagged with calendar versions like 2026.11."
    vector = worker_api.ok("embed_and_search", queryText=content)["results"][0]["queryVector"]
    body = agent_api.ok("l1_commit", source="main-agent", records=[
        {"content": content, "type": "work_fact", "embedding": vector},
    ], session="s1")
    op = IndexOp.objects.get(record_id=body["stored"][0])
    assert op.vector is not None  # carried to the outbox, validated at drain
    found = agent_api.ok("recall_l1_records", query="release version tags", session="s1", turn="1")
    assert found["records"][0]["recordId"] == body["stored"][0]


COMMIT_TEXTS = [
    "The staging cluster runs on four nodes.",
    "部署到生产环境前必须先跑完集成测试。",
    "The billing service reads its config from /etc/billing/main.toml.",
    "用户希望提交说明使用英文书写。",
    "Backups of the search index are kept for fourteen days.",
    "The CI runner caches pip downloads between jobs.",
    "前端构建使用 Node 22。",
    "Release branches are cut every second Tuesday.",
    "The auth gateway needs token QX-5521 to deploy.",
    "监控系统每五分钟检查一次磁盘使用率。",
]


def test_a_commit_of_ten_is_one_drain_that_embeds_the_ten_in_one_call(alice, agent_api, monkeypatch,
                                                                       django_capture_on_commit_callbacks):
    from apps.search import embedding, index

    drains: list[int | None] = []
    embeds: list[tuple[str, int]] = []
    real_drain, real_embed = index.drain_outbox, embedding.embed

    def drain(profile_id=None, **kwargs):
        drains.append(profile_id)
        return real_drain(profile_id, **kwargs)

    def embed(texts, *, kind, raw=False):
        embeds.append((kind, len(texts)))
        return real_embed(texts, kind=kind, raw=raw)

    monkeypatch.setattr(index, "drain_outbox", drain)
    monkeypatch.setattr(embedding, "embed", embed)
    embedding.cache_clear()
    with django_capture_on_commit_callbacks(execute=True):
        body = agent_api.ok("l1_commit", source="main-agent", session="s1",
                            records=[{"content": t, "type": "work_fact"} for t in COMMIT_TEXTS])
    assert len(body["stored"]) == 10 and None not in body["stored"]
    assert drains == [alice.pk]
    assert embeds == [("passage", 10)]
    assert IndexOp.objects.filter(profile=alice).count() == 0
    assert index.count_points(alice) == 10


def test_a_records_vector_is_the_same_whether_committed_in_a_batch_or_alone(alice, bob, agent_api, make_api,
                                                                           django_capture_on_commit_callbacks):
    import numpy as np

    from apps.search import embedding, index

    embedding.cache_clear()
    with django_capture_on_commit_callbacks(execute=True):
        batch = agent_api.ok("l1_commit", source="main-agent", session="s1",
                             records=[{"content": t, "type": "work_fact"} for t in COMMIT_TEXTS])["stored"]
    embedding.cache_clear()
    bobs = make_api(bob, "agent")
    alone = []
    for text in COMMIT_TEXTS:  # each drained (embedded) on its own
        alone += bobs.ok("l1_commit", source="main-agent", session="s1", records=[{"content": text, "type": "work_fact"}])["stored"]
        assert index.drain_outbox(bob.pk)["applied"] == 1
        embedding.cache_clear()

    def stored_vectors(profile, ids):
        return np.vstack([np.asarray(index.stored_point(profile, r)[0], dtype=np.float32) for r in ids])

    assert np.allclose(stored_vectors(alice, batch), stored_vectors(bob, alone), atol=1e-6)
