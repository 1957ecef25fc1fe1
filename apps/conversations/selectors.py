"""Read-only queries over L0 conversations (the location index and the shards) and the
job cursors, for the dashboard. Rows are read from the shards by seeking to the index's
offsets, one page at a time."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from django.db.models import Count, Max, Min, QuerySet

from apps.accounts.models import Profile
from apps.conversations import shards
from apps.conversations.models import Cursor, L0Message, L0ShardState
from apps.conversations.services import _sha1, l0_read_row, l0_shard_files


def cursors(profile: Profile) -> list[Cursor]:
    return list(Cursor.objects.filter(profile=profile).order_by("kind"))


def l0_sessions(profile: Profile, *, date_from: date | None = None, date_to: date | None = None,
                session_keys: set[str] | None = None) -> QuerySet:
    """One row per conversation (session) of the L0 index, newest activity first; the
    dates narrow to messages in those UTC days' shards, `session_keys` to those sessions."""
    qs = L0Message.objects.filter(profile=profile)
    if date_from:
        qs = qs.filter(shard__gte=date_from.isoformat())
    if date_to:
        qs = qs.filter(shard__lt=(date_to + timedelta(days=1)).isoformat())
    if session_keys is not None:
        qs = qs.filter(session_hash__in=[_sha1(k) for k in session_keys], session_key__in=list(session_keys))
    return (
        qs.values("session_hash", "session_key")
        .annotate(messages=Count("id"), first_shard=Min("shard"), last_shard=Max("shard"), last_ts=Max("timestamp"))
        .order_by("-last_shard", "-last_ts", "session_key")
    )


def l0_counts(profile: Profile) -> dict[str, int]:
    agg = L0Message.objects.filter(profile=profile).aggregate(messages=Count("id"), sessions=Count("session_hash", distinct=True))
    return {"messages": agg["messages"] or 0, "sessions": agg["sessions"] or 0,
            "shards": L0ShardState.objects.filter(profile=profile).count()}


def l0_session_entries(profile: Profile, session_key: str) -> QuerySet:
    """The session's rows in the L0 location index, in shard/line order (unread)."""
    return L0Message.objects.filter(profile=profile, session_hash=_sha1(session_key), session_key=session_key).order_by("shard", "offset")


def l0_rows_for(profile: Profile, entries: list[Any]) -> list[dict[str, Any]]:
    """Read just these rows from their shards (seek + one line each); a row whose shard
    changed under the index is shown as unreadable rather than dropped."""
    rows = []
    for entry in entries:
        row = l0_read_row(profile=profile, shard=entry.shard, offset=entry.offset, length=entry.length)
        full = dict(row or {})
        full.setdefault("role", entry.role)
        full.setdefault("content", "")
        full.update(sourceFile=entry.shard, sourceLine=entry.line, messageRef=entry.ref, unreadable=row is None)
        rows.append(full)
    return rows


def l0_shards(profile: Profile) -> list[dict[str, Any]]:
    return list(L0ShardState.objects.filter(profile=profile).order_by("-shard").values("shard", "indexed_bytes", "indexed_lines"))


# ---------------------------------------------------------------- search and cursor position

SEARCH_MAX_BYTES = 64 * 1024 * 1024  # a search reads at most this much of the shards, newest first
SEARCH_MAX_SESSIONS = 500


@dataclass
class SessionSearch:
    session_keys: set[str] = field(default_factory=set)
    bytes_read: int = 0
    truncated: bool = False  # stopped at SEARCH_MAX_BYTES or SEARCH_MAX_SESSIONS


def l0_search_sessions(profile: Profile, *, text: str = "", project: str = "", date_from: date | None = None,
                       date_to: date | None = None) -> SessionSearch:
    """Sessions with a message whose content (or session key) contains `text`, any case,
    and, with `project`, whose cwd is that folder or inside it. Message text lives only in
    the shards, so this reads them, newest shard first, within the date range and a byte
    budget; `truncated` says when the budget ended the scan early."""
    needle = text.casefold().strip()
    root = project.rstrip("/")
    result = SessionSearch()
    for path in reversed(l0_shard_files(profile)):  # own shards only: links are never read
        day = path.name.removesuffix(".jsonl")
        if (date_from and day < date_from.isoformat()) or (date_to and day > date_to.isoformat()):
            continue
        for line in shards.iter_forward(path, 0):
            result.bytes_read += line.end - line.offset
            row = line.row
            if row is None:
                continue
            key = str(row.get("sessionKey") or "")
            if not key or key in result.session_keys:
                continue
            if root:
                cwd = str(row.get("cwd") or "").rstrip("/")
                if cwd != root and not cwd.startswith(root + "/"):
                    continue
            if needle and needle not in str(row.get("content") or "").casefold() and needle not in key.casefold():
                continue
            result.session_keys.add(key)
            if len(result.session_keys) >= SEARCH_MAX_SESSIONS or result.bytes_read >= SEARCH_MAX_BYTES:
                result.truncated = True
                return result
    return result


def l1_cursor_offsets(profile: Profile) -> dict[str, int] | None:
    """The L1 extraction cursor as {shard: byte offset read up to}, None when it is not a
    version-2 cursor (none yet, or a legacy one)."""
    from apps.conversations.cursors import cursor_get
    from apps.conversations.services import l0_cursor_parse

    try:
        value = l0_cursor_parse(cursor_get(profile=profile, kind="l1"))
    except ValueError:
        return None
    return dict(value.get("files") or {}) if value.get("version") == 2 else None


def l0_cursor_position(profile: Profile, offsets: dict[str, int]) -> list[dict[str, Any]]:
    """Per shard of a cursor: how many indexed messages lie before its offset, of how many
    ("read up to message 412 of 2026-11-30"), newest shard first."""
    out = []
    for shard, offset in sorted(offsets.items(), reverse=True):
        rows = L0Message.objects.filter(profile=profile, shard=shard)
        out.append({"shard": shard, "day": shard.removesuffix(".jsonl"), "offset": offset,
                    "read": rows.filter(offset__lt=offset).count(), "total": rows.count()})
    return out
