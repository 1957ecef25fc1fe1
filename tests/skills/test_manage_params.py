"""skill_manage takes one params object; each action states which fields it needs."""

from __future__ import annotations

import pytest

from tests.skills.helpers import assert_error, skill_md, snapshot


@pytest.mark.parametrize(
    ("params", "missing"),
    [
        ({"action": "create", "name": "deploy", "category": "devops"}, ["content"]),
        ({"action": "create", "content": "x"}, ["name", "category"]),
        ({"action": "edit", "name": "deploy"}, ["content"]),
        ({"action": "patch", "name": "deploy", "old_string": "a"}, ["new_string"]),
        ({"action": "delete"}, ["name"]),
        ({"action": "write_file", "name": "deploy", "file_path": "references/a.md"}, ["file_content"]),
        ({"action": "remove_file", "name": "deploy"}, ["file_path"]),
        ({"action": "pin"}, ["name"]),
        ({"action": "unpin"}, ["name"]),
    ],
)
def test_missing_required_fields_are_each_named(agent_api, params, missing):
    error = assert_error(agent_api.call("skill_manage", **params), 400, "invalid_params")
    assert [d["field"] for d in error["details"]] == missing
    assert all("is required for action" in d["message"] for d in error["details"])


@pytest.mark.parametrize(
    ("params", "extra"),
    [
        ({"action": "list", "name": "deploy"}, ["name"]),
        ({"action": "delete", "name": "deploy", "content": "x"}, ["content"]),
        ({"action": "edit", "name": "deploy", "content": "x", "category": "ops"}, ["category"]),
        ({"action": "pin", "name": "deploy", "file_path": "references/a.md", "file_content": "x"}, ["file_path", "file_content"]),
        ({"action": "write_file", "name": "d", "file_path": "references/a", "file_content": "x", "old_string": "y"}, ["old_string"]),
    ],
)
def test_fields_an_action_does_not_use_are_refused(agent_api, params, extra):
    error = assert_error(agent_api.call("skill_manage", **params), 400, "invalid_params")
    assert [d["field"] for d in error["details"]] == extra
    assert all("is not used by action" in d["message"] for d in error["details"])


def test_unknown_action_unknown_field_and_wrong_type_are_invalid(agent_api):
    error = assert_error(agent_api.call("skill_manage", action="rename", name="x"), 400, "invalid_params")
    assert error["details"][0]["field"] == "action"
    error = assert_error(agent_api.call("skill_manage", action="list", colour="red"), 400, "invalid_params")
    assert error["details"][0]["field"] == "colour"
    error = assert_error(agent_api.call("skill_manage", action="delete", name=5), 400, "invalid_params")
    assert error["details"][0]["field"] == "name"
    error = assert_error(agent_api.call("skill_view"), 400, "invalid_params")
    assert error["details"][0]["field"] == "name"


def test_invalid_calls_leave_the_disk_untouched(agent_api, create_skill):
    create_skill(agent_api)
    before = snapshot(agent_api.profile)
    agent_api.call("skill_manage", action="edit", name="deploy", content=skill_md("deploy"), category="x")
    agent_api.call("skill_manage", action="patch", name="deploy", old_string="run it")
    assert snapshot(agent_api.profile) == before


def test_catalog_lists_both_tools_for_agents_with_the_action_enum(agent_api):
    status, catalog = agent_api.get("/api/v1/tools")
    assert status == 200
    tools = {entry["name"]: entry for entry in catalog}
    manage = tools["skill_manage"]
    assert manage["roles"] == ["agent", "worker", "admin"]
    assert tools["skill_view"]["roles"] == ["agent", "worker", "admin"]
    assert manage["parameters"]["properties"]["action"]["enum"] == [
        "list", "create", "edit", "patch", "delete", "write_file", "remove_file", "pin", "unpin",
    ]
    assert manage["parameters"]["required"] == ["action"]
    assert tools["skill_view"]["parameters"]["required"] == ["name"]
