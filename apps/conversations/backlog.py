"""How much new work the conversation stores hold for the jobs (SPEC §5 triggers): eligible
L0 rows beyond the L1 cursor, tool calls in the skill feed beyond its cursor.

Counted with this app's own rules — eligibility (`_is_eligible`), cursor times parsed as
ISO (`parse_iso`, so `…Z` and `…+00:00` are one instant), complete lines only — and over
this app's confined listings: a link in `l0/` or `skill-feed/` is never counted, just as
it is never read or indexed. Each count stops at its limit, so a trigger check costs the
lines up to the limit-th match, never a whole shard.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from apps.accounts.models import Profile
from apps.accounts.paths import own_files, profile_subdir
from apps.conversations import shards
from apps.conversations.services import SHARD_NAME_RE, _is_eligible, parse_iso


@dataclass(frozen=True)
class Backlog:
    eligible: int
    newest_write: datetime | None


def _stamp(value: Any) -> datetime | None:
    try:
        return parse_iso(value)
    except (ValueError, TypeError):
        return None


def _listing(profile: Profile, area: str) -> list[Path]:
    folder = profile_subdir(profile, area, create=False)
    return [p for p in own_files(folder, "*.jsonl") if SHARD_NAME_RE.match(p.name)]


def l0_backlog(*, profile: Profile, cursor: dict[str, Any], limit: int) -> Backlog:
    """Eligible complete L0 lines beyond the L1 cursor (v2 offsets, or the legacy
    `lastRecordedAt`: rows before it are not new), up to `limit`."""
    offsets = cursor.get("files") if isinstance(cursor.get("files"), dict) else {}
    legacy = _stamp(cursor.get("lastRecordedAt")) if not offsets else None
    count = 0
    newest: datetime | None = None
    for shard in _listing(profile, "l0"):
        try:
            size = shard.stat().st_size
            offset = int(offsets.get(shard.name, 0)) if offsets else 0
        except (OSError, TypeError, ValueError):
            continue
        if size <= offset:
            continue
        found = _count(shard, offset, limit - count, lambda row: _is_eligible(row) and not _before(row, legacy))
        if found:
            count += found
            mtime = datetime.fromtimestamp(shard.stat().st_mtime, tz=UTC)
            newest = mtime if newest is None or mtime > newest else newest
        if count >= limit:
            break
    return Backlog(count, newest)


def _before(row: dict[str, Any], boundary: datetime | None) -> bool:
    if boundary is None:
        return False
    stamp = _stamp(row.get("recordedAt"))
    return stamp is not None and stamp < boundary  # unreadable: replayed, so counted


def skill_feed_tool_calls(*, profile: Profile, cursor: dict[str, Any], limit: int) -> int:
    """Tool calls in the skill feed stamped after its cursor (`{recordedAt}`), up to `limit`;
    shards dated before the cursor's day are not read."""
    after = _stamp(cursor.get("recordedAt") or cursor.get("lastRecordedAt"))
    after_day = after.strftime("%Y-%m-%d") if after else ""
    count = 0
    for shard in _listing(profile, "skill-feed"):
        if after_day and shard.stem < after_day:
            continue

        def new_call(row: dict[str, Any]) -> bool:
            if row.get("role") != "tool_call":
                return False
            if after is None:
                return True
            stamp = _stamp(row.get("recordedAt"))
            return stamp is not None and stamp > after

        count += _count(shard, 0, limit - count, new_call)
        if count >= limit:
            break
    return count


def _count(path: Path, offset: int, limit: int, matches: Any) -> int:
    count = 0
    try:
        for line in shards.iter_forward(path, offset):  # complete lines only: never a partial one
            if line.row is not None and matches(line.row):
                count += 1
                if count >= limit:
                    break
    except OSError:
        pass
    return count
