"""l1_commit in main-agent mode and load_memory_rules (SPEC §3.1, §3.2)."""

from __future__ import annotations

import re

import pytest
from django.utils import timezone

from apps.conversations.cursors import cursor_get
from apps.records.models import RulesLoad
from apps.scenes.models import SceneEntry
from tests.records.conftest import CURSOR, fail, msg, record

FACT = {"content": "the user prefers tabs over spaces in Go", "type": "work_fact"}


def test_main_agent_record_takes_id_time_and_session_from_the_call_context(agent_api, alice):
    before = timezone.now()
    body = agent_api.ok("l1_commit", source="main-agent", records=[{**FACT, "id": "l1_1_abcd", "sessionKey": "forged", "timestamps": ["1999-01-01T00:00:00Z"]}], session="sess-1", cwd="/home/me/work")
    rid = body["stored"][0]
    assert rid != "l1_1_abcd" and re.fullmatch(r"l1_\d{13}_[a-z0-9]{4}", rid)
    stored = record(alice, rid)
    assert stored.session_key == "sess-1" and stored.cwd == "/home/me/work" and stored.source == "main-agent"
    assert len(stored.timestamps) == 1 and stored.timestamps[0] >= before.isoformat()[:19]
    assert body["cursorCommitted"] is False and body["provenanceMissing"] == 0


def test_main_agent_session_id_comes_from_its_header(agent_api, alice):
    response = agent_api.client.post(
        "/api/v1/tools/l1_commit", data={"source": "main-agent", "records": [FACT]}, content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {agent_api.token}", HTTP_X_MEMORY_SESSION="s", HTTP_X_MEMORY_SESSION_ID="sid-9",
    )
    assert response.status_code == 200, response.json()
    assert alice.l1_records.get().session_id == "sid-9"


def test_main_agent_commit_leaves_the_cursor_and_l2_alone(agent_api, alice, monkeypatch, django_capture_on_commit_callbacks):
    calls = []
    from apps.pipeline import triggers

    monkeypatch.setattr(triggers, "l1_committed", lambda **kw: calls.append(kw))
    with django_capture_on_commit_callbacks(execute=True):
        body = agent_api.ok("l1_commit", source="main-agent", records=[FACT], cursor=CURSOR)
    assert cursor_get(profile=alice, kind="l1") == {} and calls == []
    assert [w["code"] for w in body["warnings"]] == ["cursorIgnored", "rulesNotLoaded"]


def test_main_agent_without_scene_goes_to_main_agent_live(agent_api, alice):
    body = agent_api.ok("l1_commit", source="main-agent", records=[FACT])
    stored = record(alice, body["stored"][0])
    assert stored.scene.scene_id == "main-agent-live" and "sceneFallback" not in stored.metadata
    assert stored.scene.use_count == 1


def test_main_agent_scene_id_is_honoured_and_scene_name_only_matches(agent_api, alice):
    SceneEntry.objects.create(profile=alice, scene_id="sc0001", name="go｜style", aliases=["golang｜style"])
    body = agent_api.ok("l1_commit", source="main-agent", records=[
        {**FACT, "scene_id": "sc0001"},
        {"content": "gofmt runs on every save", "type": "work_method", "scene_name": "golang｜style"},
        {"content": "go modules live in ~/go/pkg", "type": "work_fact", "scene_name": "go｜modules"},
        {"content": "go vet runs in the CI job", "type": "work_fact", "new_scene_name": "go｜ci"},
    ])
    scenes = [record(alice, rid).scene.scene_id for rid in body["stored"]]
    assert scenes == ["sc0001", "sc0001", "main-agent-live", "main-agent-live"]
    assert not SceneEntry.objects.filter(profile=alice, name__in=["go｜modules", "go｜ci"]).exists()
    assert [w["index"] for w in body["sceneWarns"]] == [2, 3]


def test_main_agent_unknown_scene_id_is_invalid(agent_api, alice):
    fail(agent_api, "l1_commit", 400, "invalid_params", source="main-agent", records=[{**FACT, "scene_id": "sc0404"}])
    assert not alice.l1_records.exists()


