"""The L0 and feed tools and endpoints are published in the catalog and OpenAPI."""

from __future__ import annotations


def test_tools_are_in_the_catalog_for_workers_only(agent_api):
    status, catalog = agent_api.get("/api/v1/tools")
    assert status == 200
    by_name = {t["name"]: t for t in catalog}
    assert by_name["read_l0_increment"]["roles"] == ["worker", "admin"]
    assert by_name["read_skill_feed_increment"]["roles"] == ["worker", "admin"]
    assert by_name["read_l0_increment"]["parameters"]["required"] == ["l0Files"]


def test_append_endpoints_are_in_openapi(agent_api):
    status, doc = agent_api.get("/api/v1/openapi.json")
    assert status == 200
    assert "post" in doc["paths"]["/api/v1/l0/messages"]
    assert "post" in doc["paths"]["/api/v1/skill-feed/events"]


def test_append_endpoints_refuse_get_with_allow_and_method_not_allowed(agent_api):
    response = agent_api.client.get("/api/v1/l0/messages", **agent_api.headers())
    assert response.status_code == 405 and response["Allow"] == "POST"
    assert response.json()["error"]["code"] == "method_not_allowed"
