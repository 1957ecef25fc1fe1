"""create / edit / patch (SPEC §3.17): names, conflicts, exact-once patches, limits."""

from __future__ import annotations

import pytest

from apps.skills import storage
from tests.skills.helpers import assert_error, skill_dir, skill_md, snapshot


def test_create_writes_skill_md_under_profile_category_and_name(agent_api):
    content = skill_md("deploy")
    body = agent_api.ok("skill_manage", action="create", name="deploy", category="devops", content=content)
    assert body == {"success": True, "action": "create", "name": "deploy", "category": "devops", "path": "skills/devops/deploy/SKILL.md"}
    assert (skill_dir(agent_api.profile, "devops", "deploy") / "SKILL.md").read_text() == content
    view = agent_api.ok("skill_view", name="deploy")
    assert view == {"name": "deploy", "category": "devops", "content": content, "files": [], "pinned": False, "bundled": False}


def test_create_leaves_no_temporary_files(agent_api, create_skill):
    create_skill(agent_api)
    names = [p.name for p in skill_dir(agent_api.profile, "devops", "deploy").iterdir()]
    assert names == ["SKILL.md"]


@pytest.mark.parametrize("name", ["Deploy", "-deploy", "de_ploy", "dé", "a" * 65, "deploy skill", ".hidden"])
def test_names_outside_the_pattern_are_invalid_params(agent_api, name):
    before = snapshot(agent_api.profile)
    error = assert_error(
        agent_api.call("skill_manage", action="create", name=name, category="devops", content=skill_md(name)), 400, "invalid_params"
    )
    assert error["details"][0]["field"] == "name"
    assert snapshot(agent_api.profile) == before


def test_longest_allowed_name_is_64_chars(agent_api, create_skill):
    create_skill(agent_api, name="a" * 64)
    assert agent_api.ok("skill_view", name="a" * 64)["name"] == "a" * 64


@pytest.mark.parametrize("category", ["DevOps", "dev ops", "", "-x"])
def test_category_follows_the_name_rule(agent_api, category):
    error = assert_error(
        agent_api.call("skill_manage", action="create", name="deploy", category=category, content=skill_md("deploy")), 400, "invalid_params"
    )
    assert error["details"][0]["field"] == "category"


@pytest.mark.parametrize("name", ["../deploy", "devops/deploy", "..", "/etc/passwd", "..\\x", "~root", "C:evil"])
def test_path_like_names_are_forbidden(agent_api, name):
    before = snapshot(agent_api.profile)
    for params in (
        {"action": "create", "name": name, "category": "devops", "content": skill_md("x")},
        {"action": "edit", "name": name, "content": skill_md("x")},
        {"action": "delete", "name": name},
    ):
        error = assert_error(agent_api.call("skill_manage", **params), 403, "forbidden")
        assert "path" in error["message"]
    assert_error(agent_api.call("skill_view", name=name), 403, "forbidden")
    assert_error(agent_api.call("skill_manage", action="create", name="x", category=name, content=skill_md("x")), 403, "forbidden")
    assert snapshot(agent_api.profile) == before


def test_create_with_existing_name_is_conflict_even_in_another_category(agent_api, create_skill):
    create_skill(agent_api)
    before = snapshot(agent_api.profile)
    error = assert_error(
        agent_api.call("skill_manage", action="create", name="deploy", category="other", content=skill_md("deploy", "new")), 409, "conflict"
    )
    assert error["details"] == {"name": "deploy", "category": "devops"}
    assert snapshot(agent_api.profile) == before


def test_create_with_a_bundled_name_is_conflict(agent_api):
    before = snapshot(agent_api.profile)
    error = assert_error(
        agent_api.call("skill_manage", action="create", name="record-memories", category="memory", content=skill_md("record-memories")),
        409, "conflict",
    )
    assert "bundled" in error["message"]
    assert snapshot(agent_api.profile) == before


def test_create_refuses_a_leftover_folder_without_skill_md(agent_api):
    leftover = skill_dir(agent_api.profile, "devops", "deploy") / "references"
    leftover.mkdir(parents=True)
    (leftover / "notes.md").write_text("keep me")
    before = snapshot(agent_api.profile)
    assert_error(agent_api.call("skill_manage", action="create", name="deploy", category="devops", content=skill_md("deploy")), 409, "conflict")
    assert snapshot(agent_api.profile) == before


def test_edit_replaces_the_whole_file(agent_api, create_skill):
    create_skill(agent_api)
    new = skill_md("deploy", "Deploy with blue/green", body="# Deploy v2\n")
    assert agent_api.ok("skill_manage", action="edit", name="deploy", content=new) == {
        "success": True, "action": "edit", "name": "deploy", "category": "devops", "changed": True,
    }
    assert agent_api.ok("skill_view", name="deploy")["content"] == new
    assert agent_api.ok("skill_manage", action="edit", name="deploy", content=new)["changed"] is False


def test_edit_and_patch_of_unknown_skill_are_not_found(agent_api):
    assert_error(agent_api.call("skill_manage", action="edit", name="ghost", content=skill_md("ghost")), 404, "not_found")
    assert_error(agent_api.call("skill_manage", action="patch", name="ghost", old_string="a", new_string="b"), 404, "not_found")


