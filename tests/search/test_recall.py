"""recall_l1_records (SPEC §3.14, §4): hybrid ranking, scope, tombstones, tags, limits."""

from __future__ import annotations

import pytest

from apps.hitstats.models import RecallEvent, RecallHit, RecordHits
from apps.records.models import L1Record
from apps.search import index
from apps.search.models import IndexOp
from tests.search.conftest import tombstone, write_record
from tests.search.corpus import CORPUS


@pytest.fixture
def corpus(alice):
    # These tests are about ranking; the relevance threshold has its own tests
    # (test_crosslingual.py) and would drop the weak dense-only paraphrase matches.
    alice.settings = {"recall.minRelevance": 0.0}
    alice.save()
    return {key: write_record(alice, content).record_id for key, content in CORPUS.items()}


def _recall(api, **params):
    return api.ok("recall_l1_records", **params)


def _trace_of(body, record_id):
    return next(t for t in body["trace"] if t["recordId"] == record_id)


# ------------------------------------------------------------------ ranking
@pytest.mark.parametrize(("query", "key"), [("1.29", "k8s"), ("does the user want long verbose replies", "answers")])
def test_exact_word_queries_are_won_by_the_sparse_side(agent_api, corpus, query, key):
    body = _recall(agent_api, query=query, trace=True)
    trace = _trace_of(body, corpus[key])
    assert body["records"][0]["recordId"] == corpus[key]
    assert trace["sparseRank"] == 1


@pytest.mark.parametrize(
    ("query", "key"),
    [("上线之前要做什么准备", "migrate"), ("how many machines are in the test environment", "k8s")],
)
def test_paraphrases_without_shared_words_are_won_by_the_dense_side(agent_api, corpus, query, key):
    body = _recall(agent_api, query=query, trace=True)
    trace = _trace_of(body, corpus[key])
    assert body["records"][0]["recordId"] == corpus[key]
    assert trace["denseRank"] == 1
    assert trace["sparseRank"] is None


def test_hybrid_finds_both_kinds_where_each_side_alone_misses_one(agent_api, corpus):
    cases = [("1.29", "k8s"), ("上线之前要做什么准备", "migrate"), ("QX-5521", "qx5521"), ("周末有什么户外活动", "hiking")]
    dense_misses = sparse_misses = 0
    for query, key in cases:
        body = _recall(agent_api, query=query, trace=True, session="s", turn=f"t-{query}")
        assert body["records"][0]["recordId"] == corpus[key], query
        best_dense = min((t for t in body["trace"] if t["denseRank"]), key=lambda t: t["denseRank"])
        sparse_hits = [t for t in body["trace"] if t["sparseRank"]]
        best_sparse = min(sparse_hits, key=lambda t: t["sparseRank"]) if sparse_hits else None
        dense_misses += best_dense["recordId"] != corpus[key]
        sparse_misses += best_sparse is None or best_sparse["recordId"] != corpus[key]
        if query in ("1.29", "QX-5521"):  # the exact tokens: the sparse side puts them first
            assert best_sparse is not None and best_sparse["recordId"] == corpus[key]
    # the debiased dense side finds these identifiers too; the paraphrase has no shared word
    assert sparse_misses >= 1


def test_trace_shows_rrf_fusion_and_bounded_boosts(agent_api, corpus):
    body = _recall(agent_api, query="error code", trace=True, topK=3)
    assert len(body["trace"]) == len(body["records"]) == 3
    for rec, tr in zip(body["records"], body["trace"]):
        expected = sum(1 / (60 + r) for r in (tr["denseRank"], tr["sparseRank"]) if r)
        assert tr["fused"] == pytest.approx(expected, abs=1e-6)
        assert 0 <= tr["boosts"]["effectiveHits"] <= 0.15
        assert -0.1 <= tr["boosts"]["priority"] <= 0.1
        assert rec["score"] == pytest.approx(tr["fused"] * (1 + sum(tr["boosts"].values())), abs=1e-5)


def test_trace_is_absent_unless_asked(agent_api, corpus):
    assert "trace" not in _recall(agent_api, query="backup")


