"""Untrusted input at the one door: lone surrogates and NUL, call-context lengths, bodies
that are not objects, methods that are not allowed, and bugs — each answered in the error
shape, naming the field, with nothing changed. Runs on SQLite and (in the PostgreSQL
pass) on PostgreSQL, where NUL and over-long values used to be 500s."""

from __future__ import annotations

import json

import pytest

from apps.conversations import services as l0
from apps.hitstats.models import RecallBudget, RecallEvent
from apps.tools import registry
from apps.tools.dispatch import call_tool
from apps.tools.errors import InvalidParams
from apps.tools.registry import ToolContext, ToolParams, ToolSpec


def _fields(body) -> list[str]:
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    return [d["field"] for d in body["error"]["details"]]


def _recall_state(profile):
    return RecallEvent.objects.filter(profile=profile).count(), list(RecallBudget.objects.filter(profile=profile).values_list("calls", flat=True))


@pytest.mark.parametrize("params, field", [
    ({"query": "\udc00 x"}, "query"),
    ({"query": "deploy \x00 steps"}, "query"),
    ({"query": "deploy", "sceneId": "sc\x000001"}, "sceneId"),
    ({"query": "deploy", "types": ["work_fact\ud800"]}, "types.0"),
])
def test_recall_refuses_unencodable_text_naming_the_field_and_counts_nothing(agent_api, alice, params, field):
    before = _recall_state(alice)
    status, body = agent_api.call("recall_l1_records", session="s", turn="t1", **params)
    assert status == 400 and body["error"]["code"] == "invalid_params" and field in _fields(body)
    assert _recall_state(alice) == before


def test_clear_invalid_ids_with_nul_are_invalid_params(agent_api):
    status, body = agent_api.call("clear_invalid_l1_records", recordIds=["l1_1_abcd", "l1_\x00"])
    assert status == 400 and _fields(body) == ["recordIds.1"]


def test_recall_context_query_with_nul_is_invalid_params(agent_api, alice):
    before = _recall_state(alice)
    status, body = agent_api.post("/api/v1/recall/context", {"query": "what \x00 next", "sessionKey": "s"})
    assert status == 400 and _fields(body) == ["query"]
    assert _recall_state(alice) == before


def test_l1_commit_content_with_a_lone_surrogate_is_invalid_params(agent_api):
    status, body = agent_api.call("l1_commit", source="main-agent", records=[{"content": "the build uses \ud800 make", "type": "work_fact"}])
    assert status == 400 and _fields(body) == ["records.0.content"]


def test_skill_file_path_with_a_lone_surrogate_is_invalid_params_and_writes_nothing(agent_api, alice):
    status, body = agent_api.call("skill_manage", action="write_file", name="deploy", file_path="references/\ud800.md", file_content="x")
    assert status == 400 and _fields(body) == ["file_path"]


def test_l0_session_key_with_a_lone_surrogate_is_refused_and_no_shard_is_created(agent_api, alice):
    status, body = agent_api.post("/api/v1/l0/messages", {"messages": [{"role": "user", "content": "hi", "sessionKey": "k\udfff"}]})
    assert status == 400 and _fields(body) == ["messages.0.sessionKey"]
    assert l0.l0_shard_files(alice) == []


def test_l0_content_keeps_the_row_with_replacement_characters(agent_api, alice):
    status, body = agent_api.post("/api/v1/l0/messages", {"messages": [
        {"role": "user", "content": "a \ud800 b \x00 c", "sessionKey": "s", "model": "m\udc00"},
    ]})
    assert status == 200 and body["appended"] == 1
    stored = json.loads((l0.l0_dir(alice) / l0.today_shard_name()).read_text(encoding="utf-8"))
    assert stored["content"] == "a \ufffd b \ufffd c" and stored["model"] == "m\ufffd"


def test_session_keys_and_turns_the_api_accepts_fit_the_recall_log(agent_api, alice):
    session, turn = "会" * 512, "t" * 256  # the longest the context takes (L0 takes 512 too)
    status, body = agent_api.call("recall_l1_records", query="deploy steps", session=session, turn=turn)
    assert status == 200, body
    assert RecallBudget.objects.get(profile=alice).session_key == session
    # The recall log holds them too (varchar(300) answered 500 on PostgreSQL).
    from apps.hitstats.services import hits_record

    event = hits_record(profile=alice, query="deploy steps", results=[("l1_1_abcd", 0.5)], session_key=session, turn=turn)
    event.refresh_from_db()
    assert event.session_key == session and event.turn == turn


