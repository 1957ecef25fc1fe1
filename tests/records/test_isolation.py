"""No tool call of one profile reads or changes another profile's records, scenes or cursor."""

from __future__ import annotations

import pytest

from apps.scenes.models import SceneEntry
from tests.records.conftest import CURSOR, fail, msg, rec, record, snapshot


@pytest.fixture
def setup(alice, bob, make_api, l0):
    l0(alice, msg(1, "alice talks about /srv/alice/app/main.go and /srv/alice/app/x.go", session="shared", cwd="/srv/alice/app"))
    l0(bob, msg(1, "bob talks about /srv/bob/app/main.go and /srv/bob/app/y.go", session="shared", cwd="/srv/bob/app"))
    alice_w, bob_w = make_api(alice, "worker"), make_api(bob, "worker")
    a = alice_w.ok("l1_commit", records=[rec("alice task: ship the app", type="work_task", new_scene_name="app｜ship", new_scene_reason="r")], cursor=CURSOR)["stored"][0]
    b = bob_w.ok("l1_commit", records=[rec("bob task: ship his app", type="work_task", new_scene_name="app｜ship", new_scene_reason="r")], cursor='{"version":2,"files":{"b.jsonl":7}}')["stored"][0]
    return alice_w, bob_w, a, b


def test_same_scene_name_gets_separate_pools(setup, alice, bob):
    _, _, a, b = setup
    assert record(alice, a).scene.profile_id == alice.pk and record(bob, b).scene.profile_id == bob.pk
    assert SceneEntry.objects.get(profile=alice, scene_id="sc0001").use_count == 1
    assert SceneEntry.objects.get(profile=bob, scene_id="sc0001").use_count == 1


def test_bob_cannot_touch_alices_records_through_any_tool(setup, alice, bob, make_api):
    _, bob_w, a, _ = setup
    bob_admin = make_api(bob, "admin")
    before = snapshot(alice)
    fail(bob_w, "l1_commit", 404, "not_found", records=[{"id": a, "deleted": True}], cursor=CURSOR)
    fail(bob_w, "l1_commit", 404, "not_found", records=[rec("bob replaces alice", replaces=[a])], cursor=CURSOR)
    fail(bob_admin, "l1_fix", 404, "not_found", recordId=a, action="tombstone", evidence="x" * 40, force=True)
    assert bob_w.ok("l1_task_state", ids=[a], state="done")["failed"] == [{"id": a, "reason": "not_found"}]
    assert snapshot(alice) == before


def test_bob_cannot_use_alices_scenes_or_see_them(setup, alice, bob):
    _, bob_w, _, _ = setup
    SceneEntry.objects.create(profile=alice, scene_id="sc0002", name="alice｜secret")
    fail(bob_w, "l1_commit", 400, "invalid_params", records=[rec("bob uses alice scene", scene_id="sc0002")], cursor=CURSOR)
    assert [s["name"] for s in bob_w.ok("list_l1_scenes")["scenes"]] == ["app｜ship"]
    body = bob_w.ok("l1_commit", records=[rec("bob names alice scene", scene_name="alice｜secret")], cursor=CURSOR)
    assert record(bob, body["stored"][0]).scene.scene_id == "unclassified"


def test_cursors_and_provenance_are_per_profile(setup, alice, bob, l0):
    _, bob_w, _, _ = setup
    from apps.conversations.cursors import cursor_get

    assert cursor_get(profile=alice, kind="l1") == {"version": 2, "files": {"2026-11-29.jsonl": 100}}
    assert cursor_get(profile=bob, kind="l1") == {"version": 2, "files": {"b.jsonl": 7}}
    l0(alice, msg(77, "a message only alice has"))
    body = bob_w.ok("l1_commit", records=[rec("bob cites alice message", sources=["m77"])], cursor=CURSOR)
    assert body["provenanceMissing"] == 1


def test_project_lookup_reads_only_the_callers_l0(setup):
    alice_w, bob_w, _, _ = setup
    assert alice_w.ok("l1_project_get", sessionKey="shared")["project"] == "/srv/alice/app"
    assert bob_w.ok("l1_project_get", sessionKey="shared")["project"] == "/srv/bob/app"


def test_rules_loads_are_per_profile(setup, alice, bob, make_api):
    make_api(alice, "agent").ok("load_memory_rules", session="shared")
    body = make_api(bob, "agent").ok("l1_commit", source="main-agent", records=[{"content": "bob main agent fact", "type": "work_fact"}], session="shared")
    assert body["rulesLoaded"] is False
