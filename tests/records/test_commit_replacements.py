"""Tombstones and replacements in l1_commit (SPEC §1.2, §3.2 "Replacements")."""

from __future__ import annotations

import pytest

from apps.records.models import L1Change
from apps.search.models import IndexOp
from tests.records.conftest import CURSOR, fail, msg, rec, record, snapshot


@pytest.fixture
def rows(alice, l0):
    return l0(alice, msg(1, "first message about the deploy"), msg(2, "second message about the deploy"), msg(3, "third one"))


@pytest.fixture
def stored(worker_api, rows):
    def make(content: str, **extra) -> str:
        return worker_api.ok("l1_commit", records=[rec(content, **extra)], cursor=CURSOR)["stored"][0]

    return make


def test_tombstone_item_marks_the_record_deleted_in_place_and_keeps_history(worker_api, alice, stored):
    rid = stored("deploys go through the staging host")
    body = worker_api.ok("l1_commit", records=[{"id": rid, "deleted": True}], cursor=CURSOR)
    assert body["tombstoned"] == [rid] and body["stored"] == [None]
    row = record(alice, rid)
    assert row.deleted is True and row.content == "deploys go through the staging host"
    assert [c.action for c in L1Change.objects.filter(record=row)] == ["store", "tombstone"]
    event = alice.audit_events.filter(target_id=rid, action="l1_tombstone").get()
    assert event.before["deleted"] is False and event.after["deleted"] is True
    assert IndexOp.objects.filter(record_id=rid).last().op == "delete"


def test_tombstone_items_may_carry_the_full_old_record(worker_api, alice, stored):
    rid = stored("deploys go through the staging host")
    old = record(alice, rid).as_dict()
    for key in ("scene_name", "replacedBy", "scene_id"):
        old.pop(key)
    old["deleted"] = True
    assert worker_api.ok("l1_commit", records=[old], cursor=CURSOR)["tombstoned"] == [rid]


def test_replaces_links_versions_timestamps_and_replaced_by(worker_api, alice, stored):
    a = stored("deploys go through the staging host", sources=["m1"])
    b = stored("staging host is called stage-1", sources=["m2"])
    worker_api.ok("l1_commit", records=[{"id": a, "deleted": True}, rec("deploys go through staging", sources=["m1"])], cursor=CURSOR)
    a2 = record(alice, a).replaced_by
    assert record(alice, a2).version == 2
    body = worker_api.ok("l1_commit", records=[rec("deploys go through stage-1, the staging host", sources=["m3"], replaces=[a2, b])], cursor=CURSOR)
    merged = record(alice, body["stored"][0])
    assert merged.version == 3
    assert sorted(body["tombstoned"]) == sorted([a2, b])
    assert record(alice, a2).replaced_by == merged.record_id and record(alice, b).replaced_by == merged.record_id
    assert record(alice, b).deleted and record(alice, a2).deleted
    union = sorted(set(record(alice, a2).timestamps) | set(record(alice, b).timestamps) | set(merged.timestamps[-1:]))
    assert merged.timestamps == union and len(merged.timestamps) == 3
    assert L1Change.objects.filter(record=merged).get().note == {"replaces": [a2, b]}


def test_one_new_record_links_all_tombstone_items_of_the_batch(worker_api, alice, stored):
    a, b = stored("first fact to be merged here"), stored("second fact to be merged here")
    body = worker_api.ok("l1_commit", records=[{"id": a, "deleted": True}, {"id": b, "deleted": True}, rec("merged fact of first and second")], cursor=CURSOR)
    new = body["stored"][2]
    assert record(alice, a).replaced_by == new and record(alice, b).replaced_by == new
    assert record(alice, new).version == 2 and body["warnings"] == []


def test_tombstones_with_several_new_records_and_no_replaces_are_not_linked(worker_api, alice, stored):
    a = stored("first fact to be tombstoned")
    body = worker_api.ok("l1_commit", records=[{"id": a, "deleted": True}, rec("new fact number one here"), rec("new fact number two here")], cursor=CURSOR)
    assert record(alice, a).deleted and record(alice, a).replaced_by == ""
    assert {record(alice, rid).version for rid in body["stored"][1:]} == {1}
    assert [w["code"] for w in body["warnings"]] == ["unlinkedReplacement"]


def test_closed_task_state_is_kept_on_a_replacement_that_omits_it(worker_api, alice, stored):
    task = stored("write the release notes for 1.0", type="work_task", taskState="done")
    body = worker_api.ok("l1_commit", records=[{"id": task, "deleted": True}, rec("write the release notes for 1.0 and 1.1", type="work_task")], cursor=CURSOR)
    assert record(alice, body["stored"][1]).task_state == "done"
    assert body["taskStateDroppedOnReplace"] == 1


def test_a_replacement_carrying_a_task_state_is_not_counted(worker_api, alice, stored):
    task = stored("write the release notes for 1.0", type="work_task", taskState="dropped")
    body = worker_api.ok("l1_commit", records=[rec("write the release notes for 1.0 and 1.1", type="work_task", taskState="dropped", replaces=[task])], cursor=CURSOR)
    assert body["taskStateDroppedOnReplace"] == 0 and record(alice, body["stored"][0]).task_state == "dropped"


