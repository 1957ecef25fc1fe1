"""What the dashboard adds to the owners' reads for people: diffs between consecutive
states. Pure functions over what the selectors return (no queries)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apps.dashboard.diffs import line_diff, word_diff

HISTORY_FIELDS = ("type", "priority", "scene_name", "taskState", "deleted", "replacedBy", "version", "metadata")


@dataclass
class HistoryStep:
    change: Any
    content_diff: list[tuple[str, str]]
    field_changes: list[tuple[str, Any, Any]]


def history_steps(changes: list[Any]) -> list[HistoryStep]:
    """A record's changes (oldest first) as steps, newest first, each with the content diff
    and the changed fields against the state before it."""
    steps = []
    previous: dict[str, Any] = {}
    for change in changes:
        state = change.state or {}
        diff = word_diff(previous.get("content", ""), state.get("content", "")) if previous else []
        fields = [(k, previous.get(k), state.get(k)) for k in HISTORY_FIELDS if previous and previous.get(k) != state.get(k)]
        steps.append(HistoryStep(change=change, content_diff=diff, field_changes=fields))
        previous = state
    return list(reversed(steps))


def backup_diffs(backups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"backup": b["backup"], "diff": line_diff(b["backup"].content, b["newer"])} for b in backups]


def persona_rows(review: dict[str, Any]) -> dict[str, Any]:
    """The persona review with a word diff on every updated entry, and the rows split into
    changes (to decide) and unchanged entries (folded away on the page)."""
    for row in review["rows"]:
        row["diff"] = word_diff(row["origin"], row["text"]) if row["kind"] == "updated" else None
    review["changed"] = [r for r in review["rows"] if r["kind"] != "unchanged"]
    review["unchanged"] = [r for r in review["rows"] if r["kind"] == "unchanged"]
    return review


def predecessor_diffs(record: Any, replaced: list[Any]) -> list[dict[str, Any]]:
    """What changed against each record this one replaced (a rewrite's v1 beside its v2)."""
    return [{"record": old, "diff": word_diff(old.content, record.content)} for old in replaced]


def tombstone_undo(record: Any, changes: list[Any]) -> dict[str, Any] | None:
    """For a record whose last change is a tombstoning fix: the change to restore to undo
    it (the state just before), with who did it, when and why. None otherwise (a rewrite
    is undone on its new record; a job's tombstone is a replace, not a fix)."""
    if not record.deleted or len(changes) < 2:
        return None
    last, before = changes[-1], changes[-2]
    audit = (last.note or {}).get("audit") if isinstance(last.note, dict) else None
    if last.action != "fix" or not isinstance(audit, dict) or audit.get("action") != "tombstone":
        return None
    if (before.state or {}).get("deleted"):
        return None
    return {"change_id": before.pk, "version": (before.state or {}).get("version"), "actor": last.actor,
            "at": last.created_at, "reason": audit.get("reason")}
