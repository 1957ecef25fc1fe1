"""Cross-language recall, relevance and abstention, boost dominance, embedding spaces
(SPEC §3.14, §3.19, §4 [2026-12])."""

from __future__ import annotations

import json
import shutil
import time

import numpy as np
import pytest

from apps.accounts.services import token_create
from apps.hitstats.models import RecallBudget, RecallEvent, RecordHits
from apps.search import embedding, index, model_build, services, sparse
from apps.search.outbox import drain_outbox
from tests.search.conftest import write_record

UNRELATED = "What is the boiling point of mercury in kelvin?"

ZH_NOISE = [
    "用户每天早上六点半起床，晚上十一点前睡觉。",
    "用户周末喜欢骑公路车，一般骑六十公里。",
    "部署前必须先运行数据库迁移脚本。",
    "团队每周三下午三点开例会，地点在三楼会议室。",
    "用户的父母住在成都，每年春节回去一次。",
    "用户喜欢吃辣，最爱的菜是水煮鱼。",
    "测试环境每周日凌晨会重置数据。",
    "用户的车是一辆白色的二手大众。",
    "用户在存钱准备明年买房。",
    "前端的接口请求统一走封装好的客户端。",
    "用户不喜欢接陌生电话，重要的事情希望先发消息。",
    "用户每周二和周四晚上去健身房。",
]
EN_NOISE = [
    "The user wakes up at half past six and goes to bed before eleven.",
    "The user rides a road bike for about sixty kilometres on Saturdays.",
    "Run the database migrations before every deploy.",
    "The team meets every Wednesday at three in the room on the third floor.",
    "The user's parents live in Chengdu and the family visits at Spring Festival.",
    "The user loves spicy food; the favourite dish is boiled fish in chili oil.",
    "Staging data is reset every Sunday night.",
    "The user drives a white second-hand Volkswagen.",
    "The user is saving up to buy a flat next year.",
    "Frontend requests go through the shared API client.",
    "The user dislikes calls from unknown numbers and wants a message first.",
    "The user goes to the gym on Tuesday and Thursday evenings.",
]


def _manual(texts, kind):
    """The debiased vectors computed here from the raw model output and the manifest's
    centroids, independently of `embedding.debias`."""
    raw = embedding.embed(texts, kind=kind, raw=True)
    vectors = model_build.read_manifest(embedding.local_model_dir())["centroids"]["vectors"]
    out = []
    for text, vec in zip(texts, raw):
        share = embedding.cjk_share(text)
        mean = share * np.asarray(vectors["zh"][kind]) + (1 - share) * np.asarray(vectors["en"][kind])
        v = vec - mean
        out.append(v / np.linalg.norm(v))
    return np.asarray(out)


def _stored_vector(profile, record_id):
    return index.stored_point(profile, record_id)


# ------------------------------------------------------------- the transform
def test_cjk_share_measures_the_chinese_part_of_a_text():
    assert embedding.cjk_share("The user prefers tea.") == 0.0
    assert embedding.cjk_share("用户喜欢喝茶。") == 1.0
    assert 0.3 < embedding.cjk_share("这个项目用 PostgreSQL 做存储") < 0.9
    assert embedding.cjk_share("1234 !!") == 0.0


def test_stored_vectors_are_debiased_and_record_their_space(alice):
    rec = write_record(alice, "用户对花生和腰果过敏。")
    vec, payload = _stored_vector(alice, rec.record_id)
    assert np.allclose(vec, _manual([rec.content], embedding.PASSAGE)[0], atol=5e-4)  # the edge engine stores float16
    assert not np.allclose(vec, embedding.embed([rec.content], kind=embedding.PASSAGE, raw=True)[0], atol=1e-2)
    assert payload["space"] == embedding.space_id()
    assert index.store().space(index.current_collection(alice)) == embedding.space_id()


def test_query_vectors_are_debiased(alice):
    rec = write_record(alice, "The user is allergic to peanuts and cashews.")
    query = "用户对什么过敏"
    cands = services.index_candidates(alice, query, limit=5, filters=services.Filters())
    item = next(c for c in cands.dense if c.record_id == rec.record_id)
    expected = float(_manual([query], embedding.QUERY)[0] @ _manual([rec.content], embedding.PASSAGE)[0])
    assert item.score == pytest.approx(expected, abs=1e-3)


