"""Every change is audited; a failed change leaves nothing behind; writers are serialised."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

import pytest

from apps.accounts.locks import profile_write_lock
from apps.accounts.models import AuditEvent
from apps.skills import services, storage
from apps.skills.models import SkillPin
from tests.skills.helpers import assert_error, skill_md, snapshot


def _events(profile):
    return list(AuditEvent.objects.filter(profile=profile, target_type="skill").order_by("id"))


def test_every_change_is_audited_with_before_and_after(agent_api, create_skill):
    create_skill(agent_api)
    new = skill_md("deploy", "Deploy v2")
    agent_api.ok("skill_manage", action="edit", name="deploy", content=new)
    agent_api.ok("skill_manage", action="patch", name="deploy", old_string="Deploy v2", new_string="Deploy v3")
    agent_api.ok("skill_manage", action="write_file", name="deploy", file_path="references/a.md", file_content="A")
    agent_api.ok("skill_manage", action="write_file", name="deploy", file_path="references/a.md", file_content="AA")
    agent_api.ok("skill_manage", action="remove_file", name="deploy", file_path="references/a.md")
    agent_api.ok("skill_manage", action="pin", name="deploy")
    agent_api.ok("skill_manage", action="unpin", name="deploy")
    agent_api.ok("skill_manage", action="delete", name="deploy")
    events = _events(agent_api.profile)
    assert [e.action for e in events] == [
        "create", "edit", "patch", "write_file", "write_file", "remove_file", "pin", "unpin", "delete",
    ]
    assert {e.tool for e in events} == {"skill_manage"}
    assert {e.target_id for e in events} == {"deploy"}
    assert all(e.actor.startswith("token:") and e.actor.endswith(":agent") for e in events)
    create, edit, patch, write1, write2, remove, pin, unpin, delete = events
    assert create.before is None and create.after == {"category": "devops", "content": skill_md("deploy")}
    assert edit.before["content"] == skill_md("deploy") and edit.after["content"] == new
    assert patch.after["content"] == skill_md("deploy", "Deploy v3")
    assert patch.note == {"old_string": "Deploy v2", "new_string": "Deploy v3"}
    assert write1.before is None and write1.after["bytes"] == 1
    assert write2.before["bytes"] == 1 and write2.after["bytes"] == 2 and write2.after["previousKeptIn"].startswith("skills-trash/")
    assert remove.after["trash"].startswith("skills-trash/")
    assert (pin.before, pin.after, unpin.after) == ({"pinned": False}, {"pinned": True}, {"pinned": False})
    assert delete.before["content"] == skill_md("deploy", "Deploy v3") and delete.after["trash"].startswith("skills-trash/")


def test_refused_and_no_op_calls_write_no_audit(agent_api, create_skill):
    create_skill(agent_api)
    count = len(_events(agent_api.profile))
    agent_api.call("skill_manage", action="edit", name="deploy", content=skill_md("deploy"))
    agent_api.call("skill_manage", action="patch", name="deploy", old_string="nope", new_string="x")
    agent_api.call("skill_manage", action="unpin", name="deploy")
    agent_api.call("skill_manage", action="delete", name="record-memories")
    assert len(_events(agent_api.profile)) == count


def _setup(api):
    api.ok("skill_manage", action="create", name="deploy", category="devops", content=skill_md("deploy"))
    api.ok("skill_manage", action="write_file", name="deploy", file_path="references/a.md", file_content="A")


CHANGES = [
    ("create", {"name": "fresh", "category": "newcat", "content": skill_md("fresh")}),
    ("edit", {"name": "deploy", "content": skill_md("deploy", "changed")}),
    ("patch", {"name": "deploy", "old_string": "run it", "new_string": "run it now"}),
    ("delete", {"name": "deploy"}),
    ("write_file", {"name": "deploy", "file_path": "references/new/b.md", "file_content": "B"}),
    ("write_file", {"name": "deploy", "file_path": "references/a.md", "file_content": "A2"}),
    ("remove_file", {"name": "deploy", "file_path": "references/a.md"}),
    ("pin", {"name": "deploy"}),
]


@pytest.mark.parametrize(("action", "params"), CHANGES, ids=[f"{a}-{i}" for i, (a, _) in enumerate(CHANGES)])
def test_a_transaction_that_fails_after_the_file_change_undoes_it(agent_api, monkeypatch, action, params):
    _setup(agent_api)
    before, events_before = snapshot(agent_api.profile), len(_events(agent_api.profile))

    @contextmanager
    def failing_commit(profile):
        with profile_write_lock(profile):
            yield
            raise RuntimeError("commit failed")

    monkeypatch.setattr(services, "profile_write_lock", failing_commit)
    status, body = agent_api.call("skill_manage", action=action, **params)
    assert status == 500 and body["error"]["code"] == "internal"  # the error shape, not a traceback page
    assert snapshot(agent_api.profile) == before
    assert len(_events(agent_api.profile)) == events_before
    assert not SkillPin.objects.exists()
    monkeypatch.undo()
    agent_api.ok("skill_manage", action=action, **params)


@pytest.mark.parametrize(("action", "params"), CHANGES[:7], ids=[f"{a}-{i}" for i, (a, _) in enumerate(CHANGES[:7])])
def test_a_disk_error_is_unavailable_and_changes_nothing(agent_api, monkeypatch, action, params):
    _setup(agent_api)
    before, events_before = snapshot(agent_api.profile), len(_events(agent_api.profile))

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(storage, "atomic_write", broken)
    monkeypatch.setattr(storage.os, "rename", broken)
    error = assert_error(agent_api.call("skill_manage", action=action, **params), 503, "unavailable")
    assert "No space left on device" in error["message"]
    assert snapshot(agent_api.profile) == before
    assert len(_events(agent_api.profile)) == events_before


def test_busy_skill_lock_answers_locked_and_changes_nothing(agent_api, create_skill):
    create_skill(agent_api)
    profile = agent_api.profile
    profile.settings = {"l1.writeLockTimeoutSeconds": 1}
    profile.save()
    before = snapshot(profile)
    with storage.skills_lock(profile):
        started = time.monotonic()
        error = assert_error(agent_api.call("skill_manage", action="edit", name="deploy", content=skill_md("deploy", "x")), 423, "locked")
        assert time.monotonic() - started >= 0.9
    assert "retry" in error["message"]
    assert snapshot(profile) == before
    agent_api.ok("skill_manage", action="edit", name="deploy", content=skill_md("deploy", "x"))


def test_skill_writers_of_one_profile_wait_for_each_other(alice):
    held = threading.Event()
    release = threading.Event()
    order: list[str] = []

    def holder():
        with storage.skills_lock(alice):
            held.set()
            release.wait(5)
            order.append("first done")

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(5)
    threading.Timer(0.3, release.set).start()
    started = time.monotonic()
    with storage.skills_lock(alice):
        order.append("second in")
        waited = time.monotonic() - started
    thread.join()
    assert order == ["first done", "second in"]
    assert waited >= 0.25


def test_skill_locks_of_different_profiles_are_independent(alice, bob):
    with storage.skills_lock(alice):
        started = time.monotonic()
        with storage.skills_lock(bob):
            pass
        assert time.monotonic() - started < 0.5


def test_atomic_write_failure_keeps_the_old_file_and_leaves_no_temp(tmp_path, monkeypatch):
    folder = tmp_path / "skill"
    folder.mkdir()
    target = folder / "SKILL.md"
    target.write_bytes(b"old")

    def failing_replace(src, dst):
        raise OSError(5, "I/O error")

    monkeypatch.setattr(storage.os, "replace", failing_replace)
    with pytest.raises(OSError):
        storage.atomic_write(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in folder.iterdir()] == ["SKILL.md"]
