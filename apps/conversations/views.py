"""The append endpoints: L0 rows and skill-feed events."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from apps.conversations.ingest import l0_ingest, skill_feed_ingest
from apps.tools.http import api_view


@api_view(methods=("POST",), min_role="agent")
def l0_messages(request: HttpRequest, ctx, body) -> Any:
    return l0_ingest(profile=ctx.profile, actor=ctx.actor, body=body)


@api_view(methods=("POST",), min_role="agent")
def skill_feed_events(request: HttpRequest, ctx, body) -> Any:
    return skill_feed_ingest(profile=ctx.profile, actor=ctx.actor, body=body)