def test_embed_and_search_and_client_embeddings_use_the_debiased_space(alice, worker_api, agent_api):
    content = "Releases are tagged with calendar versions like 2026.11."
    vector = worker_api.ok("embed_and_search", queryText=content)["results"][0]["queryVector"]
    assert np.allclose(vector, _manual([content], embedding.PASSAGE)[0], atol=1e-4)
    stored = agent_api.ok("l1_commit", source="main-agent", records=[{"content": content, "type": "work_fact", "embedding": vector}],
                          session="s1")["stored"][0]
    drain_outbox(alice.pk)
    vec, _ = _stored_vector(alice, stored)
    assert np.allclose(vec, np.asarray(vector), atol=1e-4)


def test_reindex_writes_debiased_vectors(alice):
    rec = write_record(alice, "部署前必须先运行数据库迁移脚本。")
    index.reindex_profile(alice)
    vec, payload = _stored_vector(alice, rec.record_id)
    assert np.allclose(vec, _manual([rec.content], embedding.PASSAGE)[0], atol=5e-4)  # the edge engine stores float16
    assert payload["space"] == embedding.space_id()


def test_a_mixed_text_subtracts_both_centroids_by_its_share():
    text = "这个项目用 PostgreSQL 做存储"
    weighted = embedding.embed([text], kind=embedding.PASSAGE)[0]
    assert np.allclose(weighted, _manual([text], embedding.PASSAGE)[0], atol=1e-4)


# -------------------------------------------------------- cross-language recall
@pytest.mark.parametrize(
    ("noise", "target", "query"),
    [
        (ZH_NOISE, "The user is allergic to peanuts and cashews.", "用户对什么东西过敏？"),
        (EN_NOISE, "用户对花生和腰果过敏，吃东西前要确认没有坚果。", "what is the user allergic to?"),
    ],
    ids=["zh-question-en-record", "en-question-zh-record"],
)
def test_a_question_finds_the_record_in_the_other_language_among_same_language_ones(alice, agent_api, noise, target, query):
    for text in noise:
        write_record(alice, text)
    rec = write_record(alice, target)
    body = agent_api.ok("recall_l1_records", query=query)
    assert body["records"][0]["recordId"] == rec.record_id
    assert "noRelevantMemory" not in body


def test_the_sparse_side_expands_terms_across_languages():
    tokens = sparse.tokenize("用户对花生过敏")
    assert "peanut" in sparse.expansions(tokens)
    doc = sparse.document_vector("用户对花生过敏")
    weights = dict(zip(doc.indices, doc.values))
    assert 0 < weights[sparse.token_index("peanut")] < weights[sparse.token_index("花生")]
    query = sparse.query_vector("peanut allergy")
    qweights = dict(zip(query.indices, query.values))
    assert qweights[sparse.token_index("peanut")] == 1.0
    assert qweights[sparse.token_index("花生")] == pytest.approx(sparse.EXPANSION_WEIGHT)


def test_an_english_word_finds_a_headword_that_has_it_as_its_fourth_sense_but_not_the_reverse():
    # 错误: "mistaken", "false", "wrong", "error": an English "error" must meet the Chinese word,
    # while 错误 is still glossed by its first three senses only (more add noise that way).
    assert "错误" in sparse.expansions(sparse.tokenize("error tracking"))
    glossed = sparse.expansions(sparse.tokenize("错误"))
    assert "wrong" in glossed and sparse.english_tokens("error")[0] not in glossed


def sparse_rank(alice, agent_api, *, target: str, other: str, query: str) -> int | None:
    """The sparse rank of `target` for a one-word question, beside one other record (no
    relevance threshold: the sparse side is under test, not the abstention)."""
    alice.settings = {"recall.minRelevance": 0.0}
    alice.save()
    record = write_record(alice, target)
    write_record(alice, other)
    body = agent_api.ok("recall_l1_records", query=query, trace=True)
    return next(t for t in body["trace"] if t["recordId"] == record.record_id)["sparseRank"]


def test_an_english_keyword_reaches_a_chinese_record_on_the_sparse_side(alice, agent_api):
    assert sparse_rank(alice, agent_api, target="用户对花生过敏。", other="用户喜欢吃辣。", query="peanut") == 1


