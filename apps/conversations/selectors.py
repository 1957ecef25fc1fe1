"""Read-only queries over L0 conversations (the location index and the shards) and the
job cursors, for the dashboard. Rows are read from the shards by seeking to the index's
offsets, one page at a time."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Max, Min, QuerySet

from apps.accounts.models import Profile
from apps.conversations import shards
from apps.conversations.models import Cursor, L0Message, L0ShardState
from apps.conversations.services import _sha1, l0_dir


def cursors(profile: Profile) -> list[Cursor]:
    return list(Cursor.objects.filter(profile=profile).order_by("kind"))


def l0_sessions(profile: Profile) -> QuerySet:
    """One row per conversation (session) of the L0 index, newest activity first."""
    return (
        L0Message.objects.filter(profile=profile)
        .values("session_hash", "session_key")
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
    base = l0_dir(profile)
    rows = []
    for entry in entries:
        try:
            row = shards.read_line_at(base / entry.shard, entry.offset, entry.length)
        except OSError:
            row = None
        full = dict(row or {})
        full.setdefault("role", entry.role)
        full.setdefault("content", "")
        full.update(sourceFile=entry.shard, sourceLine=entry.line, messageRef=entry.ref, unreadable=row is None)
        rows.append(full)
    return rows


def l0_shards(profile: Profile) -> list[dict[str, Any]]:
    return list(L0ShardState.objects.filter(profile=profile).order_by("-shard").values("shard", "indexed_bytes", "indexed_lines"))
