"""`l1_commit`'s decisions that need no database: which tombstones an update links to,
which new records are duplicates, and what a replacement inherits (version, timestamps,
closed task state). `apply.py` reads the stored state, asks these, and writes.

Pure: every input is a value (items from `validation`, stored records as plain objects
with `version`, `timestamps`, `type`, `task_state`, `updated_at`), so the rules are tested
without a database (tests/records/test_commit_plan.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apps.records.commit.validation import SOURCE_SUBAGENT, Item
from apps.records.normalize import content_key

CLOSED_STATES = ("done", "dropped")


def link_implicit(items: list[Item]) -> list[dict[str, Any]]:
    """SPEC §3.2: a batch with tombstone items, no `replaces` and exactly one new record
    links that record to the tombstones; with several new records nothing is linked (a
    warning says so). A tombstone with a reason (a forget request) is a deletion of its
    own and never linked. Sets `replaces` on the one record; returns the warnings."""
    new = [it for it in items if not it.tombstone]
    linkable = [it.record_id for it in items if it.tombstone and not it.reason]
    if not linkable or not new or any(it.replaces for it in new):
        return []
    if len(new) == 1:
        new[0].replaces = list(linkable)
        return []
    return [{
        "code": "unlinkedReplacement",
        "message": f"{len(linkable)} tombstone item(s) and {len(new)} new records but no 'replaces': nothing was linked and the new records start at version 1",
    }]


def mark_batch_duplicates(new: list[Item]) -> dict[str, int]:
    """Drop a record whose normalized content an earlier record of the batch already has;
    returns content key → index of the record that keeps it."""
    keys: dict[str, int] = {}
    for item in new:
        if item.drop:
            continue
        key = content_key(item.content)
        if key in keys:
            item.drop, item.drop_detail = "duplicate", {"duplicateOf": keys[key]}
            continue
        keys[key] = item.index
    return keys


def mark_live_duplicates(new: list[Item], live: dict[str, str]) -> None:
    """Drop a record whose content key a live record (not replaced in this batch) has."""
    for item in new:
        key = content_key(item.content)
        if not item.drop and key in live:
            item.drop, item.drop_detail = "duplicate", {"existingId": live[key]}


def replaced_by(new: list[Item]) -> dict[str, str]:
    """Old record id → the id of the stored record that replaces it."""
    return {old: it.record_id for it in new if not it.drop for old in it.replaces}


@dataclass
class Inherited:
    """What a stored record takes from the records it replaces."""

    version: int
    timestamps: list[str]
    task_state: str | None
    closed_state_kept: bool = False  # counted as taskStateDroppedOnReplace
    task_state_ignored: bool = False  # taskState on a non-task, counted as taskStateIgnored


def inherit(item: Item, replaced: list[Any], *, source: str, now_iso: str) -> Inherited:
    """Version = highest replaced + 1; timestamps = the union; a replaced `work_task` that
    was closed keeps the replacement closed unless it carries its own `taskState`."""
    version = max((r.version for r in replaced), default=0) + 1
    own = item.timestamps if source == SOURCE_SUBAGENT else [now_iso]
    timestamps = sorted(set(own).union(*(set(r.timestamps or []) for r in replaced)))
    state = item.raw.taskState
    if item.type != "work_task":
        return Inherited(version, timestamps, None, task_state_ignored=state is not None)
    if state is not None:
        return Inherited(version, timestamps, state)
    closed = sorted((r for r in replaced if r.type == "work_task" and r.task_state in CLOSED_STATES), key=lambda r: r.updated_at)
    if closed:
        return Inherited(version, timestamps, closed[-1].task_state, closed_state_kept=True)
    return Inherited(version, timestamps, "open")


@dataclass
class CommitPlan:
    """The batch's decisions before any write: links and what each stored record inherits."""

    replaced_by: dict[str, str]
    inherited: dict[int, Inherited]  # item index → inheritance
    warnings: list[dict[str, Any]]


def plan_commit(items: list[Item], existing: dict[str, Any], *, source: str, now_iso: str, warnings: list[dict[str, Any]]) -> CommitPlan:
    """Once drops and ids are decided: who replaces whom and what each stored record inherits."""
    new = [it for it in items if not it.tombstone and not it.drop]
    return CommitPlan(
        replaced_by=replaced_by(new),
        inherited={it.index: inherit(it, [existing[old] for old in it.replaces], source=source, now_iso=now_iso) for it in new},
        warnings=warnings,
    )