# ------------------------------------------------------- relevance, abstention
def test_a_never_stored_question_comes_back_empty_without_hits(alice, agent_api):
    for text in EN_NOISE:
        write_record(alice, text)
    body = agent_api.ok("recall_l1_records", query=UNRELATED, session="s", turn="t")
    assert body == {"records": [], "noRelevantMemory": True}
    assert RecordHits.objects.count() == 0
    assert RecallEvent.objects.count() == 0
    assert RecallBudget.objects.get(session_key="s", turn="t").calls == 1  # an answered recall


def test_relevance_is_in_range_monotone_and_above_the_threshold(alice, agent_api):
    for text in EN_NOISE:
        write_record(alice, text)
    body = agent_api.ok("recall_l1_records", query="when does the user go to the gym", topK=10)
    rel = [r["relevance"] for r in body["records"]]
    assert rel and all(0.0 <= x <= 1.0 for x in rel)
    assert rel == sorted(rel, reverse=True)
    assert min(rel) >= services.min_relevance(alice)


def test_the_threshold_follows_the_profile_setting(alice, agent_api):
    for text in EN_NOISE:
        write_record(alice, text)
    threshold = services.min_relevance(alice)
    assert agent_api.ok("recall_l1_records", query=UNRELATED)["noRelevantMemory"] is True
    alice.settings = {"recall.minRelevance": 0.0}
    alice.save()
    # At 0.0 the ranked candidates come back, each below the default threshold. (How many the dense side ranks for an
    # unrelated question depends on the model's numbers on the machine: a record must clear the reference floor to
    # stand out from nothing, so the test asks for some, not for a full page.)
    lowered = agent_api.ok("recall_l1_records", query=UNRELATED)["records"]
    assert lowered and all(r["relevance"] < threshold for r in lowered)
    alice.settings = {"recall.minRelevance": 1.0}
    alice.save()
    assert agent_api.ok("recall_l1_records", query="when does the user go to the gym")["noRelevantMemory"] is True


def test_the_injection_block_omits_records_below_the_threshold(alice, agent_api):
    for text in EN_NOISE:
        write_record(alice, text)
    _, body = agent_api.post("/api/v1/recall/context", {"query": UNRELATED, "sessionKey": "s"})
    assert body["recordIds"] == [] and "- [" not in body["block"]
    assert RecallEvent.objects.count() == 0
    _, body = agent_api.post("/api/v1/recall/context", {"query": "when does the user go to the gym", "sessionKey": "s"})
    assert "- [work_fact|-] The user goes to the gym on Tuesday and Thursday evenings." in body["block"]
    assert len(body["recordIds"]) < 5  # the unrelated rest stays out


# ------------------------------------------------------------ boost dominance
def _ranked(rid, d, s, score):
    return services.Ranked(rid, dense_rank=d, sparse_rank=s, score=score)


def test_the_measured_features_say_whether_a_record_is_in_the_other_language(monkeypatch):
    """`bench/recall_quality.py --features` reads them: the `cross` candidate is the
    record's language against the query's, coverage counts the query's words it holds."""
    monkeypatch.setattr(services, "RELEVANCE_FEATURES", ("cross", "coverage"))
    cands = services.Candidates([], words=services.ranking.query_words("which port does the replica use"),
                                language=services.ranking.text_language("which port does the replica use"))
    item = services.Ranked("r1")
    assert services.relevance_features(item, cands, "副本监听 6432 端口。", 1)[0] == 1.0
    same = services.relevance_features(item, cands, "The replica listens on port 6432.", 1)
    assert same[0] == 0.0 and same[1] > 0.0


def test_a_boost_never_lifts_a_record_above_one_both_rankings_place_higher():
    a, b = _ranked("a", 1, 1, 1.0), _ranked("b", 2, 2, 1.2)
    assert [r.record_id for r in services._final_order([a, b])] == ["a", "b"]
    assert b.held_below == ["a"]


def test_a_boost_reorders_where_the_rankings_disagree():
    a, b = _ranked("a", 1, 3, 1.0), _ranked("b", 3, 1, 1.1)
    assert [r.record_id for r in services._final_order([a, b])] == ["b", "a"]
    c, d = _ranked("c", 1, None, 1.0), _ranked("d", None, 1, 1.1)
    assert [r.record_id for r in services._final_order([c, d])] == ["d", "c"]


