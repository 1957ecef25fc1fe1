"""The skill feed (SPEC §1.8, §3.18): sanitized tool-using conversation rows in daily
shards `profiles/<slug>/skill-feed/YYYY-MM-DD.jsonl`, read by the skill reviewer.

The feed cursor is a time: rows are consumed in file order, which is time order because
`recordedAt` is stamped under the shard lock. Several rows can share one `recordedAt`
(a batch is stamped once per row, but rows dropped into the folder or stamped in the same
microsecond collide), so the exact cursor is `{recordedAt, seen}`: every row stamped
before `recordedAt` is consumed, and so are the first `seen` rows stamped exactly at it.
A plain ISO string means `seen: 0`: rows equal to it are replayed (the legacy L0 boundary
rule), so none is lost; passing back `nextCursorState` avoids the replay.
"""

from __future__ import annotations

from collections import deque
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from apps.accounts.models import Profile
from apps.conversations import shards
from apps.conversations.services import (
    DATE_SHARD_RE,
    _state_dir,
    area_folder,
    cursor_json_load,
    now_iso,
    parse_iso,
    resolve_shards,
    today_shard_name,
)

FEED_AREA = "skill-feed"
FEED_BATCH = 50
FEED_BACKGROUND = 5


def _feed_folder(profile: Profile) -> Path:
    """The profile's skill-feed folder, never followed through a link outside the profile."""
    return area_folder(profile, FEED_AREA)


def skill_feed_append(*, profile: Profile, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Append validated rows to today's feed shard, stamping `recordedAt`."""
    if not rows:
        return []
    shard = today_shard_name()

    def stamp(row: dict[str, Any], line: int) -> dict[str, Any]:
        stored = {k: v for k, v in row.items() if k != "recordedAt"}
        stored["recordedAt"] = now_iso()
        return stored

    appended = shards.append_rows(_feed_folder(profile) / shard, _state_dir(profile, FEED_AREA), rows, stamp)
    return [{"shard": shard, "offset": a.offset, "line": a.line, "recordedAt": a.row["recordedAt"]} for a in appended]


def skill_feed_cursor_parse(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    """`{}` (from the start) or `{"recordedAt": ISO, "seen": n}`. Accepts an ISO string,
    the JSON text of the object, or the object. Raises ValueError naming the problem."""
    if raw is None:
        return {}
    value: Any = raw
    if isinstance(raw, str):
        text = raw.strip()
        if not text:
            return {}
        if text.startswith("{"):
            value = cursor_json_load(text)
        else:
            value = {"recordedAt": text}
    if not isinstance(value, dict):
        raise ValueError("cursor must be an ISO 8601 string or {recordedAt, seen}")  # noqa: TRY004 (callers catch ValueError: one error type for any bad cursor)
    if not value:
        return {}
    unknown = set(value) - {"recordedAt", "seen"}
    if unknown:
        raise ValueError(f"cursor has unknown keys: {', '.join(sorted(unknown))} (expected recordedAt, seen)")
    stamp = value.get("recordedAt")
    try:
        parse_iso(stamp)
    except (ValueError, TypeError):
        raise ValueError(f"cursor recordedAt {stamp!r} is not an ISO 8601 timestamp") from None
    seen = value.get("seen", 0)
    if not isinstance(seen, int) or isinstance(seen, bool) or seen < 0:
        raise ValueError(f"cursor.seen must be a non-negative integer, got {seen!r}")
    return {"recordedAt": stamp.strip(), "seen": seen}


def _row_time(row: dict[str, Any] | None) -> datetime | None:
    if row is None:
        return None
    try:
        return parse_iso(row.get("recordedAt"))
    except (ValueError, TypeError):
        return None


def _shard_may_hold_after(path: Path, boundary: datetime | None) -> bool:
    """A dated shard more than a day older than the cursor holds only consumed rows (the
    day of slack covers a row stamped just after midnight into the previous day's shard)."""
    if boundary is None:
        return True
    match = DATE_SHARD_RE.match(path.name)
    if not match:
        return True
    try:
        day = datetime.strptime(match.group(1), "%Y-%m-%d").date()
    except ValueError:
        return True
    return day >= (boundary - timedelta(days=1)).date()


def _out(shard: str, item: shards.Line) -> dict[str, Any]:
    assert item.row is not None
    return {**item.row, "sourceFile": shard, "sourceOffset": item.offset}


def skill_feed_read_increment(
    *, profile: Profile, feed_files: str, cursor: dict[str, Any], limit: int = FEED_BATCH, background_size: int = FEED_BACKGROUND
) -> dict[str, Any]:
    """SPEC §3.18. Returns `{messages, background, nextCursor, nextCursorState, truncated,
    skippedLines}`; `nextCursor` is the ISO `recordedAt` of the last returned row."""
    _feed_folder(profile)
    paths = resolve_shards(profile, FEED_AREA, feed_files, "feedFiles")
    boundary = parse_iso(cursor["recordedAt"]) if cursor else None
    seen_at_boundary = cursor.get("seen", 0) if cursor else 0

    messages: list[dict[str, Any]] = []
    background: deque[dict[str, Any]] = deque(maxlen=max(background_size, 1))
    skipped = 0
    truncated = False
    equal_seen = 0  # rows stamped exactly at the boundary met so far
    last_time: datetime | None = None
    last_text = ""
    last_equal = 0  # rows stamped exactly at last_time met so far
    skipped_paths: list[Path] = []
    for path in paths:
        if not _shard_may_hold_after(path, boundary):
            skipped_paths.append(path)
            continue
        for item in shards.iter_forward(path, 0):
            when = _row_time(item.row)
            if when is None:
                skipped += 1
                continue
            if boundary is not None:
                if when < boundary:
                    background.append(_out(path.name, item))
                    continue
                if when == boundary:
                    equal_seen += 1
                    if equal_seen <= seen_at_boundary:
                        background.append(_out(path.name, item))
                        continue
            if len(messages) >= limit:
                truncated = True
                break
            messages.append(_out(path.name, item))
            if when == last_time:
                last_equal += 1
            else:
                last_time, last_equal = when, 1
                if boundary is not None and when == boundary:
                    last_equal = equal_seen
            last_text = item.row["recordedAt"]  # type: ignore[index]
        if truncated:
            break

    rows_before = list(background)
    if background_size and len(rows_before) < background_size:
        # Older rows live in shards skipped by date: read them backwards, bounded.
        older: list[dict[str, Any]] = []
        for path in reversed(skipped_paths):
            for item in shards.iter_backward(path, path.stat().st_size, 1024 * 1024):
                if _row_time(item.row) is not None:
                    older.append(_out(path.name, item))
                if len(older) + len(rows_before) >= background_size:
                    break
            if len(older) + len(rows_before) >= background_size:
                break
        rows_before = list(reversed(older)) + rows_before
    rows_before = rows_before[-background_size:] if background_size else []

    if messages:
        next_cursor: str | None = last_text
        state: dict[str, Any] | None = {"recordedAt": last_text, "seen": last_equal}
    elif cursor:
        next_cursor, state = cursor["recordedAt"], {"recordedAt": cursor["recordedAt"], "seen": seen_at_boundary}
    else:
        next_cursor, state = None, None
    return {
        "messages": messages,
        "background": rows_before,
        "nextCursor": next_cursor,
        "nextCursorState": state,
        "truncated": truncated,
        "skippedLines": skipped,
    }
