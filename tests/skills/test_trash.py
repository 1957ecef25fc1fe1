"""Nothing is lost: the trash lists what deletes, removals and overwrites kept, and the
dashboard can restore it."""

from __future__ import annotations

import pytest

from apps.accounts.models import AuditEvent
from apps.skills import services
from apps.tools.errors import Conflict, Forbidden, InvalidParams, NotFound
from tests.skills.helpers import skill_md, snapshot

ACTOR = "user:owner"


def _create(profile, name="deploy", category="devops"):
    services.skill_create(profile=profile, actor=ACTOR, name=name, category=category, content=skill_md(name))


def _live(state):
    return {k: v for k, v in state.items() if k.startswith("skills/")}


def test_deleted_skill_is_listed_and_restored_exactly(alice):
    _create(alice)
    services.skill_write_file(profile=alice, actor=ACTOR, name="deploy", file_path="scripts/go.sh", file_content="go")
    services.skill_pin(profile=alice, actor=ACTOR, name="deploy")
    services.skill_unpin(profile=alice, actor=ACTOR, name="deploy")
    live_before = _live(snapshot(alice))
    deleted = services.skill_delete(profile=alice, actor=ACTOR, name="deploy")
    [entry] = services.skill_trash_list(profile=alice)["entries"]
    assert entry["id"] == deleted["trash"].split("/")[-1]
    assert (entry["action"], entry["name"], entry["category"]) == ("delete", "deploy", "devops")
    assert entry["files"] == ["SKILL.md", "scripts/go.sh"]
    body = services.skill_restore(profile=alice, actor=ACTOR, entry=entry["id"])
    assert body == {"success": True, "action": "restore", "name": "deploy", "category": "devops", "entry": entry["id"]}
    assert _live(snapshot(alice)) == live_before
    assert services.skill_trash_list(profile=alice)["entries"] == []
    assert AuditEvent.objects.filter(profile=alice, action="restore", target_id="deploy", tool="dashboard").count() == 1


def test_restore_refuses_a_name_taken_meanwhile(alice):
    _create(alice)
    entry = services.skill_delete(profile=alice, actor=ACTOR, name="deploy")["trash"].split("/")[-1]
    _create(alice, category="other")
    before = snapshot(alice)
    with pytest.raises(Conflict):
        services.skill_restore(profile=alice, actor=ACTOR, entry=entry)
    assert snapshot(alice) == before


def test_removed_file_is_restored(alice):
    _create(alice)
    services.skill_write_file(profile=alice, actor=ACTOR, name="deploy", file_path="references/a.md", file_content="A")
    entry = services.skill_remove_file(profile=alice, actor=ACTOR, name="deploy", file_path="references/a.md")["trash"].split("/")[-1]
    body = services.skill_restore(profile=alice, actor=ACTOR, entry=entry)
    assert body["file_path"] == "references/a.md"
    assert services.skill_view(profile=alice, name="deploy", file="references/a.md")["content"] == "A"
    assert services.skill_trash_list(profile=alice)["entries"] == []


def test_restoring_an_overwritten_version_keeps_the_current_one(alice):
    _create(alice)
    services.skill_write_file(profile=alice, actor=ACTOR, name="deploy", file_path="references/a.md", file_content="v1")
    services.skill_write_file(profile=alice, actor=ACTOR, name="deploy", file_path="references/a.md", file_content="v2")
    [entry] = services.skill_trash_list(profile=alice)["entries"]
    assert entry["action"] == "overwrite" and entry["files"] == ["references/a.md"]
    services.skill_restore(profile=alice, actor=ACTOR, entry=entry["id"])
    assert services.skill_view(profile=alice, name="deploy", file="references/a.md")["content"] == "v1"
    [kept] = services.skill_trash_list(profile=alice)["entries"]
    assert kept["id"] != entry["id"] and kept["action"] == "overwrite"


def test_restoring_a_file_of_a_deleted_skill_is_not_found(alice):
    _create(alice)
    services.skill_write_file(profile=alice, actor=ACTOR, name="deploy", file_path="references/a.md", file_content="A")
    file_entry = services.skill_remove_file(profile=alice, actor=ACTOR, name="deploy", file_path="references/a.md")["trash"].split("/")[-1]
    services.skill_delete(profile=alice, actor=ACTOR, name="deploy")
    before = snapshot(alice)
    with pytest.raises(NotFound):
        services.skill_restore(profile=alice, actor=ACTOR, entry=file_entry)
    assert snapshot(alice) == before


def test_bad_entry_ids(alice, bob):
    _create(bob)
    bob_entry = services.skill_delete(profile=bob, actor=ACTOR, name="deploy")["trash"].split("/")[-1]
    before_bob = snapshot(bob)
    with pytest.raises(NotFound):
        services.skill_restore(profile=alice, actor=ACTOR, entry=bob_entry)
    with pytest.raises(Forbidden):
        services.skill_restore(profile=alice, actor=ACTOR, entry=f"../../bob/skills-trash/{bob_entry}")
    with pytest.raises(InvalidParams):
        services.skill_restore(profile=alice, actor=ACTOR, entry="not-an-entry")
    assert snapshot(bob) == before_bob
    assert services.skill_trash_list(profile=alice)["entries"] == []
