"""`POST /api/v1/recall/context` (SPEC §3.19)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from apps.search import services
from apps.tools.dispatch import validate_body
from apps.tools.http import api_view


@api_view(methods=("POST",), min_role="agent")
def recall_context(request: HttpRequest, ctx, body) -> Any:
    from apps.search.urls import RecallContextBody

    params = validate_body(RecallContextBody, body)
    return services.recall_context(
        profile=ctx.profile, query=params.query, session_key=params.sessionKey or ctx.session_key, cwd=params.cwd or ctx.cwd,
    )
