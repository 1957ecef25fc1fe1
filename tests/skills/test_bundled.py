"""Bundled skills: shipped read-only, seen by every profile, valid and useful."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from apps.skills import storage
from apps.skills.frontmatter import parse_front_matter
from apps.tools.registry import get_tool
from tests.skills.helpers import assert_error, skill_md, snapshot

SHIPPED = list(storage.iter_skills(storage.DEFAULT_BUNDLED_ROOT, bundled=True))


def test_at_least_two_bundled_skills_ship():
    names = {location.name for location in SHIPPED}
    assert {"record-memories", "recall-memories"} <= names


@pytest.mark.parametrize("location", SHIPPED, ids=lambda loc: loc.name)
def test_shipped_skill_is_valid_and_has_the_sections_of_a_good_skill(location):
    text = location.skill_file.read_text(encoding="utf-8")
    front = parse_front_matter(text, expected_name=location.name)
    assert storage.check_name(location.category, "category") == location.category
    for heading in ("## When to Use", "## Steps", "## Pitfalls", "## Verification"):
        assert heading in front.body, heading
    assert re.search(r"^1\. ", front.body, re.MULTILINE)
    for path in storage.support_files(location.path):
        storage.check_support_path(path)


# Which tool a JSON example is for, recognised by the keys only that tool takes.
EXAMPLE_SIGNATURES = [
    ("l1_fix", {"recordId"}),
    ("l1_task_state", {"ids", "state"}),
    ("clear_invalid_l1_records", {"recordIds"}),
    ("recall_l1_records", {"query"}),
    ("load_memory_rules", {"mode"}),
    ("list_l1_scenes", {"limit"}),
    ("l1_commit", {"records"}),
    ("skill_manage", {"action"}),
    ("skill_view", {"name"}),
]


def _tool_of(example: dict) -> str:
    for tool_name, keys in EXAMPLE_SIGNATURES:
        if keys <= set(example):
            return tool_name
    raise AssertionError(f"no tool recognised for example {example}")


@pytest.mark.parametrize("location", SHIPPED, ids=lambda loc: loc.name)
def test_json_examples_in_shipped_skills_are_valid_calls_of_real_tools(location):
    text = location.skill_file.read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)```", text, re.DOTALL)
    assert blocks
    for block in blocks:
        example = json.loads(block)
        spec = get_tool(_tool_of(example))
        assert spec is not None
        params = spec.params.model_validate(example)
        if spec.name == "skill_manage":
            params.check_fields_for_action()


def test_skill_examples_of_write_skills_use_skill_manage_correctly():
    location = next(loc for loc in SHIPPED if loc.name == "write-skills")
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", location.skill_file.read_text(), re.DOTALL)]
    params = get_tool("skill_manage").params
    for block in blocks:
        if "action" in block:
            params.model_validate(block).check_fields_for_action()
    create = next(b for b in blocks if b.get("action") == "create")
    parse_front_matter(create["content"], expected_name=create["name"])


def test_every_profile_sees_bundled_skills_with_their_files(agent_api, make_profile, make_api):
    view = agent_api.ok("skill_view", name="record-memories")
    assert view["bundled"] is True and view["pinned"] is False and view["category"] == "memory"
    assert view["files"] == ["references/record-checklist.md"]
    assert "l1_commit" in view["content"]
    checklist = agent_api.ok("skill_view", name="record-memories", file="references/record-checklist.md")
    assert checklist["content"].startswith("# Checklist before calling l1_commit")
    other = make_api(make_profile("carol"), "agent")
    assert other.ok("skill_view", name="recall-memories")["bundled"] is True


@pytest.mark.parametrize(
    "params",
    [
        {"action": "edit", "content": skill_md("record-memories")},
        {"action": "patch", "old_string": "## Steps", "new_string": "## Stages"},
        {"action": "delete"},
        {"action": "write_file", "file_path": "references/x.md", "file_content": "x"},
        {"action": "remove_file", "file_path": "references/record-checklist.md"},
        {"action": "pin"},
        {"action": "unpin"},
    ],
)
def test_bundled_skills_refuse_every_change(agent_api, admin_api, params):
    before_files = {p: p.read_bytes() for p in storage.DEFAULT_BUNDLED_ROOT.rglob("*") if p.is_file()}
    before = snapshot(agent_api.profile)
    for api in (agent_api, admin_api):
        error = assert_error(api.call("skill_manage", name="record-memories", **params), 403, "forbidden")
        assert "bundled" in error["message"]
    assert {p: p.read_bytes() for p in storage.DEFAULT_BUNDLED_ROOT.rglob("*") if p.is_file()} == before_files
    assert snapshot(agent_api.profile) == before


@pytest.fixture
def bundled_copy(settings, tmp_path):
    root = tmp_path / "bundled"
    shutil.copytree(storage.DEFAULT_BUNDLED_ROOT, root)
    settings.SKILLS_BUNDLED_DIR = root
    return root


def test_bundled_root_is_configurable(agent_api, bundled_copy):
    extra = bundled_copy / "ops" / "house-rules"
    extra.mkdir(parents=True)
    (extra / "SKILL.md").write_text(skill_md("house-rules", "Rules of the house"))
    assert agent_api.ok("skill_view", name="house-rules")["bundled"] is True


def test_a_profile_skill_that_predates_a_bundled_one_shadows_it(agent_api, create_skill, bundled_copy):
    create_skill(agent_api, name="house-rules", category="mine")
    later = bundled_copy / "ops" / "house-rules"
    later.mkdir(parents=True)
    (later / "SKILL.md").write_text(skill_md("house-rules", "Shipped later"))
    view = agent_api.ok("skill_view", name="house-rules")
    assert view["bundled"] is False and view["category"] == "mine"
    listed = [s for s in agent_api.ok("skill_manage", action="list")["skills"] if s["name"] == "house-rules"]
    assert [(s["bundled"], s.get("shadowed", False)) for s in listed] == [(False, False), (True, True)]
    agent_api.ok("skill_manage", action="delete", name="house-rules")
    assert agent_api.ok("skill_view", name="house-rules")["bundled"] is True


def test_bundled_files_are_confined_like_profile_files(agent_api):
    for path in ("../../../../memoryweb/settings.py", "/etc/passwd", "../recall-memories/SKILL.md"):
        assert_error(agent_api.call("skill_view", name="record-memories", file=path), 403, "forbidden")
    assert_error(agent_api.call("skill_view", name="record-memories", file="references/.hidden"), 400, "invalid_params")
    assert_error(agent_api.call("skill_view", name="record-memories", file="references/none.md"), 404, "not_found")
