"""The pure part of l1_commit (apps/records/commit/plan.py), without a database: implicit
links, duplicates within the batch and against live records, and what a replacement
inherits."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

from apps.records.commit.plan import (
    inherit,
    link_implicit,
    mark_batch_duplicates,
    mark_live_duplicates,
    plan_commit,
)
from apps.records.commit.validation import SOURCE_MAIN, SOURCE_SUBAGENT, Item
from apps.records.normalize import content_key
from apps.records.schemas import CommitRecordIn


def new(index, content, *, type="work_fact", task_state=None, replaces=(), timestamps=(), record_id=""):
    raw = CommitRecordIn(content=content, type=type, taskState=task_state)
    return Item(index=index, raw=raw, tombstone=False, type=type, content=content, replaces=list(replaces),
                timestamps=list(timestamps), record_id=record_id)


def gone(index, record_id, reason=None):
    return Item(index=index, raw=CommitRecordIn(id=record_id, deleted=True), tombstone=True, record_id=record_id, reason=reason)


def stored(version=1, timestamps=(), type="work_fact", task_state=None, day=1):
    return SimpleNamespace(version=version, timestamps=list(timestamps), type=type, task_state=task_state,
                           updated_at=datetime(2026, 11, day, tzinfo=UTC))


def test_one_new_record_is_linked_to_the_reasonless_tombstones_only():
    items = [gone(0, "l1_a"), gone(1, "l1_b", reason="user-forget"), new(2, "the port is 5433")]
    assert link_implicit(items) == []
    assert items[2].replaces == ["l1_a"]


def test_several_new_records_are_not_linked_and_say_so():
    items = [gone(0, "l1_a"), new(1, "one"), new(2, "two")]
    warnings = link_implicit(items)
    assert [w["code"] for w in warnings] == ["unlinkedReplacement"] and items[1].replaces == items[2].replaces == []


def test_explicit_replaces_or_only_forget_tombstones_link_nothing():
    explicit = [gone(0, "l1_a"), new(1, "x", replaces=["l1_c"])]
    assert link_implicit(explicit) == [] and explicit[1].replaces == ["l1_c"]
    forget = [gone(0, "l1_a", reason="user-forget"), new(1, "x"), new(2, "y")]
    assert link_implicit(forget) == []


def test_duplicates_in_the_batch_and_against_live_records_are_dropped():
    items = [new(0, "Deploys go through staging."), new(1, "deploys go through  staging"), new(2, "Redis caches sessions.")]
    keys = mark_batch_duplicates(items)
    assert items[1].drop == "duplicate" and items[1].drop_detail == {"duplicateOf": 0}
    assert set(keys.values()) == {0, 2}
    mark_live_duplicates(items, {content_key("Redis caches sessions."): "l1_live"})
    assert items[2].drop == "duplicate" and items[2].drop_detail == {"existingId": "l1_live"} and items[0].drop is None


def test_a_replacement_takes_the_next_version_and_the_union_of_timestamps():
    item = new(0, "port 5433", timestamps=["2026-11-03T10:00:00.000Z"])
    got = inherit(item, [stored(2, ["2026-11-01T09:00:00.000Z"]), stored(4, ["2026-11-03T10:00:00.000Z"])], source=SOURCE_SUBAGENT, now_iso="x")
    assert got.version == 5 and got.timestamps == ["2026-11-01T09:00:00.000Z", "2026-11-03T10:00:00.000Z"]
    main = inherit(new(0, "a fact"), [], source=SOURCE_MAIN, now_iso="2026-12-01T08:00:00.000Z")
    assert main.version == 1 and main.timestamps == ["2026-12-01T08:00:00.000Z"] and main.task_state is None


def test_a_closed_task_stays_closed_unless_the_replacement_says_otherwise():
    closed = [stored(type="work_task", task_state="dropped", day=1), stored(type="work_task", task_state="done", day=5)]
    kept = inherit(new(0, "write the guide", type="work_task"), closed, source=SOURCE_SUBAGENT, now_iso="x")
    assert kept.task_state == "done" and kept.closed_state_kept
    reopened = inherit(new(0, "write the guide", type="work_task", task_state="open"), closed, source=SOURCE_SUBAGENT, now_iso="x")
    assert reopened.task_state == "open" and not reopened.closed_state_kept
    fresh = inherit(new(0, "write the guide", type="work_task"), [], source=SOURCE_SUBAGENT, now_iso="x")
    assert fresh.task_state == "open"
    ignored = inherit(new(0, "a fact", task_state="done"), [], source=SOURCE_SUBAGENT, now_iso="x")
    assert ignored.task_state is None and ignored.task_state_ignored


def test_the_plan_names_who_replaces_whom_for_stored_records_only():
    keep = new(1, "port 5433", replaces=["l1_old"], record_id="l1_new")
    dropped = new(2, "dup", replaces=["l1_other"], record_id="l1_x")
    dropped.drop = "duplicate"
    plan = plan_commit([gone(0, "l1_old"), keep, dropped], {"l1_old": stored(3), "l1_other": stored(1)},
                       source=SOURCE_SUBAGENT, now_iso="x", warnings=[])
    assert plan.replaced_by == {"l1_old": "l1_new"} and set(plan.inherited) == {1} and plan.inherited[1].version == 4