def test_a_dropped_replacement_leaves_its_replaced_records_live(worker_api, alice, stored):
    a = stored("first fact to be replaced")
    body = worker_api.ok("l1_commit", records=[rec("tiny", replaces=[a])], cursor=CURSOR)
    assert body["stored"] == [None] and body["tombstoned"] == []
    assert record(alice, a).deleted is False


@pytest.mark.parametrize("kind", ["tombstone", "replaces"])
def test_unknown_foreign_or_tombstoned_targets_are_not_found_and_change_nothing(worker_api, alice, bob, make_api, l0, stored, kind):
    l0(bob, msg(1, "bob's own message about things"))
    bobs = make_api(bob, "worker").ok("l1_commit", records=[rec("bob has a record of his own")], cursor=CURSOR)["stored"][0]
    gone = stored("a record that is already gone")
    worker_api.ok("l1_commit", records=[{"id": gone, "deleted": True}], cursor=CURSOR)
    live = stored("a live record of alice here")
    for target in ("l1_1767000000000_zzzz", bobs, gone):
        before = snapshot(alice)
        items = [{"id": live, "deleted": True}]
        items += [{"id": target, "deleted": True}] if kind == "tombstone" else [rec("a replacement of something", replaces=[target])]
        error = fail(worker_api, "l1_commit", 404, "not_found", records=items, cursor='{"version":2,"files":{"q.jsonl":1}}')
        assert error["details"][0]["field"] == ("records.1.id" if kind == "tombstone" else "records.1.replaces")
        assert snapshot(alice) == before
    assert record(bob, bobs).deleted is False


def test_a_record_cannot_be_replaced_twice_in_one_batch(worker_api, stored):
    a = stored("first fact to be replaced")
    error = fail(worker_api, "l1_commit", 400, "invalid_params", records=[rec("replacement one is here", replaces=[a]), rec("replacement two is here", replaces=[a])], cursor=CURSOR)
    assert error["details"][0]["field"] == "records.1.replaces"


def test_tombstone_item_needs_an_id(worker_api, rows):
    error = fail(worker_api, "l1_commit", 400, "invalid_params", records=[{"deleted": True}], cursor=CURSOR)
    assert error["details"][0]["field"] == "records.0.id"


def test_main_agent_cannot_tombstone_or_replace(agent_api, alice, stored):
    a = stored("a record the agent would like gone")
    before = snapshot(alice)
    fail(agent_api, "l1_commit", 400, "invalid_params", source="main-agent", records=[{"id": a, "deleted": True}])
    fail(agent_api, "l1_commit", 400, "invalid_params", source="main-agent", records=[{"content": "replace it with this", "type": "work_fact", "replaces": [a]}])
    assert snapshot(alice) == before


def test_a_tombstone_item_keeps_its_reason_in_metadata_and_the_change_note(worker_api, alice, stored):
    from apps.hitstats.models import RecordHits

    rid = stored("the user's ex is called Jordan and lives in Porto")
    RecordHits.objects.create(profile=alice, record_id=rid, hits=12)  # high-value: the user's word still applies
    body = worker_api.ok("l1_commit", records=[{"id": rid, "deleted": True, "reason": "user-forget"}], cursor=CURSOR)
    assert body["tombstoned"] == [rid]
    row = record(alice, rid)
    assert row.deleted and row.metadata["tombstoneReason"] == "user-forget"
    change = L1Change.objects.filter(record=row).last()
    assert change.action == "tombstone" and change.note["reason"] == "user-forget"
    assert alice.audit_events.filter(target_id=rid, action="l1_tombstone").get().note["reason"] == "user-forget"


def test_a_tombstone_reason_is_bounded_and_only_for_tombstone_items(worker_api, alice, stored):
    rid = stored("deploys go through the staging host")
    before = snapshot(alice)
    error = fail(worker_api, "l1_commit", 400, "invalid_params", records=[{"id": rid, "deleted": True, "reason": "x" * 201}], cursor=CURSOR)
    assert "records.0.reason" in error["message"]
    error = fail(worker_api, "l1_commit", 400, "invalid_params", records=[rec("deploys go to canary first", reason="user-forget")], cursor=CURSOR)
    assert error["details"][0]["field"] == "records.0.reason"
    assert snapshot(alice) == before


def test_a_tombstone_with_a_reason_is_never_linked_to_the_batch_s_one_new_record(worker_api, alice, stored):
    forgotten = stored("the user's ex is called Jordan")
    body = worker_api.ok("l1_commit", records=[{"id": forgotten, "deleted": True, "reason": "user-forget"}, rec("deploys go to canary first")], cursor=CURSOR)
    new = record(alice, body["stored"][1])
    assert new.version == 1 and record(alice, forgotten).replaced_by == ""
    assert not any(w.get("code") == "unlinkedReplacement" for w in body["warnings"])