def test_a_side_that_missed_both_records_does_not_disagree():
    a, b = _ranked("a", 1, None, 1.0), _ranked("b", 2, None, 1.05)
    assert [r.record_id for r in services._final_order([a, b])] == ["a", "b"]


def test_a_loved_record_stays_below_the_one_both_sides_put_first(alice, agent_api):
    first = write_record(alice, "Billing database backups run every night at two.", priority=0)
    loved = write_record(alice, "Billing database backups run every night at two and are kept for a week.", priority=100)
    RecordHits.objects.create(profile=alice, record_id=loved.record_id, hits=50)
    body = agent_api.ok("recall_l1_records", query="when do the billing database backups run every night", trace=True)
    trace = {t["recordId"]: t for t in body["trace"]}
    last = float("inf")  # a side whose gate left the record out ranks it last
    assert trace[first.record_id]["denseRank"] < (trace[loved.record_id]["denseRank"] or last)
    assert trace[first.record_id]["sparseRank"] < (trace[loved.record_id]["sparseRank"] or last)
    assert trace[loved.record_id]["score"] > trace[first.record_id]["score"]  # the boosts alone would swap them
    assert [r["recordId"] for r in body["records"]][:2] == [first.record_id, loved.record_id]
    assert trace[loved.record_id]["heldBelow"] == [first.record_id]


# ---------------------------------------------------------------- the budget
def test_a_failed_recall_does_not_use_up_the_turn_budget(alice, agent_api, monkeypatch):
    write_record(alice, "The user goes to the gym on Tuesday and Thursday evenings.")
    real = services.recall_search
    calls = []

    def failing_once(*args, **kwargs):
        if not calls:
            calls.append(1)
            raise RuntimeError("index exploded")
        return real(*args, **kwargs)

    monkeypatch.setattr(services, "recall_search", failing_once)
    agent_api.client.raise_request_exception = False
    response = agent_api.client.post("/api/v1/tools/recall_l1_records", data=json.dumps({"query": "gym"}),
                                     content_type="application/json", **agent_api.headers("s", "t"))
    assert response.status_code == 500
    assert RecallBudget.objects.get(session_key="s", turn="t").calls == 0
    for _ in range(3):
        agent_api.ok("recall_l1_records", query="gym", session="s", turn="t")
    status, body = agent_api.call("recall_l1_records", query="gym", session="s", turn="t")
    assert status == 429 and body["error"]["code"] == "rate_limited"


# ------------------------------------------------------- embedding spaces
@pytest.mark.background_rebuild
@pytest.mark.django_db(transaction=True)
def test_a_space_change_rebuilds_in_the_background_while_recall_answers(alice, agent_api, monkeypatch):
    current = embedding.space_id()
    old = current.replace("/debias", "/debias0-old")
    monkeypatch.setattr(embedding, "space_id", lambda: old)
    recs = [write_record(alice, text) for text in EN_NOISE[:6]]
    first = index.current_collection(alice)
    assert index.collection_space(first) == old
    monkeypatch.setattr(embedding, "space_id", lambda: current)
    started = []
    real_reindex = index.reindex_profile

    def slow_reindex(profile, **kwargs):
        started.append(1)
        time.sleep(0.3)
        return real_reindex(profile, **kwargs)

    monkeypatch.setattr(index, "reindex_profile", slow_reindex)
    body = agent_api.ok("recall_l1_records", query="what food does the user love")
    assert "degraded" not in body and body["records"][0]["recordId"] == recs[5].record_id  # the old collection answers
    thread = index._rebuilds[alice.slug]["thread"]
    thread.join(timeout=60)
    assert started == [1]
    status = index.rebuild_status()[alice.slug]
    assert status["state"] == "done" and status["done"] == status["total"] == 6
    new = index.current_collection(alice)
    assert new != first and index.collection_space(new) == current
    assert index.count_points(alice) == 6
    body = agent_api.ok("recall_l1_records", query="what food does the user love")
    assert body["records"][0]["recordId"] == recs[5].record_id
    _, admin_token = token_create(profile=alice, role="admin")  # health details are for admins
    health = agent_api.client.get("/api/v1/health", HTTP_AUTHORIZATION=f"Bearer {admin_token}").json()["checks"]["index"]
    assert health["rebuilds"][alice.slug]["state"] == "done"


