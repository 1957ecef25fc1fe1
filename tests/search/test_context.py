"""POST /api/v1/recall/context (SPEC §3.19): USER.md + top records, within the timeout."""

from __future__ import annotations

import time

from apps.hitstats.models import RecallEvent, RecordHits
from apps.search import services
from tests.search.conftest import write_record

URL = "/api/v1/recall/context"


def test_block_holds_persona_then_record_lines_with_tags(alice, agent_api, monkeypatch):
    from apps.persona import services as persona

    monkeypatch.setattr(persona, "persona_live_text", lambda *, profile: "用户是后端工程师\n§\n偏好简洁回答")
    task = write_record(alice, "给 memoryweb 写迁移指南。", type="work_task")
    write_record(alice, "memoryweb 使用 Django 5.2。")
    status, body = agent_api.post(URL, {"query": "memoryweb 迁移指南", "sessionKey": "s1", "cwd": "/tmp"})
    assert status == 200
    assert body["timedOut"] is False
    persona_part, lines = body["block"].split("\n\n")
    assert persona_part == "用户是后端工程师\n§\n偏好简洁回答"
    first = lines.splitlines()[0]
    assert first == "- [work_task|-] [待办] 给 memoryweb 写迁移指南。"
    assert body["recordIds"][0] == task.record_id


def test_injects_at_most_auto_inject_top_k_records_and_gives_them_hits(alice, agent_api):
    for i in range(8):
        write_record(alice, f"Service number {i} listens on port 80{i}0.")
    _, body = agent_api.post(URL, {"query": "which port does the service listen on", "sessionKey": "s1", "cwd": ""})
    lines = [line for line in body["block"].splitlines() if line.startswith("- [")]
    assert len(lines) == 5
    assert {h.record_id for h in RecordHits.objects.filter(profile=alice, hits=1)} == set(body["recordIds"])
    assert RecallEvent.objects.get(profile=alice).source == "recall_context"


def test_scene_name_appears_in_the_line(alice, agent_api):
    from apps.scenes.models import SceneEntry

    scene = SceneEntry.objects.create(profile=alice, scene_id="sc0001", name="memoryweb｜部署")
    write_record(alice, "Deploys run from main only.", scene=scene)
    _, body = agent_api.post(URL, {"query": "deploy", "sessionKey": "s", "cwd": ""})
    assert "- [work_fact|memoryweb｜部署] Deploys run from main only." in body["block"]


def test_times_out_with_an_empty_block_and_no_hits(alice, agent_api, monkeypatch):
    write_record(alice, "Slow index answers are cut off.")
    alice.settings = {"recall.timeoutMs": 50}
    alice.save()
    real = services.index_candidates

    def slow(*args, **kwargs):
        time.sleep(0.5)
        return real(*args, **kwargs)

    monkeypatch.setattr(services, "index_candidates", slow)
    started = time.monotonic()
    status, body = agent_api.post(URL, {"query": "slow index", "sessionKey": "s", "cwd": ""})
    assert time.monotonic() - started < 0.45
    assert (status, body) == (200, {"block": "", "timedOut": True})
    assert RecordHits.objects.count() == 0


def test_without_records_or_persona_the_block_is_empty(alice, agent_api):
    status, body = agent_api.post(URL, {"query": "anything", "sessionKey": "s", "cwd": ""})
    assert (status, body["block"], body["timedOut"]) == (200, "", False)


def test_empty_query_returns_only_the_persona(alice, agent_api, monkeypatch):
    from apps.persona import services as persona

    monkeypatch.setattr(persona, "persona_live_text", lambda *, profile: "偏好简洁回答")
    write_record(alice, "Something to recall.")
    _, body = agent_api.post(URL, {"query": "  ", "sessionKey": "s", "cwd": ""})
    assert body["block"] == "偏好简洁回答"
    assert RecordHits.objects.count() == 0


def test_context_does_not_use_the_recall_budget(alice, agent_api):
    write_record(alice, "Budget is for the recall tool only.")
    for _ in range(5):
        agent_api.post(URL, {"query": "budget", "sessionKey": "s", "cwd": ""}, session="s", turn="t")
    agent_api.ok("recall_l1_records", query="budget", session="s", turn="t")


def test_bad_body_is_invalid_params(agent_api):
    status, body = agent_api.post(URL, {"sessionKey": "s"})
    assert status == 400 and body["error"]["details"][0]["field"] == "query"
    status, body = agent_api.post(URL, {"query": "x", "extra": 1})
    assert status == 400
    status, body = agent_api.post(URL, ["x"])
    assert status == 400


def test_needs_a_token(client):
    response = client.post(URL, data={"query": "x"}, content_type="application/json")
    assert response.status_code == 401


def test_listed_in_openapi(client):
    doc = client.get("/api/v1/openapi.json").json()
    assert "/api/v1/recall/context" in doc["paths"]


def test_the_recall_log_names_the_token_that_asked(alice, make_api):
    # The dashboard's "last recalled by" reads who asked from the recall log.
    from django.test import Client

    from apps.accounts.services import token_create
    from tests.conftest import Api

    write_record(alice, "The team deploys the web app with Kamal to two Hetzner boxes")
    _, plain = token_create(profile=alice, role="agent", name="laptop-claude")
    api = Api(client=Client(), token=plain, profile=alice, role="agent")
    api.ok("recall_l1_records", query="how do we deploy the web app?", session="s1", turn="t1")
    status, _ = api.post("/api/v1/recall/context", {"query": "how do we deploy the web app?", "sessionKey": "s1"})
    assert status == 200
    actors = {(e.source, e.actor) for e in RecallEvent.objects.filter(profile=alice)}
    assert actors == {("recall_l1_records", "token:laptop-claude:agent"), ("recall_context", "token:laptop-claude:agent")}