def test_effective_hits_and_priority_lift_a_record_within_their_bounds(alice, agent_api):
    plain = write_record(alice, "Deploy with the blue-green script on Fridays.", priority=50)
    loved = write_record(alice, "Deploy with the blue-green script on Mondays.", priority=90)
    RecordHits.objects.create(profile=alice, record_id=loved.record_id, hits=40, invalid_hits=2)
    body = _recall(agent_api, query="blue-green deploy script", trace=True)
    loved_trace = _trace_of(body, loved.record_id)
    plain_trace = _trace_of(body, plain.record_id)
    assert loved_trace["boosts"]["effectiveHits"] == pytest.approx(0.15)  # capped
    assert loved_trace["boosts"]["priority"] == pytest.approx(0.08)
    assert plain_trace["boosts"] == {"effectiveHits": 0.0, "priority": 0.0}


def test_topk_limits_the_number_of_records(agent_api, corpus):
    assert len(_recall(agent_api, query="error code", topK=2)["records"]) == 2


def test_result_fields_match_the_spec(agent_api, alice):
    write_record(alice, "The release checklist lives in docs/release.md.", priority=70)
    rec = _recall(agent_api, query="release checklist")["records"][0]
    assert set(rec) == {"recordId", "score", "relevance", "content", "type", "priority", "scene_name", "createdAt"}
    assert 0.0 <= rec["relevance"] <= 1.0
    assert rec["priority"] == 70
    assert rec["createdAt"].endswith("Z")


# --------------------------------------------------------------- filters
def test_types_filter_returns_only_those_types(alice, agent_api):
    write_record(alice, "Rotate the staging database password.", type="work_task")
    write_record(alice, "The staging database password lives in the vault.", type="work_fact")
    body = _recall(agent_api, query="staging database password", types=["work_task"])
    assert [r["type"] for r in body["records"]] == ["work_task"]


def test_scene_filter_returns_only_that_scene(alice, agent_api):
    from apps.scenes.models import SceneEntry

    scene = SceneEntry.objects.create(profile=alice, scene_id="sc0001", name="memoryweb｜deploy")
    inside = write_record(alice, "Deploys run from the main branch only.", scene=scene)
    write_record(alice, "Deploys need a green CI run first.")
    body = _recall(agent_api, query="deploys", sceneId="sc0001")
    assert [r["recordId"] for r in body["records"]] == [inside.record_id]
    assert body["records"][0]["scene_name"] == "memoryweb｜deploy"


def test_tasks_carry_state_tags_and_closed_ones_are_returned_by_default(alice, agent_api):
    open_ = write_record(alice, "Write the migration guide for v2.", type="work_task")
    done = write_record(alice, "Write the upgrade notes for v2.", type="work_task", task_state="done")
    dropped = write_record(alice, "Write the v2 blog post.", type="work_task", task_state="dropped")
    body = _recall(agent_api, query="write v2 guide notes post", topK=5)
    tags = {r["recordId"]: (r["taskState"], r["tag"]) for r in body["records"]}
    assert tags[open_.record_id] == ("open", "[待办]")
    assert tags[done.record_id] == ("done", "[已完成]")
    assert tags[dropped.record_id] == ("dropped", "[已废弃]")


def test_hide_closed_tasks_setting_and_parameter(alice, agent_api):
    open_ = write_record(alice, "Write the migration guide for v2.", type="work_task")
    write_record(alice, "Write the upgrade notes for v2.", type="work_task", task_state="done")
    alice.settings = {"recall.hideClosedTasks": True}
    alice.save()
    body = _recall(agent_api, query="write v2 guide notes", session="s", turn="1")
    assert [r["recordId"] for r in body["records"]] == [open_.record_id]
    body = _recall(agent_api, query="write v2 guide notes", includeClosedTasks=True, session="s", turn="2")
    assert len(body["records"]) == 2
    alice.settings = {}
    alice.save()
    body = _recall(agent_api, query="write v2 guide notes", includeClosedTasks=False, session="s", turn="3")
    assert [r["recordId"] for r in body["records"]] == [open_.record_id]


def test_long_content_is_cut_at_max_chars_per_memory(alice, agent_api):
    write_record(alice, "Kubernetes upgrade notes: " + "step " * 200)
    rec = _recall(agent_api, query="kubernetes upgrade notes")["records"][0]
    assert len(rec["content"]) == 500
    assert rec["content"].endswith("…")
    assert rec["contentTruncated"] is True