@pytest.mark.parametrize("header, value, field", [
    ("session", "s" * 513, "_context.sessionKey"),
    ("turn", "t" * 257, "_context.turn"),
])
def test_call_context_beyond_its_bound_is_invalid_params(agent_api, alice, header, value, field):
    before = _recall_state(alice)
    status, body = agent_api.call("recall_l1_records", query="deploy", **{header: value})
    assert status == 400 and _fields(body) == [field]
    assert _recall_state(alice) == before


def test_context_in_the_body_obeys_the_same_rules(agent_api):
    status, body = agent_api.call("whoami", _context={"sessionKey": "s\x00"})
    assert status == 400 and _fields(body) == ["_context.sessionKey"]


def test_in_process_callers_get_the_same_protection(alice):
    ctx = ToolContext(profile=alice, role="agent", actor="test")
    with pytest.raises(InvalidParams) as caught:
        call_tool("recall_l1_records", {"query": "\udc00"}, ctx)
    assert [d["field"] for d in caught.value.details] == ["query"]


def test_an_integral_float_is_an_integer_as_json_schema_says(agent_api):
    status, body = agent_api.call("recall_l1_records", query="deploy steps", topK=3.0)
    assert status == 200, body


def test_a_null_body_is_not_an_empty_one(agent_api):
    status, body = agent_api.post("/api/v1/tools/whoami", "null")
    assert status == 400 and _fields(body) == ["(body)"]


def test_a_wrong_method_is_405_with_allow_and_its_own_code(agent_api):
    response = agent_api.client.get("/api/v1/tools/whoami", **agent_api.headers())
    assert response.status_code == 405 and response["Allow"] == "POST"
    assert response.json()["error"]["code"] == "method_not_allowed"
    response = agent_api.client.delete("/api/v1/openapi.json")
    assert response.status_code == 405 and response["Allow"] == "GET"


def test_a_bug_answers_in_the_error_shape_not_an_html_page(agent_api, monkeypatch):
    class Params(ToolParams):
        pass

    def broken(ctx, params):
        raise RuntimeError("boom")

    monkeypatch.setitem(registry._REGISTRY, "test_broken", ToolSpec("test_broken", "always fails", Params, "agent", broken))
    response = agent_api.client.post("/api/v1/tools/test_broken", data="{}", content_type="application/json", **agent_api.headers())
    assert response.status_code == 500 and response["Content-Type"].startswith("application/json")
    assert response.json()["error"]["code"] == "internal" and "boom" not in response.json()["error"]["message"]


def test_read_l1_increment_cursor_is_bounded(worker_api):
    for cursor in (10**30, str(10**30), {"lastRecordId": 10**30}, json.dumps({"lastRecordId": 10**30})):
        status, body = worker_api.call("read_l1_increment", cursor=cursor)
        assert status == 400 and _fields(body)[0].startswith("cursor"), (cursor, body)


def test_l0_cursor_offsets_are_bounded(worker_api, alice):
    l0.l0_append(profile=alice, rows=[{"id": "m1", "role": "user", "content": "hi", "sessionKey": "s", "timestamp": None, "sessionId": None, "cwd": ""}])
    cursor = json.dumps({"version": 2, "files": {"2026-01-01.jsonl": 10**30}})
    status, body = worker_api.call("read_l0_increment", l0Files=l0.today_shard_name(), cursor=cursor)
    assert status == 400 and _fields(body) == ["cursor"]


def test_body_less_tools_do_not_publish_a_required_body_and_others_do(db):
    from django.test import Client

    paths = Client().get("/api/v1/openapi.json").json()["paths"]
    assert paths["/api/v1/tools/whoami"]["post"]["requestBody"]["required"] is False
    assert paths["/api/v1/tools/recall_l1_records"]["post"]["requestBody"]["required"] is True
    assert paths["/api/v1/l0/messages"]["post"]["requestBody"]["required"] is True
