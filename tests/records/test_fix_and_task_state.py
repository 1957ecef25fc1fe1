"""l1_fix (SPEC §3.5), l1_task_state (§3.6), restore and history services."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.hitstats.models import RecordHits
from apps.records.models import L1Change
from apps.records.selectors import record_history, record_lineage
from apps.records.services import (
    record_fix,
    record_restore_version,
    record_set_task_state,
)
from apps.scenes.models import SceneBlock, SceneBlockMember
from apps.search.models import IndexOp
from apps.tools.errors import Conflict, NotFound
from tests.records.conftest import CURSOR, fail, msg, rec, record, snapshot

EVIDENCE = "the user said on 2026-11-29 that staging was retired"


@pytest.fixture
def stored(worker_api, alice, l0):
    l0(alice, msg(1, "message one about staging"), msg(2, "message two"))

    def make(content: str, **extra) -> str:
        return worker_api.ok("l1_commit", records=[rec(content, new_scene_name="ops｜deploy", new_scene_reason="deploy topic", **extra)], cursor=CURSOR)["stored"][0]

    return make


def test_rewrite_creates_a_new_version_and_tombstones_the_old(agent_api, alice, stored):
    old = stored("deploys go through the staging host", sources=["m1", "m2"])
    body = agent_api.ok("l1_fix", recordId=old, action="rewrite", newContent="deploys go straight to production now", evidence=EVIDENCE, reason="staging retired", priority=85)
    assert set(body) == {"success", "action", "recordId", "newRecordId", "audit"} and body["success"] is True
    new_id = body["newRecordId"]
    old_row, new_row = record(alice, old), record(alice, new_id)
    assert old_row.deleted and old_row.replaced_by == new_id and old_row.content == "deploys go through the staging host"
    assert new_row.version == 2 and new_row.priority == 85 and new_row.scene_id == old_row.scene_id
    assert new_row.source_message_ids == ["m1", "m2"] and new_row.timestamps == old_row.timestamps and new_row.metadata == old_row.metadata
    audit = body["audit"]
    assert audit["evidence"] == EVIDENCE and audit["reason"] == "staging retired" and audit["by"].startswith("token:")
    history = record_history(profile=alice, record_id=old)
    assert [h["action"] for h in history] == ["store", "fix"] and history[-1]["note"]["audit"]["evidence"] == EVIDENCE
    assert [op.op for op in IndexOp.objects.filter(record_id__in=[old, new_id]).order_by("id")][-2:] == ["upsert", "delete"]
    assert record_lineage(profile=alice, record_id=new_id)["replaces"] == [old]


def test_tombstone_only_tombstones(agent_api, alice, stored):
    rid = stored("deploys go through the staging host")
    body = agent_api.ok("l1_fix", recordId=rid, action="tombstone", evidence=EVIDENCE)
    assert body["action"] == "tombstone" and "newRecordId" not in body
    assert record(alice, rid).deleted and alice.l1_records.count() == 1


def test_guard_order_not_found_first(agent_api, alice, stored):
    fail(agent_api, "l1_fix", 404, "not_found", recordId="l1_1767000000000_none", action="tombstone", evidence="short")
    rid = stored("deploys go through the staging host")
    agent_api.ok("l1_fix", recordId=rid, action="tombstone", evidence=EVIDENCE)
    fail(agent_api, "l1_fix", 404, "not_found", recordId=rid, action="tombstone", evidence="short")


def test_evidence_needs_the_minimum_length_before_debounce(agent_api, alice, stored):
    rid = stored("deploys go through the staging host")
    before = snapshot(alice)
    error = fail(agent_api, "l1_fix", 400, "invalid_params", recordId=rid, action="tombstone", evidence="x" * 19)
    assert error["details"][0]["field"] == "evidence"
    assert snapshot(alice) == before


def test_a_user_who_corrects_the_same_fact_twice_in_a_day_gets_both_corrections(agent_api, alice, stored):
    # The debounce counts one record id: the record a rewrite creates starts with none.
    rid = stored("deploys go through the staging host")
    second = agent_api.ok("l1_fix", recordId=rid, action="rewrite", newContent="deploys go to production directly", evidence=EVIDENCE)["newRecordId"]
    third = agent_api.ok("l1_fix", recordId=second, action="rewrite", newContent="deploys go to canary first, then production", evidence=EVIDENCE)["newRecordId"]
    assert record(alice, second).deleted and record(alice, second).replaced_by == third
    assert record(alice, third).version == 3 and not record(alice, third).deleted
    agent_api.ok("l1_fix", recordId=third, action="tombstone", evidence=EVIDENCE)


def test_a_second_fix_of_the_same_record_id_within_the_debounce_is_refused(agent_api, alice, stored):
    rid = stored("deploys go through the staging host")
    agent_api.ok("l1_fix", recordId=rid, action="tombstone", evidence=EVIDENCE)
    first_state = record_history(profile=alice, record_id=rid)[0]["changeId"]
    record_restore_version(profile=alice, record_id=rid, change_id=first_state, actor="user:ann")  # live again, same id
    before = snapshot(alice)
    error = fail(agent_api, "l1_fix", 409, "conflict", recordId=rid, action="rewrite", newContent="deploys go to canary first", evidence=EVIDENCE)
    assert "24" in error["message"] and error["details"]["recordId"] == rid
    assert snapshot(alice) == before
    L1Change.objects.filter(record__record_id=rid, action="fix").update(created_at=timezone.now() - timedelta(hours=25))
    agent_api.ok("l1_fix", recordId=rid, action="rewrite", newContent="deploys go to canary first", evidence=EVIDENCE)


def test_debounce_comes_before_high_value(agent_api, alice, stored):
    rid = stored("deploys go through the staging host")
    agent_api.ok("l1_fix", recordId=rid, action="tombstone", evidence=EVIDENCE)
    record_restore_version(profile=alice, record_id=rid, change_id=record_history(profile=alice, record_id=rid)[0]["changeId"], actor="user:ann")
    RecordHits.objects.create(profile=alice, record_id=rid, hits=9)
    assert "fixed at" in fail(agent_api, "l1_fix", 409, "conflict", recordId=rid, action="tombstone", evidence=EVIDENCE)["message"]


def test_high_value_by_hits_is_refused_unless_an_admin_forces(agent_api, admin_api, alice, stored):
    rid = stored("deploys go through the staging host")
    RecordHits.objects.create(profile=alice, record_id=rid, hits=5)
    before = snapshot(alice)
    assert "high-value" in fail(agent_api, "l1_fix", 409, "conflict", recordId=rid, action="tombstone", evidence=EVIDENCE)["message"]
    fail(agent_api, "l1_fix", 403, "forbidden", recordId=rid, action="tombstone", evidence=EVIDENCE, force=True)
    assert snapshot(alice) == before
    body = admin_api.ok("l1_fix", recordId=rid, action="tombstone", evidence=EVIDENCE, force=True)
    assert body["audit"]["forced"] is True and record(alice, rid).deleted


def test_four_hits_are_not_high_value(agent_api, alice, stored):
    rid = stored("deploys go through the staging host")
    RecordHits.objects.create(profile=alice, record_id=rid, hits=4)
    agent_api.ok("l1_fix", recordId=rid, action="tombstone", evidence=EVIDENCE)


def test_scene_block_membership_is_high_value_unless_the_block_was_removed(agent_api, alice, stored):
    rid, other = stored("deploys go through the staging host"), stored("rollbacks use the previous image tag")
    now = timezone.now()
    live = SceneBlock.objects.create(profile=alice, filename="ops.md", meta_created=now, meta_updated=now)
    gone = SceneBlock.objects.create(profile=alice, filename="old.md", meta_created=now, meta_updated=now, removed=True)
    SceneBlockMember.objects.create(block=live, profile=alice, record_id=rid)
    SceneBlockMember.objects.create(block=gone, profile=alice, record_id=other)
    fail(agent_api, "l1_fix", 409, "conflict", recordId=rid, action="tombstone", evidence=EVIDENCE)
    agent_api.ok("l1_fix", recordId=other, action="tombstone", evidence=EVIDENCE)


@pytest.mark.parametrize(
    "params, field",
    [
        ({"action": "rewrite"}, "newContent"),
        ({"action": "rewrite", "newContent": "abc"}, "newContent"),
        ({"action": "tombstone", "newContent": "some new content here"}, "newContent"),
        ({"action": "rewrite", "newContent": "some new content here", "priority": 101}, "priority"),
        ({"action": "erase"}, "action"),
    ],
)
def test_fix_parameter_errors_change_nothing(agent_api, alice, stored, params, field):
    rid = stored("deploys go through the staging host")
    before = snapshot(alice)
    error = fail(agent_api, "l1_fix", 400, "invalid_params", recordId=rid, evidence=EVIDENCE, **params)
    assert field in error["details"][0]["field"]
    assert snapshot(alice) == before


def test_rewrite_into_a_live_duplicate_is_a_conflict(agent_api, alice, stored):
    rid, other = stored("deploys go through the staging host"), stored("rollbacks use the previous image tag")
    error = fail(agent_api, "l1_fix", 409, "conflict", recordId=rid, action="rewrite", newContent="Rollbacks use the previous image tag.", evidence=EVIDENCE)
    assert not record(alice, rid).deleted and error["details"]["duplicateOf"] == other


def test_dashboard_service_uses_the_same_guards(alice, stored):
    rid = stored("deploys go through the staging host")
    RecordHits.objects.create(profile=alice, record_id=rid, hits=7)
    with pytest.raises(Conflict):
        record_fix(profile=alice, record_id=rid, action="tombstone", evidence=EVIDENCE, actor="user:ann")
    record_fix(profile=alice, record_id=rid, action="tombstone", evidence=EVIDENCE, actor="user:ann", force=True, is_admin=True)
    assert record(alice, rid).deleted


# --- l1_task_state --------------------------------------------------------------------


def test_task_state_applies_in_place_with_partial_failures(agent_api, alice, stored):
    task = stored("write the release notes for 1.0", type="work_task")
    done = stored("tag the 1.0 release on main", type="work_task", taskState="done")
    fact = stored("releases are tagged on main")
    gone = stored("an abandoned task for the test", type="work_task")
    agent_api.ok("l1_fix", recordId=gone, action="tombstone", evidence=EVIDENCE)
    before_row = record(alice, task)
    body = agent_api.ok("l1_task_state", ids=[task, done, fact, gone, "l1_1767000000000_nope", task], state="done", reason="shipped")
    assert body["applied"] == [task] and body["unchanged"] == [done]
    assert {f["id"]: f["reason"] for f in body["failed"]} == {fact: "not a work_task (type work_fact)", gone: "tombstoned", "l1_1767000000000_nope": "not_found"}
    after_row = record(alice, task)
    assert after_row.task_state == "done" and after_row.content == before_row.content and after_row.version == before_row.version
    [entry] = after_row.metadata["taskStateChange"]
    assert entry["from"] == "open" and entry["to"] == "done" and entry["reason"] == "shipped"
    assert IndexOp.objects.filter(record_id=task).last().op == "payload"
    assert [h["action"] for h in record_history(profile=alice, record_id=task)] == ["store", "task_state"]


def test_task_state_is_idempotent_and_keeps_a_history_of_reasons(agent_api, alice, stored):
    task = stored("write the release notes for 1.0", type="work_task")
    agent_api.ok("l1_task_state", ids=[task], state="dropped", reason="not needed")
    changes = L1Change.objects.filter(record__record_id=task).count()
    assert agent_api.ok("l1_task_state", ids=[task], state="dropped")["unchanged"] == [task]
    assert L1Change.objects.filter(record__record_id=task).count() == changes
    agent_api.ok("l1_task_state", ids=[task], state="open", reason="needed after all")
    history = record(alice, task).metadata["taskStateChange"]
    assert [(h["from"], h["to"], h["reason"]) for h in history] == [("open", "dropped", "not needed"), ("dropped", "open", "needed after all")]


def test_task_state_parameters_are_validated(agent_api):
    fail(agent_api, "l1_task_state", 400, "invalid_params", ids=[], state="done")
    fail(agent_api, "l1_task_state", 400, "invalid_params", ids=["x"], state="finished")


def test_task_state_service_rejects_empty_ids(alice):
    from apps.tools.errors import InvalidParams

    with pytest.raises(InvalidParams):
        record_set_task_state(profile=alice, ids=[], state="done", actor="user:ann")


# --- restore and history --------------------------------------------------------------


def test_restore_version_brings_back_an_earlier_state_as_a_new_change(agent_api, alice, stored):
    task = stored("write the release notes for 1.0", type="work_task")
    agent_api.ok("l1_task_state", ids=[task], state="done")
    agent_api.ok("l1_fix", recordId=task, action="tombstone", evidence=EVIDENCE)
    first = record_history(profile=alice, record_id=task)[0]
    body = record_restore_version(profile=alice, record_id=task, change_id=first["changeId"], actor="user:ann")
    row = record(alice, task)
    assert body["success"] and row.deleted is False and row.task_state == "open"
    history = record_history(profile=alice, record_id=task)
    assert [h["action"] for h in history] == ["store", "task_state", "fix", "restore"]
    assert history[-1]["note"] == {"restoredChange": first["changeId"]}
    assert IndexOp.objects.filter(record_id=task).last().op == "upsert"
    assert alice.audit_events.filter(target_id=task, action="l1_restore", actor="user:ann").exists()


def test_restore_rejects_a_change_of_another_record_or_profile(alice, bob, stored):
    a, b = stored("first record for restore"), stored("second record for restore")
    change_b = record_history(profile=alice, record_id=b)[0]["changeId"]
    with pytest.raises(NotFound):
        record_restore_version(profile=alice, record_id=a, change_id=change_b, actor="user:ann")
    with pytest.raises(NotFound):
        record_restore_version(profile=bob, record_id=a, change_id=change_b, actor="user:ann")
    with pytest.raises(NotFound):
        record_history(profile=bob, record_id=a)


def test_a_rewrite_of_a_record_in_a_merged_away_scene_lands_in_the_survivor(agent_api, alice, stored):
    from apps.scenes.models import SceneEntry
    from apps.scenes.pool import scene_merge

    old = stored("deploys go through the staging host")
    worker_scene = record(alice, old).scene
    target = SceneEntry.objects.create(profile=alice, scene_id="sc0099", name="ops｜release")
    scene_merge(profile=alice, source_id=worker_scene.scene_id, target_id=target.scene_id, actor="test")
    survivor = SceneEntry.objects.get(pk=target.pk)
    new_id = agent_api.ok("l1_fix", recordId=old, action="rewrite", newContent="deploys go straight to production now", evidence=EVIDENCE)["newRecordId"]
    new_row = record(alice, new_id)
    assert new_row.scene_id == survivor.pk and new_row.scene_name == "ops｜release"
    assert new_row.as_dict()["scene_id"] == "sc0099"
