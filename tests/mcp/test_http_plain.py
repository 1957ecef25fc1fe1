"""`/mcp` answered to a bare client: one JSON-RPC POST, no initialize, no session id."""

from __future__ import annotations

import json

import pytest

from apps.mcp.protocol import tools_for_role
from apps.tools.registry import all_tools, get_tool
from tests.mcp.conftest import forget, post_mcp, remember, rpc


def _json(response):
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    return json.loads(response.content)


def test_bare_tools_list_is_plain_json_with_exactly_the_roles_tools(agent_api, worker_api, admin_api):
    for api in (agent_api, worker_api, admin_api):
        response = post_mcp(api.client, api.token, rpc("tools/list"))
        assert response.status_code == 200
        body = _json(response)
        assert body["jsonrpc"] == "2.0" and body["id"] == 1
        names = [t["name"] for t in body["result"]["tools"]]
        assert names == [spec.name for spec in all_tools() if api.role in spec.roles]
        assert "Mcp-Session-Id" not in response
    agent_names = {t["name"] for t in _json(post_mcp(agent_api.client, agent_api.token, rpc("tools/list")))["result"]["tools"]}
    assert {"memory_ingest", "memory_search", "recall_l1_records", "l1_commit"} <= agent_names
    assert not agent_names & {"read_l0_increment", "embed_and_search", "l2_commit", "l3_edit"}  # worker tools


def test_tool_definitions_are_the_catalogs(agent_api):
    catalog = {t["name"]: t for t in agent_api.get("/api/v1/tools")[1]}
    listed = _json(post_mcp(agent_api.client, agent_api.token, rpc("tools/list")))["result"]["tools"]
    for tool in listed:
        assert tool["description"] == catalog[tool["name"]]["description"]
        assert tool["inputSchema"] == catalog[tool["name"]]["parameters"]


def test_bare_tools_call_answers_plain_json(agent_api):
    response = post_mcp(agent_api.client, agent_api.token, rpc("tools/call", {"name": "whoami", "arguments": {}}, id="a-7"),
                        **{"X-Memory-Session": "s-1", "X-Memory-Turn": "t-1"})
    body = _json(response)
    assert body["id"] == "a-7"
    result = body["result"]
    assert result["isError"] is False
    assert result["structuredContent"] == {"profile": "alice", "mode": "code", "role": "agent", "sessionKey": "s-1", "turn": "t-1", "cwd": ""}
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]


def test_tool_errors_are_results_carrying_the_spec_error_object(agent_api):
    def call(name, arguments):
        body = _json(post_mcp(agent_api.client, agent_api.token, rpc("tools/call", {"name": name, "arguments": arguments})))
        result = body["result"]
        assert result["isError"] is True
        error = json.loads(result["content"][0]["text"])
        assert error == result["structuredContent"]
        return error["error"]

    assert call("list_l1_scenes", {"limit": "many"})["code"] == "invalid_params"
    assert call("read_l0_increment", {"l0Files": "x.jsonl", "cursor": ""})["code"] == "forbidden"  # a worker tool
    assert call("no_such_tool", {})["code"] == "not_found"
    err = call("l1_fix", {"recordId": "l1_0_none", "action": "tombstone", "evidence": "the user said this is wrong twice"})
    assert err["code"] == "not_found" and set(err) == {"code", "message", "details"}


