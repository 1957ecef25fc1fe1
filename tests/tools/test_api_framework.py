"""The transport rules of SPEC §2: auth, roles, error shape, body limit, context, catalog."""

from __future__ import annotations

import json

from django.test import Client

from apps.accounts.models import ApiToken
from apps.accounts.services import token_create, token_revoke
from apps.tools.registry import ToolParams, tool


class _EchoParams(ToolParams):
    text: str
    count: int = 1


@tool("test_echo_worker", params=_EchoParams, min_role="worker", description="test-only echo (worker)")
def _echo(ctx, params):
    return {"text": params.text * params.count}


def test_missing_token_is_unauthorized(db):
    response = Client().post("/api/v1/tools/whoami", data="{}", content_type="application/json")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"


def test_bad_scheme_and_unknown_token_are_unauthorized(alice):
    client = Client()
    for header in ("Token abc", "Bearer ", "Bearer mw_nope"):
        response = client.post("/api/v1/tools/whoami", data="{}", content_type="application/json", HTTP_AUTHORIZATION=header)
        assert response.status_code == 401, header
        assert set(response.json()["error"]) == {"code", "message", "details"}


def test_revoked_token_is_unauthorized(alice):
    token, plain = token_create(profile=alice, role="agent")
    token_revoke(token=token)
    response = Client().post("/api/v1/tools/whoami", data="{}", content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {plain}")
    assert response.status_code == 401


def test_token_is_stored_hashed(alice):
    token, plain = token_create(profile=alice, role="agent")
    stored = ApiToken.objects.get(pk=token.pk)
    assert plain not in (stored.token_hash, stored.prefix)
    assert len(stored.token_hash) == 64


def test_whoami_reports_profile_role_and_context_headers(agent_api):
    body = agent_api.ok("whoami", session="s1", turn="t1", cwd="/home/a")
    assert body == {"profile": "alice", "mode": "code", "role": "agent", "sessionKey": "s1", "turn": "t1", "cwd": "/home/a"}


def test_context_in_body_overrides_headers(agent_api):
    body = agent_api.ok("whoami", session="s1", _context={"sessionKey": "s2", "cwd": "/x"})
    assert body["sessionKey"] == "s2" and body["cwd"] == "/x"


def test_bad_context_field_is_invalid_params(agent_api):
    status, body = agent_api.call("whoami", _context={"nope": "x"})
    assert status == 400 and body["error"]["details"][0]["field"] == "_context.nope"


def test_agent_may_not_call_worker_tool(agent_api, worker_api):
    status, body = agent_api.call("test_echo_worker", text="a")
    assert status == 403 and body["error"]["code"] == "forbidden"
    assert worker_api.ok("test_echo_worker", text="ab", count=2) == {"text": "abab"}


def test_unknown_tool_is_not_found(agent_api):
    status, body = agent_api.call("no_such_tool")
    assert status == 404 and body["error"]["code"] == "not_found"


def test_unknown_field_and_wrong_type_are_listed(worker_api):
    status, body = worker_api.call("test_echo_worker", text=5, extra=True)
    assert status == 400
    fields = {d["field"] for d in body["error"]["details"]}
    assert fields == {"text", "extra"}
    assert "text" in body["error"]["message"]


def test_strict_types_refuse_numeric_strings(worker_api):
    status, body = worker_api.call("test_echo_worker", text="a", count="2")
    assert status == 400 and body["error"]["details"][0]["field"] == "count"


def test_malformed_json_names_the_position(worker_api):
    status, body = worker_api.post("/api/v1/tools/test_echo_worker", '{"text": ')
    assert status == 400 and body["error"]["code"] == "invalid_params"
    assert "malformed JSON" in body["error"]["message"]


def test_non_object_body_is_invalid(worker_api):
    status, body = worker_api.post("/api/v1/tools/test_echo_worker", "[1, 2]")
    assert status == 400 and "object" in body["error"]["message"]


def test_oversize_body_is_payload_too_large(worker_api, settings):
    settings.API_MAX_BODY_BYTES = 2048
    status, body = worker_api.post("/api/v1/tools/test_echo_worker", json.dumps({"text": "x" * 5000}))
    assert status == 413 and body["error"]["code"] == "payload_too_large"


def test_get_on_tool_endpoint_is_refused(worker_api):
    response = worker_api.client.get("/api/v1/tools/whoami", **worker_api.headers())
    assert response.status_code == 405


def test_catalog_lists_tools_as_function_definitions(agent_api):
    status, catalog = agent_api.get("/api/v1/tools")
    assert status == 200
    by_name = {entry["name"]: entry for entry in catalog}
    echo = by_name["test_echo_worker"]
    assert echo["roles"] == ["worker", "admin"]
    assert echo["parameters"]["type"] == "object"
    assert echo["parameters"]["required"] == ["text"]
    assert echo["parameters"]["properties"]["count"]["type"] == "integer"


def test_openapi_document_lists_every_tool(db):
    body = Client().get("/api/v1/openapi.json").json()
    assert body["openapi"].startswith("3.1")
    assert "/api/v1/tools/whoami" in body["paths"]
    assert "/api/v1/tools/test_echo_worker" in body["paths"]
    assert "409" in body["paths"]["/api/v1/tools/whoami"]["post"]["responses"]


def test_health_reports_database_to_an_admin(admin_api):
    status, body = admin_api.get("/api/v1/health")
    assert status == 200 and body["checks"]["database"]["ok"] is True
    assert body["status"] in {"ok", "degraded"}


def test_body_nested_too_deeply_is_invalid_params_not_a_server_error(worker_api):
    status, body = worker_api.post("/api/v1/tools/test_echo_worker", "[" * 100000 + "]" * 100000)
    assert status == 400 and body["error"]["code"] == "invalid_params"
    assert "nested too deeply" in body["error"]["message"]
