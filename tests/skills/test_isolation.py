"""No read or write crosses profiles (SPEC §0, §2 path rules), whatever the path trick."""

from __future__ import annotations

import os

import pytest

from apps.accounts.paths import profile_dir
from tests.skills.helpers import assert_error, skill_dir, skill_md, snapshot


@pytest.fixture
def bob_api(bob, make_api, create_skill):
    api = make_api(bob, "agent")
    create_skill(api, name="secret-recipe", category="kitchen", content=skill_md("secret-recipe", "Bob's own"))
    api.ok("skill_manage", action="write_file", name="secret-recipe", file_path="references/r.md", file_content="bob only")
    return api


def test_alice_cannot_see_bobs_skills(agent_api, bob_api):
    assert_error(agent_api.call("skill_view", name="secret-recipe"), 404, "not_found")
    listed = agent_api.ok("skill_manage", action="list")
    assert "secret-recipe" not in [s["name"] for s in listed["skills"]]
    assert "kitchen" not in [c["category"] for c in listed["categories"]]
    assert agent_api.ok("skill_manage", action="list", category="kitchen")["skills"] == []


@pytest.mark.parametrize(
    "params",
    [
        {"action": "edit", "name": "secret-recipe", "content": skill_md("secret-recipe", "hijacked")},
        {"action": "patch", "name": "secret-recipe", "old_string": "Bob's own", "new_string": "Alice's"},
        {"action": "delete", "name": "secret-recipe"},
        {"action": "write_file", "name": "secret-recipe", "file_path": "references/r.md", "file_content": "x"},
        {"action": "remove_file", "name": "secret-recipe", "file_path": "references/r.md"},
        {"action": "pin", "name": "secret-recipe"},
    ],
)
def test_alice_cannot_change_bobs_skills_by_name(agent_api, bob, bob_api, params):
    before = snapshot(bob)
    assert_error(agent_api.call("skill_manage", **params), 404, "not_found")
    assert snapshot(bob) == before


def test_alice_cannot_reach_bob_through_crafted_names_or_paths(agent_api, bob, bob_api, create_skill):
    create_skill(agent_api)
    before_bob, before_alice = snapshot(bob), snapshot(agent_api.profile)
    crafted_names = ["../../bob/skills/kitchen/secret-recipe", "../bob", str(skill_dir(bob, "kitchen", "secret-recipe"))]
    for name in crafted_names:
        assert_error(agent_api.call("skill_view", name=name), 403, "forbidden")
        assert_error(agent_api.call("skill_manage", action="delete", name=name), 403, "forbidden")
    crafted_paths = [
        "../../../../bob/skills/kitchen/secret-recipe/references/r.md",
        "references/../../../../../bob/skills/kitchen/secret-recipe/SKILL.md",
        str(skill_dir(bob, "kitchen", "secret-recipe") / "references" / "r.md"),
    ]
    for path in crafted_paths:
        assert_error(agent_api.call("skill_view", name="deploy", file=path), 403, "forbidden")
        assert_error(
            agent_api.call("skill_manage", action="write_file", name="deploy", file_path=path, file_content="x"), 403, "forbidden"
        )
        assert_error(agent_api.call("skill_manage", action="remove_file", name="deploy", file_path=path), 403, "forbidden")
    assert_error(
        agent_api.call("skill_manage", action="create", name="x", category="../../bob/skills/kitchen", content=skill_md("x")),
        403, "forbidden",
    )
    assert snapshot(bob) == before_bob
    assert snapshot(agent_api.profile) == before_alice


def test_a_symlink_planted_in_alices_tree_does_not_lead_to_bob(agent_api, bob, bob_api, create_skill):
    create_skill(agent_api)
    alice_root = profile_dir(agent_api.profile) / "skills"
    os.symlink(skill_dir(bob, "kitchen", "secret-recipe"), alice_root / "devops" / "secret-recipe")
    os.symlink(profile_dir(bob) / "skills" / "kitchen", alice_root / "kitchen")
    os.symlink(skill_dir(bob, "kitchen", "secret-recipe") / "references", skill_dir(agent_api.profile, "devops", "deploy") / "references")
    before_bob = snapshot(bob)
    assert_error(agent_api.call("skill_view", name="secret-recipe"), 403, "forbidden")
    for params in (
        {"action": "edit", "name": "secret-recipe", "content": skill_md("secret-recipe", "hijacked")},
        {"action": "delete", "name": "secret-recipe"},
        {"action": "write_file", "name": "deploy", "file_path": "references/r.md", "file_content": "hijacked"},
        {"action": "remove_file", "name": "deploy", "file_path": "references/r.md"},
    ):
        assert_error(agent_api.call("skill_manage", **params), 403, "forbidden")
    assert_error(agent_api.call("skill_view", name="deploy", file="references/r.md"), 403, "forbidden")
    listed = agent_api.ok("skill_manage", action="list")
    assert "secret-recipe" not in [s["name"] for s in listed["skills"]]
    assert agent_api.ok("skill_view", name="deploy")["files"] == []
    assert snapshot(bob) == before_bob


def test_same_name_in_two_profiles_is_independent(agent_api, bob, bob_api, create_skill):
    create_skill(agent_api, name="secret-recipe", category="mine", content=skill_md("secret-recipe", "Alice's own"))
    agent_api.ok("skill_manage", action="pin", name="secret-recipe")
    assert bob_api.ok("skill_view", name="secret-recipe")["pinned"] is False
    bob_api.ok("skill_manage", action="delete", name="secret-recipe")
    view = agent_api.ok("skill_view", name="secret-recipe")
    assert "Alice's own" in view["content"] and view["pinned"] is True


@pytest.mark.parametrize("folder", ["skills", "skills-trash"])
def test_a_profile_folder_linked_to_bobs_is_never_followed(agent_api, bob, bob_api, folder):
    alice_dir = profile_dir(agent_api.profile)
    alice_dir.mkdir(parents=True, exist_ok=True)
    (profile_dir(bob) / folder).mkdir(parents=True, exist_ok=True)
    os.symlink(profile_dir(bob) / folder, alice_dir / folder)
    before_bob = snapshot(bob)
    if folder == "skills":
        assert_error(agent_api.call("skill_view", name="secret-recipe"), 403, "forbidden")
        assert_error(agent_api.call("skill_manage", action="list"), 403, "forbidden")
        assert_error(agent_api.call("skill_manage", action="create", name="planted", category="other",
                                     content=skill_md("planted")), 403, "forbidden")
    else:
        agent_api.ok("skill_manage", action="create", name="mine", category="own", content=skill_md("mine"))
        assert_error(agent_api.call("skill_manage", action="delete", name="mine"), 403, "forbidden")
        assert agent_api.ok("skill_view", name="mine")["name"] == "mine"
    assert snapshot(bob) == before_bob