def test_patch_replaces_the_single_occurrence(agent_api, create_skill):
    create_skill(agent_api)
    body = agent_api.ok("skill_manage", action="patch", name="deploy", old_string="1. run it", new_string="1. run it twice")
    assert body["replacements"] == 1 and body["file"] == "SKILL.md"
    assert "1. run it twice\n" in agent_api.ok("skill_view", name="deploy")["content"]


def test_patch_with_no_match_is_conflict_with_count_zero(agent_api, create_skill):
    create_skill(agent_api)
    before = snapshot(agent_api.profile)
    error = assert_error(agent_api.call("skill_manage", action="patch", name="deploy", old_string="nowhere", new_string="x"), 409, "conflict")
    assert error["details"]["matches"] == 0
    assert snapshot(agent_api.profile) == before


def test_patch_with_several_matches_is_conflict_with_the_count(agent_api, create_skill):
    create_skill(agent_api, content=skill_md("deploy", body="# Steps\n- check\n- check\n- check\n"))
    before = snapshot(agent_api.profile)
    error = assert_error(agent_api.call("skill_manage", action="patch", name="deploy", old_string="- check", new_string="- verify"), 409, "conflict")
    assert error["details"]["matches"] == 3
    assert "3 times" in error["message"]
    assert snapshot(agent_api.profile) == before


def test_overlapping_matches_count_as_ambiguous(agent_api, create_skill):
    create_skill(agent_api, content=skill_md("deploy", body="# Steps\nzzz\n"))
    error = assert_error(agent_api.call("skill_manage", action="patch", name="deploy", old_string="zz", new_string="y"), 409, "conflict")
    assert error["details"]["matches"] == 2


def test_patch_rejects_empty_old_string_and_no_op(agent_api, create_skill):
    create_skill(agent_api)
    error = assert_error(agent_api.call("skill_manage", action="patch", name="deploy", old_string="", new_string="x"), 400, "invalid_params")
    assert error["details"][0]["field"] == "old_string"
    error = assert_error(agent_api.call("skill_manage", action="patch", name="deploy", old_string="run", new_string="run"), 400, "invalid_params")
    assert error["details"][0]["field"] == "new_string"


def test_patch_may_delete_text_with_empty_new_string(agent_api, create_skill):
    create_skill(agent_api, content=skill_md("deploy", body="# Steps\n1. a\n2. obsolete\n"))
    agent_api.ok("skill_manage", action="patch", name="deploy", old_string="2. obsolete\n", new_string="")
    assert agent_api.ok("skill_view", name="deploy")["content"].endswith("1. a\n")


def test_patch_of_a_support_file(agent_api, create_skill):
    create_skill(agent_api)
    agent_api.ok("skill_manage", action="write_file", name="deploy", file_path="references/api.md", file_content="GET /v1\nPOST /v1\n")
    body = agent_api.ok("skill_manage", action="patch", name="deploy", file_path="references/api.md", old_string="POST /v1", new_string="POST /v2")
    assert body["file"] == "references/api.md"
    assert agent_api.ok("skill_view", name="deploy", file="references/api.md")["content"] == "GET /v1\nPOST /v2\n"
    assert_error(
        agent_api.call("skill_manage", action="patch", name="deploy", file_path="references/none.md", old_string="a", new_string="b"),
        404, "not_found",
    )


def test_skill_md_over_one_mib_is_payload_too_large(agent_api, create_skill):
    create_skill(agent_api)
    before = snapshot(agent_api.profile)
    big = skill_md("deploy", body="x" * (storage.MAX_FILE_BYTES + 1))
    error = assert_error(agent_api.call("skill_manage", action="edit", name="deploy", content=big), 413, "payload_too_large")
    assert error["details"]["limit"] == storage.MAX_FILE_BYTES
    error = assert_error(
        agent_api.call("skill_manage", action="create", name="big", category="devops", content=skill_md("big", body="x" * (storage.MAX_FILE_BYTES + 1))),
        413, "payload_too_large",
    )
    assert snapshot(agent_api.profile) == before


def test_a_ten_megabyte_body_is_refused_before_anything_happens(agent_api, create_skill):
    create_skill(agent_api)
    before = snapshot(agent_api.profile)
    huge = "x" * (10 * 1024 * 1024)
    assert_error(
        agent_api.call("skill_manage", action="write_file", name="deploy", file_path="assets/big.txt", file_content=huge), 413, "payload_too_large"
    )
    assert snapshot(agent_api.profile) == before


def test_nul_characters_are_refused(agent_api):
    error = assert_error(
        agent_api.call("skill_manage", action="create", name="deploy", category="devops", content=skill_md("deploy", body="# a\x00b\n")),
        400, "invalid_params",
    )
    assert error["details"][0]["field"] == "content"


def test_in_process_dispatch_refuses_a_ten_megabyte_file_too(alice, create_skill, agent_api):
    from apps.tools.dispatch import call_tool
    from apps.tools.errors import PayloadTooLarge
    from apps.tools.registry import ToolContext

    create_skill(agent_api)
    before = snapshot(alice)
    ctx = ToolContext(profile=alice, role="worker", actor="job:skill_review")
    payload = {"action": "write_file", "name": "deploy", "file_path": "assets/big.txt", "file_content": "x" * (10 * 1024 * 1024)}
    with pytest.raises(PayloadTooLarge) as caught:
        call_tool("skill_manage", payload, ctx)
    assert caught.value.details["bytes"] == 10 * 1024 * 1024
    assert snapshot(alice) == before