def test_protocol_errors_are_json_rpc_errors(agent_api):
    response = post_mcp(agent_api.client, agent_api.token, b"{not json")
    assert response.status_code == 400 and _json(response)["error"]["code"] == -32700
    body = _json(post_mcp(agent_api.client, agent_api.token, rpc("resources/list")))
    assert body["error"]["code"] == -32601
    body = _json(post_mcp(agent_api.client, agent_api.token, rpc("tools/call", {"arguments": {}})))
    assert body["error"]["code"] == -32602
    assert post_mcp(agent_api.client, agent_api.token, {"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202


def test_no_token_or_a_bad_one_is_unauthorized(agent_api):
    response = agent_api.client.post("/mcp", data=json.dumps(rpc("tools/list")), content_type="application/json")
    assert response.status_code == 401 and _json(response)["error"]["code"] == "unauthorized"
    assert "Bearer" in response["WWW-Authenticate"]
    assert post_mcp(agent_api.client, "mw_wrong", rpc("tools/list")).status_code == 401


def test_a_foreign_browser_origin_is_refused(agent_api):
    response = post_mcp(agent_api.client, agent_api.token, rpc("tools/list"), Origin="http://evil.example")
    assert response.status_code == 403
    assert post_mcp(agent_api.client, agent_api.token, rpc("tools/list"), Origin="http://127.0.0.1:8000").status_code == 200
    assert post_mcp(agent_api.client, agent_api.token, rpc("tools/list"), Origin="http://[::1]:8000").status_code == 200
    assert post_mcp(agent_api.client, agent_api.token, rpc("tools/list"), Origin="null").status_code == 403


def test_a_session_belongs_to_the_token_that_opened_it(agent_api, make_api, bob):
    init = rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
    response = post_mcp(agent_api.client, agent_api.token, init)
    assert response.status_code == 200
    session = response["Mcp-Session-Id"]
    assert _json(response)["result"]["protocolVersion"] == "2025-11-25"
    bob_api = make_api(bob, "agent")
    # bob's token with alice's session id: the session does not exist for him
    assert post_mcp(bob_api.client, bob_api.token, rpc("tools/list"), **{"Mcp-Session-Id": session}).status_code == 404
    assert post_mcp(agent_api.client, agent_api.token, rpc("tools/list"), **{"Mcp-Session-Id": session}).status_code == 200
    ended = agent_api.client.delete("/mcp", HTTP_AUTHORIZATION=f"Bearer {agent_api.token}", HTTP_MCP_SESSION_ID=session)
    assert ended.status_code == 200
    assert post_mcp(agent_api.client, agent_api.token, rpc("tools/list"), **{"Mcp-Session-Id": session}).status_code == 404


def test_session_clients_accepting_sse_get_an_event_stream(agent_api):
    init = rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
    session = post_mcp(agent_api.client, agent_api.token, init)["Mcp-Session-Id"]
    response = post_mcp(agent_api.client, agent_api.token, rpc("tools/list", id=2),
                        **{"Mcp-Session-Id": session, "Accept": "application/json, text/event-stream"})
    assert response["Content-Type"].startswith("text/event-stream")
    event = response.content.decode()
    assert event.startswith("event: message\ndata: ") and event.endswith("\n\n")
    assert json.loads(event.split("data: ", 1)[1])["id"] == 2
    get = agent_api.client.get("/mcp", HTTP_AUTHORIZATION=f"Bearer {agent_api.token}", HTTP_MCP_SESSION_ID=session)
    assert get.status_code == 405


def test_an_unknown_protocol_version_header_is_refused(agent_api):
    response = post_mcp(agent_api.client, agent_api.token, rpc("tools/list"), **{"MCP-Protocol-Version": "1999-01-01"})
    assert response.status_code == 400


@pytest.mark.django_db(transaction=True)
def test_alice_never_sees_bobs_memories_over_mcp(make_profile, make_api):
    alice, bob = make_profile("alice"), make_profile("bob")
    alice_api, bob_api = make_api(alice, "agent"), make_api(bob, "agent")
    remember(bob_api, "Bob's door code for the office is 4471.")
    kept = remember(bob_api, "Bob keeps the spare office key under the blue flower pot.")
    forget(bob_api, kept)
    for name, arguments in (("memory_search", {"query": "office door code"}),
                            ("recall_l1_records", {"query": "office door code"})):
        body = _json(post_mcp(alice_api.client, alice_api.token, rpc("tools/call", {"name": name, "arguments": arguments})))
        text = json.dumps(body, ensure_ascii=False)
        assert "4471" not in text and "flower pot" not in text
    search = _json(post_mcp(alice_api.client, alice_api.token,
                            rpc("tools/call", {"name": "memory_search", "arguments": {"query": "where is the spare office key"}})))
    assert search["result"]["content"][0]["text"] == "No information about this is stored in memory."
    # bob himself finds his own
    own = _json(post_mcp(bob_api.client, bob_api.token, rpc("tools/call", {"name": "memory_search", "arguments": {"query": "office door code"}})))
    assert "4471" in own["result"]["content"][0]["text"]


def test_memory_search_text_is_the_mcp_content(agent_api):
    assert get_tool("memory_search").text_result == "text"
    assert [s.name for s in tools_for_role("agent")] == [s.name for s in all_tools() if "agent" in s.roles]


def test_ended_and_idle_sessions_are_dropped_when_the_token_opens_a_new_one(agent_api):
    from datetime import timedelta

    from django.utils import timezone

    from apps.mcp.models import McpSession

    init = rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
    first = post_mcp(agent_api.client, agent_api.token, init)["Mcp-Session-Id"]
    second = post_mcp(agent_api.client, agent_api.token, init)["Mcp-Session-Id"]
    McpSession.objects.filter(session_id=first).update(last_seen_at=timezone.now() - timedelta(days=2))
    assert post_mcp(agent_api.client, agent_api.token, rpc("tools/list"), **{"Mcp-Session-Id": first}).status_code == 404
    post_mcp(agent_api.client, agent_api.token, init)
    assert not McpSession.objects.filter(session_id=first).exists()
    assert McpSession.objects.filter(session_id=second).exists()
