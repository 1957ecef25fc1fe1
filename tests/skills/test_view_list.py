"""skill_view and skill_manage list."""

from __future__ import annotations

from pathlib import Path

from tests.skills.helpers import assert_error, skill_dir, skill_md


def test_view_of_unknown_skill_is_not_found(agent_api):
    error = assert_error(agent_api.call("skill_view", name="ghost"), 404, "not_found")
    assert error["details"] == {"name": "ghost"}


def test_list_includes_own_and_bundled_skills_sorted_by_category(agent_api, create_skill):
    create_skill(agent_api, name="deploy", category="devops")
    create_skill(agent_api, name="alpha", category="zeta")
    body = agent_api.ok("skill_manage", action="list")
    keys = [(s["category"], s["name"], s["bundled"]) for s in body["skills"]]
    assert keys == sorted(keys)
    assert ("devops", "deploy", False) in keys and ("zeta", "alpha", False) in keys
    assert ("memory", "record-memories", True) in keys and ("memory", "recall-memories", True) in keys
    assert body["returned"] == len(body["skills"])
    categories = {c["category"]: c["count"] for c in body["categories"]}
    assert categories["devops"] == 1 and categories["zeta"] == 1 and categories["memory"] >= 2


def test_list_filters_by_category_and_unknown_category_is_empty(agent_api, create_skill):
    create_skill(agent_api, name="deploy", category="devops")
    create_skill(agent_api, name="alpha", category="zeta")
    body = agent_api.ok("skill_manage", action="list", category="zeta")
    assert [s["name"] for s in body["skills"]] == ["alpha"]
    assert {c["category"] for c in body["categories"]} >= {"devops", "zeta"}
    assert agent_api.ok("skill_manage", action="list", category="nothing-here")["skills"] == []
    assert_error(agent_api.call("skill_manage", action="list", category="../bob"), 403, "forbidden")
    assert_error(agent_api.call("skill_manage", action="list", category="Bad"), 400, "invalid_params")


def test_list_reports_support_file_count(agent_api, create_skill):
    create_skill(agent_api)
    agent_api.ok("skill_manage", action="write_file", name="deploy", file_path="references/a.md", file_content="a")
    agent_api.ok("skill_manage", action="write_file", name="deploy", file_path="assets/b.txt", file_content="b")
    [item] = agent_api.ok("skill_manage", action="list", category="devops")["skills"]
    assert item["files"] == 2


def test_a_skill_broken_on_disk_is_listed_with_its_problem_and_can_be_fixed(agent_api, create_skill):
    create_skill(agent_api)
    skill_file = skill_dir(agent_api.profile, "devops", "deploy") / "SKILL.md"
    skill_file.write_text("no front matter at all\n")
    [item] = agent_api.ok("skill_manage", action="list", category="devops")["skills"]
    assert "must start with" in item["problem"]
    agent_api.ok("skill_manage", action="edit", name="deploy", content=skill_md("deploy"))
    [item] = agent_api.ok("skill_manage", action="list", category="devops")["skills"]
    assert "problem" not in item


def test_stray_entries_on_disk_are_ignored(agent_api, create_skill):
    create_skill(agent_api)
    root = skill_dir(agent_api.profile, "devops", "deploy").parent.parent
    (root / ".tmp-stuff").mkdir()
    (root / "Bad Category" / "x").mkdir(parents=True)
    Path(root / "devops" / "no-skill-md").mkdir()
    (root / "loose.txt").write_text("x")
    own = [s["name"] for s in agent_api.ok("skill_manage", action="list")["skills"] if not s["bundled"]]
    assert own == ["deploy"]
