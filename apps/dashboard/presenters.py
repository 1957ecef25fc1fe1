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


def _words(key: str) -> str:
    """camelCase / snake_case key → words ("recordsStored" → "records stored")."""
    import re

    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", str(key)).replace("_", " ").lower()


def job_counts(counts: Any) -> list[tuple[str, Any]]:
    """A run's counts as (label, value) rows, in stored order; nested values stay whole."""
    if not isinstance(counts, dict):
        return []
    return [(_words(k), v) for k, v in counts.items()]


def field_changes(before: Any, after: Any) -> list[tuple[str, Any, Any]]:
    """Field-level differences of two audit states (dicts), like the record history: only
    the fields that changed, as (field, old, new). Non-dict states compare whole."""
    if isinstance(before, dict) or isinstance(after, dict):
        old = before if isinstance(before, dict) else {}
        new = after if isinstance(after, dict) else {}
        return [(k, old.get(k), new.get(k)) for k in dict.fromkeys([*old, *new]) if old.get(k) != new.get(k)]
    return [] if before == after else [("value", before, after)]


def audit_target(event: Any, slug: str, block_ids: dict[str, int]) -> str | None:
    """The dashboard page of an audit event's target, when it has one."""
    from django.urls import reverse

    kind, target = event.target_type, event.target_id
    if kind == "l1_record" and target:
        return reverse("dashboard:record", args=[slug, target])
    if kind == "scene_block" and target in block_ids:
        return reverse("dashboard:scene", args=[slug, block_ids[target]])
    if kind == "job_run" and str(target).isdigit():
        return reverse("dashboard:job", args=[slug, int(target)])
    if kind in ("persona", "persona_entry"):
        return reverse("dashboard:persona", args=[slug])
    if kind == "scene" and target:
        return reverse("dashboard:records", args=[slug]) + f"?scene={target}"
    if kind == "skill" and target:
        return reverse("dashboard:skill", args=[slug, target])
    return None


def audit_rows(events: list[Any], slug: str, block_ids: dict[str, int]) -> list[dict[str, Any]]:
    return [{"event": e, "link": audit_target(e, slug, block_ids), "changes": field_changes(e.before, e.after)} for e in events]


_BOOST_NAMES = {"effectiveHits": "useful recalls", "priority": "priority"}


def boost_words(boosts: Any) -> str:
    """Recall boosts as words: "+12% for useful recalls, −4% for priority" (the score is
    the fused score × (1 + the boosts)); "none" when every boost is zero."""
    if not isinstance(boosts, dict):
        return "none"
    parts = []
    for key, value in boosts.items():
        if isinstance(value, (int, float)) and round(value * 100) != 0:
            sign = "+" if value > 0 else "−"
            parts.append(f"{sign}{abs(round(value * 100))}% for {_BOOST_NAMES.get(key, _words(key))}")
    return ", ".join(parts) or "none"


def rank_words(dense: Any, sparse: Any) -> str:
    """Where the two retrievers placed a record, e.g. "meaning #1, words #3"."""
    parts = [f"meaning #{dense}" if dense else "not found by meaning", f"words #{sparse}" if sparse else "not found by words"]
    return ", ".join(parts)