# ------------------------------------------------------------------ scope
@pytest.fixture
def scoped(alice):
    alice.known_projects = ["/home/dev/alpha", "/home/dev/beta"]
    alice.save()
    return {
        "global": write_record(alice, "Always run the formatter before committing code.", scope="global").record_id,
        "unknown": write_record(alice, "The formatter config is shared by every repository.", scope="unknown").record_id,
        "alpha": write_record(alice, "In alpha the formatter runs with line length 100.", scope="self", project="/home/dev/alpha").record_id,
        "beta": write_record(alice, "In beta the formatter runs with line length 79.", scope="self", project="/home/dev/beta").record_id,
    }


def test_scope_returns_global_unknown_and_own_project_records(agent_api, scoped):
    body = _recall(agent_api, query="formatter", topK=10, cwd="/home/dev/alpha/src")
    ids = {r["recordId"] for r in body["records"]}
    assert ids == {scoped["global"], scoped["unknown"], scoped["alpha"]}


def test_scope_never_returns_other_projects_self_records(agent_api, scoped):
    body = _recall(agent_api, query="In beta the formatter runs with line length 79", topK=10, cwd="/home/dev/alpha")
    assert scoped["beta"] not in {r["recordId"] for r in body["records"]}


def test_scope_without_a_known_project_returns_no_self_records(agent_api, scoped):
    body = _recall(agent_api, query="formatter", topK=10, cwd="/tmp/elsewhere")
    assert {r["recordId"] for r in body["records"]} == {scoped["global"], scoped["unknown"]}


def test_scope_uses_the_sessions_project_candidate(alice, agent_api, scoped, monkeypatch):
    from apps.records import project

    monkeypatch.setattr(project, "session_project", lambda **kw: {"project": "/home/dev/beta", "flag": True})
    body = _recall(agent_api, query="formatter line length", topK=10, session="sess-beta")
    assert scoped["beta"] in {r["recordId"] for r in body["records"]}
    assert scoped["alpha"] not in {r["recordId"] for r in body["records"]}


def test_scope_ignores_a_session_candidate_without_flag(alice, agent_api, scoped, monkeypatch):
    from apps.records import project

    monkeypatch.setattr(project, "session_project", lambda **kw: {"project": "/home/dev/beta", "flag": False})
    body = _recall(agent_api, query="formatter line length", topK=10, session="sess-weak")
    assert scoped["beta"] not in {r["recordId"] for r in body["records"]}


# ------------------------------------------------------------- tombstones
def test_tombstoned_records_are_never_returned(alice, agent_api):
    gone = write_record(alice, "The VPN password is hunter2.")
    kept = write_record(alice, "The VPN needs two-factor login.")
    tombstone(gone)
    body = _recall(agent_api, query="VPN password", topK=5)
    assert [r["recordId"] for r in body["records"]] == [kept.record_id]
    assert index.count_points(alice) == 1


def test_crash_between_db_commit_and_index_write_leaves_no_ghost(alice, agent_api, settings):
    gone = write_record(alice, "The VPN password is hunter2.")
    # The tombstone commits, the process dies before the index write: the op stays queued
    # and the point is still in the index.
    L1Record.objects.filter(pk=gone.pk).update(deleted=True)
    IndexOp.objects.create(profile=alice, record_id=gone.record_id, op="delete", attempts=3, last_error="killed")
    assert index.count_points(alice) == 1
    body = _recall(agent_api, query="VPN password")
    assert body["records"] == []


def test_crash_before_the_outbox_drain_still_finds_the_new_record_after_the_drain(alice, agent_api):
    rec = write_record(alice, "The office wifi is called mw-guest.", drain=False)
    assert IndexOp.objects.filter(profile=alice).count() == 1
    body = _recall(agent_api, query="office wifi name")
    assert [r["recordId"] for r in body["records"]] == [rec.record_id]
    assert IndexOp.objects.filter(profile=alice).count() == 0


# ---------------------------------------------------------- rate limit, hits
def test_fourth_recall_in_a_turn_is_rate_limited_and_changes_nothing(alice, agent_api, corpus):
    for _ in range(3):
        _recall(agent_api, query="backup", session="s1", turn="t1")
    events = RecallEvent.objects.count()
    hits = list(RecordHits.objects.order_by("pk").values_list("hits", flat=True))
    status, body = agent_api.call("recall_l1_records", query="backup", session="s1", turn="t1")
    assert status == 429
    assert body["error"]["code"] == "rate_limited"
    assert RecallEvent.objects.count() == events
    assert list(RecordHits.objects.order_by("pk").values_list("hits", flat=True)) == hits
    # another turn, or another session, has its own budget
    _recall(agent_api, query="backup", session="s1", turn="t2")
    _recall(agent_api, query="backup", session="s2", turn="t1")