@pytest.mark.background_rebuild
def test_an_index_built_before_debiasing_is_queried_with_raw_vectors(alice, monkeypatch):
    rec = write_record(alice, "The user goes to the gym on Tuesday and Thursday evenings.")
    name = index.current_collection(alice)
    monkeypatch.setitem(index._spaces, name, "")
    started = []
    monkeypatch.setattr(index, "rebuild_in_background", lambda profile, reason: started.append(reason) or True)
    assert services.index_ready(alice) == index.SPACE_RAW
    assert started
    outcome = services.recall_search(alice, "gym evenings", top_k=5, filters=services.Filters())
    assert [row.record_id for row, _ in outcome.rows] == [rec.record_id]


# -------------------------------------------------------- model build
def _model_without_centroids(tmp_path):
    """A model folder like one built before the centroids existed (files linked to the
    real build, manifest without `centroids`); returns (base, the removed centroids)."""
    source = embedding.local_model_dir()
    base = tmp_path / "models"
    target = model_build.model_dir(base)
    target.mkdir(parents=True)
    for path in source.iterdir():
        if path.name != "manifest.json":
            (target / path.name).symlink_to(path)
    manifest = json.loads((source / "manifest.json").read_text())
    removed = manifest.pop("centroids")
    (target / "manifest.json").write_text(json.dumps(manifest))
    return base, removed


def test_a_model_folder_without_centroids_gets_them_from_build(tmp_path):
    base, _ = _model_without_centroids(tmp_path)
    target = model_build.model_dir(base)
    assert not model_build.centroids_current(model_build.read_manifest(target))
    messages = []
    built = model_build.build(base, say=messages.append)
    assert any("centroids" in m for m in messages)
    assert model_build.centroids_current(built)
    stored = model_build.read_manifest(target)
    assert stored["centroids"]["vectors"]["zh"]["query"] == built["centroids"]["vectors"]["zh"]["query"]
    assert len(stored["centroids"]["vectors"]["en"]["passage"]) == model_build.DIM
    shutil.rmtree(base)


def test_a_model_without_centroids_computes_them_on_load(settings, tmp_path):
    original = settings.EMBED_MODEL_DIR
    base, reference = _model_without_centroids(tmp_path)
    settings.EMBED_MODEL_DIR = str(base)
    try:
        loaded = embedding.get_model()
        assert np.allclose(loaded.centroids["zh"]["passage"], reference["vectors"]["zh"]["passage"], atol=1e-3)
    finally:
        settings.EMBED_MODEL_DIR = original
        embedding.get_model()


@pytest.mark.django_db(transaction=True)
def test_a_failed_rebuild_is_reported_and_not_retried_on_every_recall(alice, monkeypatch):
    calls = []

    def broken(profile, **kwargs):
        calls.append(1)
        raise index.IndexUnavailable("disk full")

    monkeypatch.setattr(index, "reindex_profile", broken)
    assert index.rebuild_in_background(alice, reason="test")
    index._rebuilds[alice.slug]["thread"].join(timeout=30)
    status = index.rebuild_status()[alice.slug]
    assert status["state"] == "failed" and "disk full" in status["error"]
    assert not index.rebuild_in_background(alice, reason="test")  # within the retry pause
    assert calls == [1]


def test_a_name_written_without_its_accents_finds_the_record_that_has_them(alice, agent_api):
    assert sparse_rank(alice, agent_api, target="The user is viewing a flat in Alcântara next Wednesday at 15:00.",
                       other="The user's flat in Lisbon is on the fourth floor without a lift.", query="Alcantara") == 1


@pytest.mark.parametrize(
    ("record", "query"),
    [
        ("用户 9 月份去医院做了胃镜，结果是轻度胃炎。", "gastroscopy"),  # the sense says "gastroscope"
        ("前端组的负责人是周航。", "frontend"),  # the sense says "front end"
    ],
    ids=["another-form-of-the-word", "a-compound-written-as-one-word"],
)
def test_an_english_word_the_dictionary_spells_otherwise_still_reaches_the_chinese_record(alice, agent_api, record, query):
    assert sparse_rank(alice, agent_api, target=record, other="用户喜欢吃辣，但不吃香菜。", query=query) == 1
