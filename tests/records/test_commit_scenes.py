"""Scene attribution in l1_commit and the scene pool listing (SPEC §1.3, §3.2, §3.3)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.records.models import L1Change
from apps.scenes.models import SceneEntry
from tests.records.conftest import CURSOR, fail, msg, rec, record, snapshot


@pytest.fixture
def rows(alice, l0):
    return l0(alice, msg(1, "talking about builds and releases of memoryweb"))


def new_scene(name: str, reason: str = "a topic the pool does not have yet") -> dict:
    return {"new_scene_name": name, "new_scene_reason": reason}


def test_new_scene_names_register_sequential_ids_and_are_stripped(worker_api, alice, rows):
    body = worker_api.ok("l1_commit", records=[
        rec("builds use pnpm workspaces", **new_scene("memoryweb｜构建")),
        rec("releases are tagged from main", **new_scene("memoryweb｜发布")),
        rec("builds cache the node modules", **new_scene("memoryweb｜构建")),
    ], cursor=CURSOR)
    first, second, third = (record(alice, rid) for rid in body["stored"])
    assert (first.scene.scene_id, second.scene.scene_id, third.scene.scene_id) == ("sc0001", "sc0002", "sc0001")
    assert first.scene_name == "memoryweb｜构建"
    state = first.as_dict()
    assert "new_scene_name" not in state and "new_scene_reason" not in state and "new_scene_name" not in state["metadata"]
    entry = SceneEntry.objects.get(profile=alice, scene_id="sc0001")
    assert entry.use_count == 2 and entry.last_used_at is not None and entry.reason
    assert SceneEntry.objects.get(profile=alice, scene_id="sc0002").use_count == 1
    assert alice.audit_events.filter(action="scene_register").count() == 2


def test_new_scene_name_reuses_a_scene_matching_by_name_or_alias(worker_api, alice, rows):
    SceneEntry.objects.create(profile=alice, scene_id="sc0007", name="memoryweb｜构建", aliases=["mw｜build"])
    body = worker_api.ok("l1_commit", records=[
        rec("builds use pnpm workspaces", **new_scene("memoryweb | 构建")),
        rec("builds cache node modules", **new_scene("MW｜Build")),
    ], cursor=CURSOR)
    assert {record(alice, rid).scene.scene_id for rid in body["stored"]} == {"sc0007"}
    assert SceneEntry.objects.filter(profile=alice).count() == 1


def test_scene_id_is_honoured_and_merged_ids_resolve_to_the_survivor(worker_api, alice, rows):
    survivor = SceneEntry.objects.create(profile=alice, scene_id="sc0002", name="memoryweb｜构建")
    SceneEntry.objects.create(profile=alice, scene_id="sc0001", name="mw｜build", merged_into=survivor)
    body = worker_api.ok("l1_commit", records=[rec("builds use pnpm workspaces", scene_id="sc0001", scene_name="ignored name")], cursor=CURSOR)
    stored = record(alice, body["stored"][0])
    assert stored.scene.scene_id == "sc0002" and stored.scene_name == "memoryweb｜构建"
    survivor.refresh_from_db()
    assert survivor.use_count == 1


def test_unknown_scene_id_is_invalid_and_changes_nothing(worker_api, alice, rows):
    before = snapshot(alice)
    error = fail(worker_api, "l1_commit", 400, "invalid_params", records=[rec("good fact", **new_scene("memoryweb｜构建")), rec("builds use pnpm workspaces", scene_id="sc0099")], cursor=CURSOR)
    assert error["details"][0]["field"] == "records.1.scene_id"
    assert snapshot(alice) == before


def test_no_scene_goes_to_unclassified_with_fallback_flag_and_warning(worker_api, alice, rows):
    body = worker_api.ok("l1_commit", records=[rec("a fact whose scene is unclear")], cursor=CURSOR)
    stored = record(alice, body["stored"][0])
    assert stored.scene.scene_id == "unclassified" and stored.metadata["sceneFallback"] is True
    assert [w["index"] for w in body["sceneWarns"]] == [0]


def test_subagent_scene_name_matches_but_never_registers(worker_api, alice, rows):
    SceneEntry.objects.create(profile=alice, scene_id="sc0001", name="memoryweb｜构建")
    body = worker_api.ok("l1_commit", records=[rec("builds use pnpm workspaces", scene_name="memoryweb｜构建"), rec("unknown scene name here", scene_name="nope｜x")], cursor=CURSOR)
    assert record(alice, body["stored"][0]).scene.scene_id == "sc0001"
    assert record(alice, body["stored"][1]).scene.scene_id == "unclassified"
    assert SceneEntry.objects.filter(profile=alice, name="nope｜x").count() == 0
    assert [w["index"] for w in body["sceneWarns"]] == [1]


def test_a_scene_name_with_a_date_is_registered_with_a_warning(worker_api, alice, rows):
    body = worker_api.ok("l1_commit", records=[rec("builds use pnpm workspaces", **new_scene("memoryweb｜2026-11-29 构建"))], cursor=CURSOR)
    assert body["stored"][0] and "date" in body["sceneWarns"][0]["message"]


def test_client_server_managed_metadata_is_overwritten(worker_api, alice, rows):
    body = worker_api.ok("l1_commit", records=[rec("metadata tries to fake fields", scene_id=None, metadata={"scope": "global", "sceneFallback": False, "projectSource": "l0-evidence", "keep": 1}, **new_scene("memoryweb｜构建"))], cursor=CURSOR)
    meta = record(alice, body["stored"][0]).metadata
    assert meta == {"scope": "global", "project": "", "keep": 1}
    assert L1Change.objects.filter(record__record_id=body["stored"][0]).count() == 1


# --- list_l1_scenes -------------------------------------------------------------------


def test_list_scenes_hides_merged_stale_and_reserved_and_orders_by_recency(agent_api, alice):
    now = timezone.now()
    old = SceneEntry.objects.create(profile=alice, scene_id="sc0001", name="a｜old", last_used_at=now - timedelta(days=61))
    SceneEntry.objects.filter(pk=old.pk).update(created_at=now - timedelta(days=90))
    survivor = SceneEntry.objects.create(profile=alice, scene_id="sc0002", name="a｜survivor", last_used_at=now - timedelta(days=3), use_count=4, cwd="/w")
    SceneEntry.objects.create(profile=alice, scene_id="sc0003", name="a｜merged", merged_into=survivor, last_used_at=now)
    SceneEntry.objects.create(profile=alice, scene_id="sc0004", name="a｜fresh", last_used_at=now - timedelta(hours=1))
    SceneEntry.objects.create(profile=alice, scene_id="unclassified", name="unclassified", reserved=True, last_used_at=now)
    body = agent_api.ok("list_l1_scenes")
    assert [s["id"] for s in body["scenes"]] == ["sc0004", "sc0002"]
    assert body["returned"] == 2 and "60 days" in body["note"]
    assert set(body["scenes"][1]) == {"id", "name", "cwd", "lastUsedAt", "useCount"}
    assert body["scenes"][1]["useCount"] == 4 and body["scenes"][1]["cwd"] == "/w"
    assert agent_api.ok("list_l1_scenes", limit=1)["returned"] == 1


def test_list_scenes_puts_the_sessions_project_first(agent_api, alice, l0):
    now = timezone.now()
    alice.known_projects = ["C:/dev/B"]
    alice.save()
    l0(alice, msg(1, r"edit C:\dev\B\src\a.ts please", session="sB"), msg(2, "and /c/dev/B/src/b.ts", session="sB"))
    SceneEntry.objects.create(profile=alice, scene_id="sc0001", name="B｜build", project="C:/dev/B", last_used_at=now - timedelta(days=5))
    SceneEntry.objects.create(profile=alice, scene_id="sc0002", name="A｜build", project="/home/a", last_used_at=now)
    assert [s["id"] for s in agent_api.ok("list_l1_scenes", session="sB")["scenes"]] == ["sc0001", "sc0002"]
    assert [s["id"] for s in agent_api.ok("list_l1_scenes")["scenes"]] == ["sc0002", "sc0001"]
    assert [s["id"] for s in agent_api.ok("list_l1_scenes", cwd=r"c:\dev\b\x")["scenes"]] == ["sc0001", "sc0002"]


def test_list_scenes_limit_is_bounded(agent_api):
    fail(agent_api, "list_l1_scenes", 400, "invalid_params", limit=0)
    fail(agent_api, "list_l1_scenes", 400, "invalid_params", limit=201)


def test_merge_makes_the_old_id_and_name_answer_with_the_survivor(worker_api, alice, rows):
    from apps.scenes.pool import scene_merge

    body = worker_api.ok("l1_commit", records=[
        rec("builds use pnpm workspaces", **new_scene("memoryweb｜构建")),
        rec("builds are reproducible now", **new_scene("memoryweb｜build")),
    ], cursor=CURSOR)
    survivor = scene_merge(profile=alice, source_id="sc0002", target_id="sc0001", actor="user:ann")
    assert survivor.aliases == ["memoryweb｜build"] and survivor.use_count == 2
    later = worker_api.ok("l1_commit", records=[
        rec("builds cache node modules", scene_id="sc0002"),
        rec("builds run on two cores", **new_scene("memoryweb｜build")),
    ], cursor=CURSOR)
    assert {record(alice, rid).scene.scene_id for rid in later["stored"]} == {"sc0001"}
    assert record(alice, body["stored"][1]).scene.scene_id == "sc0002"  # history is not rewritten
    assert [s["id"] for s in worker_api.ok("list_l1_scenes")["scenes"]] == ["sc0001"]
    assert alice.audit_events.filter(action="scene_merge", target_id="sc0002").exists()


def test_merge_refuses_reserved_self_and_repeated_merges(worker_api, alice, rows):
    from apps.scenes.pool import scene_merge
    from apps.tools.errors import Conflict, NotFound

    worker_api.ok("l1_commit", records=[rec("an unclassified record here"), rec("builds use pnpm workspaces", **new_scene("a｜b")), rec("releases are tagged", **new_scene("a｜c"))], cursor=CURSOR)
    for source, target, error in [("unclassified", "sc0001", Conflict), ("sc0001", "sc0001", Conflict), ("sc0009", "sc0001", NotFound), ("sc0001", "sc0009", NotFound)]:
        with pytest.raises(error):
            scene_merge(profile=alice, source_id=source, target_id=target, actor="user:ann")
    scene_merge(profile=alice, source_id="sc0002", target_id="sc0001", actor="user:ann")
    with pytest.raises(Conflict):
        scene_merge(profile=alice, source_id="sc0002", target_id="sc0001", actor="user:ann")


def test_list_scenes_default_limit_and_stale_days_follow_the_profile_settings(agent_api, alice):
    now = timezone.now()
    for i in range(1, 5):
        SceneEntry.objects.create(profile=alice, scene_id=f"sc000{i}", name=f"a｜t{i}", last_used_at=now - timedelta(days=i * 10))
    alice.settings = {"scenePool.listLimit": 2, "scenePool.staleDays": 25}
    alice.save()
    body = agent_api.ok("list_l1_scenes")
    assert [s["id"] for s in body["scenes"]] == ["sc0001", "sc0002"] and "25 days" in body["note"]
    assert [s["id"] for s in agent_api.ok("list_l1_scenes", limit=50)["scenes"]] == ["sc0001", "sc0002"]
    alice.settings = {"scenePool.listLimit": 1}
    alice.save()
    assert agent_api.ok("list_l1_scenes")["returned"] == 1
    assert agent_api.ok("list_l1_scenes", limit=3)["returned"] == 3
