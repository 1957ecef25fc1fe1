"""The job cursors as sentences ("read up to message 412 of 2026-11-30") instead of the
stored JSON with byte offsets. Each kind is read through its owner's selectors."""

from __future__ import annotations

from typing import Any

from apps.accounts.models import Profile
from apps.conversations import selectors as l0_selectors
from apps.records.selectors import changes_after

_JOBS = {"l1": "L1 extraction (reads L0 messages)", "l2": "L2 scene organizer (reads L1 changes)",
         "l3": "L3 persona (reads scene blocks)", "skill_feed": "skill review (reads the skill feed)"}


def _when(stamp: Any) -> str:
    """An ISO time as "2026-11-30 10:00 UTC" (the stored text when it does not parse)."""
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return str(stamp)
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def describe(profile: Profile, cursor: Any) -> dict[str, Any]:
    """{kind, job, lines: [str], updated_at, value} for one stored cursor."""
    value = cursor.value if isinstance(cursor.value, dict) else {}
    lines: list[str] = []
    if cursor.kind == "l1" and isinstance(value.get("files"), dict):
        positions = l0_selectors.l0_cursor_position(profile, {k: v for k, v in value["files"].items() if isinstance(v, int)})
        for p in positions[:3]:
            state = "all read" if p["read"] >= p["total"] else f"{p['total'] - p['read']} unread"
            lines.append(f"read up to message {p['read']} of {p['total']} of {p['day']} ({state})")
        if len(positions) > 3:
            lines.append(f"and {len(positions) - 3} earlier day{'s' if len(positions) > 4 else ''}")
    elif cursor.kind == "l1" and value.get("lastRecordedAt"):
        lines.append(f"read messages recorded up to {_when(value['lastRecordedAt'])} (legacy cursor)")
    elif cursor.kind == "l2" and isinstance(value.get("lastRecordId"), int):
        behind = changes_after(profile, value["lastRecordId"])
        lines.append(f"read L1 changes up to #{value['lastRecordId']}; {behind} change{'s' if behind != 1 else ''} since")
    elif cursor.kind == "l3" and value.get("updated"):
        lines.append(f"read scene blocks updated up to {_when(value['updated'])}")
    elif cursor.kind == "skill_feed" and value.get("recordedAt"):
        lines.append(f"read tool calls recorded up to {_when(value['recordedAt'])}" + (f" ({value['seen']} at that time)" if value.get("seen") else ""))
    if not lines:
        lines.append("at the start" if not value else "position stored in a form this page does not describe")
    return {"kind": cursor.kind, "job": _JOBS.get(cursor.kind, cursor.kind), "lines": lines, "updated_at": cursor.updated_at, "value": value}