def test_recall_budget_follows_the_profile_setting(alice, agent_api, corpus):
    alice.settings = {"recall.callsPerTurn": 1}
    alice.save()
    _recall(agent_api, query="backup", session="s1", turn="t1")
    status, _ = agent_api.call("recall_l1_records", query="backup", session="s1", turn="t1")
    assert status == 429


def test_each_returned_record_gets_a_hit_and_the_recall_is_logged(alice, agent_api, corpus):
    body = _recall(agent_api, query="error code", topK=3, session="s9", turn="t9")
    ids = [r["recordId"] for r in body["records"]]
    assert {h.record_id: h.hits for h in RecordHits.objects.filter(profile=alice)} == dict.fromkeys(ids, 1)
    event = RecallEvent.objects.get(profile=alice)
    assert event.query == "error code" and event.session_key == "s9" and event.turn == "t9"
    assert [r["recordId"] for r in event.results] == ids
    assert list(RecallHit.objects.filter(event=event).order_by("pk").values_list("record_id", flat=True)) == ids
    _recall(agent_api, query="error code", topK=3, session="s9", turn="t10")
    assert RecordHits.objects.get(profile=alice, record_id=ids[0]).hits == 2


# ------------------------------------------------------------- isolation
def test_alice_never_sees_bobs_records(alice, bob, make_api):
    write_record(bob, "The bank PIN hint is the cat's birthday.")
    mine = write_record(alice, "The bank PIN hint is the street of the first flat.")
    body = make_api(alice, "agent").ok("recall_l1_records", query="bank PIN hint", topK=10)
    assert [r["recordId"] for r in body["records"]] == [mine.record_id]
    assert index.alias_name(alice) != index.alias_name(bob)


# -------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("params", "field", "fragment"),
    [
        ({"query": ""}, "query", "empty"),
        ({"query": "   \n"}, "query", "whitespace"),
        ({"query": "x", "topK": 0}, "topK", "between 1 and 20"),
        ({"query": "x", "topK": 21}, "topK", "between 1 and 20"),
        ({"query": "x", "types": ["work_fact", "wish"]}, "types.1", "unknown type"),
        ({"query": "x", "types": []}, "types", "empty"),
        ({"query": "x", "topK": "5"}, "topK", "integer"),
        ({"query": "x", "bogus": 1}, "bogus", "Extra"),
        ({}, "query", "required"),
    ],
)
def test_bad_input_is_invalid_params_naming_the_field(alice, agent_api, params, field, fragment):
    status, body = agent_api.call("recall_l1_records", session="s", turn="t", **params)
    assert status == 400
    assert body["error"]["code"] == "invalid_params"
    assert any(d["field"] == field and fragment.lower() in d["message"].lower() for d in body["error"]["details"]), body
    assert RecallEvent.objects.count() == 0


def test_bad_input_does_not_use_up_the_turn_budget(alice, agent_api, corpus):
    for _ in range(3):
        agent_api.call("recall_l1_records", query=" ", session="s", turn="t")
    _recall(agent_api, query="backup", session="s", turn="t")


def test_scene_filter_includes_scenes_merged_into_it(alice, agent_api):
    from apps.scenes.models import SceneEntry

    alice.settings = {"recall.minRelevance": 0.0}  # each record matches one word of the query; the filter is under test
    alice.save()
    survivor = SceneEntry.objects.create(profile=alice, scene_id="sc0001", name="memoryweb｜deploy")
    merged = SceneEntry.objects.create(profile=alice, scene_id="sc0002", name="memoryweb｜release", merged_into=survivor)
    a = write_record(alice, "Deploys run from the main branch only.", scene=survivor)
    b = write_record(alice, "Releases are cut on Thursdays.", scene=merged)
    write_record(alice, "Deploys and releases need a green CI run.")
    for asked in ("sc0001", "sc0002"):
        body = _recall(agent_api, query="deploys releases", sceneId=asked, session="s", turn=asked)
        assert {r["recordId"] for r in body["records"]} == {a.record_id, b.record_id}


def test_unknown_scene_is_not_found(alice, agent_api):
    status, body = agent_api.call("recall_l1_records", query="x", sceneId="sc9999", session="s", turn="t")
    assert status == 404 and body["error"]["code"] == "not_found"
