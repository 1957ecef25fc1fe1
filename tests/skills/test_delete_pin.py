"""delete (soft, into the trash) and pin/unpin (SPEC §1.7: pinned skills refuse delete)."""

from __future__ import annotations

import shutil

from apps.accounts.paths import profile_dir
from apps.skills.models import SkillPin
from tests.skills.helpers import assert_error, skill_dir, skill_md, snapshot


def test_delete_moves_the_whole_folder_to_the_trash(agent_api, create_skill):
    create_skill(agent_api)
    agent_api.ok("skill_manage", action="write_file", name="deploy", file_path="scripts/go.sh", file_content="echo go")
    original = snapshot(agent_api.profile)
    body = agent_api.ok("skill_manage", action="delete", name="deploy")
    assert body["success"] is True and body["category"] == "devops"
    assert not skill_dir(agent_api.profile, "devops", "deploy").exists()
    assert not (profile_dir(agent_api.profile) / "skills" / "devops").exists()
    trashed = profile_dir(agent_api.profile) / body["trash"] / "devops" / "deploy"
    assert (trashed / "SKILL.md").read_bytes() == original["skills/devops/deploy/SKILL.md"]
    assert (trashed / "scripts" / "go.sh").read_text() == "echo go"
    assert_error(agent_api.call("skill_view", name="deploy"), 404, "not_found")
    assert all(s["bundled"] for s in agent_api.ok("skill_manage", action="list")["skills"])


def test_delete_keeps_other_skills_of_the_category(agent_api, create_skill):
    create_skill(agent_api, name="deploy")
    create_skill(agent_api, name="rollback")
    agent_api.ok("skill_manage", action="delete", name="deploy")
    assert agent_api.ok("skill_view", name="rollback")["category"] == "devops"


def test_name_is_free_again_after_delete(agent_api, create_skill):
    create_skill(agent_api)
    agent_api.ok("skill_manage", action="delete", name="deploy")
    create_skill(agent_api, category="ops", content=skill_md("deploy", "second life"))
    assert agent_api.ok("skill_view", name="deploy")["category"] == "ops"


def test_delete_of_unknown_skill_is_not_found(agent_api):
    before = snapshot(agent_api.profile)
    assert_error(agent_api.call("skill_manage", action="delete", name="ghost"), 404, "not_found")
    assert snapshot(agent_api.profile) == before


def test_pinned_skill_refuses_delete_with_conflict(agent_api, create_skill):
    create_skill(agent_api)
    assert agent_api.ok("skill_manage", action="pin", name="deploy") == {
        "success": True, "action": "pin", "name": "deploy", "category": "devops", "pinned": True, "changed": True,
    }
    before = snapshot(agent_api.profile)
    error = assert_error(agent_api.call("skill_manage", action="delete", name="deploy"), 409, "conflict")
    assert "unpin" in error["message"] and error["details"]["pinned"] is True
    assert snapshot(agent_api.profile) == before
    assert agent_api.ok("skill_view", name="deploy")["pinned"] is True


def test_pinned_skill_can_still_be_edited_patched_and_given_files(agent_api, create_skill):
    create_skill(agent_api)
    agent_api.ok("skill_manage", action="pin", name="deploy")
    agent_api.ok("skill_manage", action="edit", name="deploy", content=skill_md("deploy", "edited while pinned"))
    agent_api.ok("skill_manage", action="patch", name="deploy", old_string="while pinned", new_string="when pinned")
    agent_api.ok("skill_manage", action="write_file", name="deploy", file_path="references/a.md", file_content="a")
    agent_api.ok("skill_manage", action="remove_file", name="deploy", file_path="references/a.md")
    view = agent_api.ok("skill_view", name="deploy")
    assert "edited when pinned" in view["content"] and view["pinned"] is True


def test_unpin_then_delete_works(agent_api, create_skill):
    create_skill(agent_api)
    agent_api.ok("skill_manage", action="pin", name="deploy")
    assert agent_api.ok("skill_manage", action="unpin", name="deploy")["pinned"] is False
    agent_api.ok("skill_manage", action="delete", name="deploy")
    assert not SkillPin.objects.exists()


def test_pin_and_unpin_are_idempotent(agent_api, create_skill):
    create_skill(agent_api)
    agent_api.ok("skill_manage", action="pin", name="deploy")
    assert agent_api.ok("skill_manage", action="pin", name="deploy")["changed"] is False
    assert SkillPin.objects.filter(profile=agent_api.profile, name="deploy").count() == 1
    agent_api.ok("skill_manage", action="unpin", name="deploy")
    assert agent_api.ok("skill_manage", action="unpin", name="deploy") == {
        "success": True, "action": "unpin", "name": "deploy", "category": "devops", "pinned": False, "changed": False,
    }


def test_pin_of_unknown_skill_is_not_found(agent_api):
    assert_error(agent_api.call("skill_manage", action="pin", name="ghost"), 404, "not_found")
    assert_error(agent_api.call("skill_manage", action="unpin", name="ghost"), 404, "not_found")
    assert not SkillPin.objects.exists()


def test_list_shows_pins(agent_api, create_skill):
    create_skill(agent_api, name="deploy")
    create_skill(agent_api, name="rollback")
    agent_api.ok("skill_manage", action="pin", name="rollback")
    listed = {s["name"]: s["pinned"] for s in agent_api.ok("skill_manage", action="list", category="devops")["skills"]}
    assert listed == {"deploy": False, "rollback": True}


def test_a_stale_pin_does_not_carry_over_to_a_new_skill(agent_api, create_skill):
    create_skill(agent_api)
    agent_api.ok("skill_manage", action="pin", name="deploy")
    # The folder disappears outside the service (e.g. restored from an old backup).
    shutil.rmtree(skill_dir(agent_api.profile, "devops", "deploy"))
    create_skill(agent_api)
    assert agent_api.ok("skill_view", name="deploy")["pinned"] is False
    agent_api.ok("skill_manage", action="delete", name="deploy")