def test_main_agent_value_check_applies_but_needs_no_provenance(agent_api, alice):
    body = agent_api.ok("l1_commit", source="main-agent", records=[FACT, {"content": "ok", "type": "fact"}, {**FACT}])
    assert body["stored"][0] and body["stored"][1:] == [None, None]
    assert [d["reason"] for d in body["valueCheck"]["dropped"]] == ["tooShort", "duplicate"]


# --- load_memory_rules ----------------------------------------------------------------


def test_rules_describe_the_code_contract(agent_api):
    body = agent_api.ok("load_memory_rules", session="s")
    assert body["mode"] == "once" and body["expiresAfterCommit"] is True
    for word in ("work_fact", "work_task", "work_method", "work_artifact", "priority", "scope", "projectEvidence", "l1_commit", "main-agent", "replaces"):
        assert word in body["rules"], word
    assert "persona" not in body["rules"]


def test_rules_describe_the_chat_contract(make_profile, make_api):
    body = make_api(make_profile("carol", "chat"), "agent").ok("load_memory_rules", mode="always", session="s")
    assert body == {"rules": body["rules"], "mode": "always", "expiresAfterCommit": False}
    for word in ("persona", "episodic", "instruction", "-1", "activity_start_time", "l1_commit"):
        assert word in body["rules"], word
    assert "work_fact" not in body["rules"]


def test_once_is_reported_then_cleared_by_the_sessions_next_commit(agent_api, alice):
    agent_api.ok("load_memory_rules", session="s1")
    agent_api.ok("load_memory_rules", session="s2")
    first = agent_api.ok("l1_commit", source="main-agent", records=[FACT], session="s1")
    assert first["rulesLoaded"] is True and first["warnings"] == []
    second = agent_api.ok("l1_commit", source="main-agent", records=[{"content": "a second fact worth keeping", "type": "work_fact"}], session="s1")
    assert second["rulesLoaded"] is False and [w["code"] for w in second["warnings"]] == ["rulesNotLoaded"]
    assert RulesLoad.objects.filter(profile=alice, session_key="s2").exists()


def test_always_stays_for_the_session_and_is_not_downgraded_by_once(agent_api):
    agent_api.ok("load_memory_rules", mode="always", session="s1")
    assert agent_api.ok("load_memory_rules", mode="once", session="s1")["mode"] == "always"
    for n in range(2):
        body = agent_api.ok("l1_commit", source="main-agent", records=[{"content": f"fact number {n} worth keeping", "type": "work_fact"}], session="s1")
        assert body["rulesLoaded"] is True


def test_a_failed_commit_does_not_clear_once(agent_api, alice):
    agent_api.ok("load_memory_rules", session="s1")
    fail(agent_api, "l1_commit", 400, "invalid_params", source="main-agent", records=[{"content": "x", "type": "nope"}], session="s1")
    assert RulesLoad.objects.filter(profile=alice, session_key="s1", mode="once").exists()


def test_rules_mode_is_validated(agent_api):
    fail(agent_api, "load_memory_rules", 400, "invalid_params", mode="forever")


@pytest.mark.parametrize("role", ["worker"])
def test_subagent_commit_reports_rules_loaded_without_warning(make_api, alice, l0, role):
    api = make_api(alice, role)
    l0(alice, msg(1, "a message for the subagent commit"))
    body = api.ok("l1_commit", records=[{"content": "subagent fact from the message", "type": "work_fact", "source_message_ids": ["m1"]}], cursor=CURSOR)
    assert body["rulesLoaded"] is False and body["warnings"] == []


def test_l1_tools_are_in_the_catalog_with_their_roles(agent_api):
    status, catalog = agent_api.get("/api/v1/tools")
    assert status == 200
    tools = {t["name"]: t for t in catalog}
    assert tools["l1_commit"]["roles"] == ["agent", "worker", "admin"]
    assert tools["l1_project_get"]["roles"] == ["worker", "admin"]
    for name in ("load_memory_rules", "list_l1_scenes", "l1_fix", "l1_task_state"):
        assert "agent" in tools[name]["roles"]
    assert "records" in tools["l1_commit"]["parameters"]["properties"]
    status, doc = agent_api.get("/api/v1/openapi.json")
    assert status == 200 and "/api/v1/tools/l1_commit" in doc["paths"]
