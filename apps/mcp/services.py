"""MCP sessions: open on initialize, look up per request, close on DELETE or idleness."""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.db.models import Q
from django.utils import timezone

from apps.mcp.models import McpSession

# A session idle this long is gone: its client gets 404 and initializes again (the
# transport's rule for an unknown session).
IDLE_LIMIT = timedelta(hours=24)
# last_seen_at is written at most this often, not on every request.
TOUCH_EVERY = timedelta(minutes=1)


def session_open(*, token_id: int, protocol_version: str, client_name: str = "") -> McpSession:
    now = timezone.now()
    # The token's ended and idle sessions can never answer again: drop them here, where
    # a new one is made, so the table holds about one row per live client.
    McpSession.objects.filter(token_id=token_id).filter(
        Q(closed_at__isnull=False) | Q(last_seen_at__lt=now - IDLE_LIMIT)
    ).delete()
    return McpSession.objects.create(
        session_id=secrets.token_urlsafe(24), token_id=token_id, protocol_version=protocol_version,
        client_name=client_name[:200], last_seen_at=now,
    )


def session_find(*, session_id: str, token_id: int) -> McpSession | None:
    """The open session with this id that `token_id` opened; None for any other."""
    now = timezone.now()
    session = McpSession.objects.filter(
        session_id=session_id[:64], token_id=token_id, closed_at__isnull=True, last_seen_at__gte=now - IDLE_LIMIT
    ).first()
    if session is not None and now - session.last_seen_at > TOUCH_EVERY:
        McpSession.objects.filter(pk=session.pk).update(last_seen_at=now)
    return session


def session_close(*, session: McpSession) -> None:
    McpSession.objects.filter(pk=session.pk, closed_at__isnull=True).update(closed_at=timezone.now())
