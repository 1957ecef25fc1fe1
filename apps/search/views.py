"""`POST /api/v1/recall/context` (SPEC §3.19)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from pydantic import ValidationError

from apps.search import services
from apps.tools.dispatch import invalid_from_validation
from apps.tools.errors import InvalidParams
from apps.tools.http import api_view


@api_view(methods=("POST",), min_role="agent")
def recall_context(request: HttpRequest, ctx, body) -> Any:
    from apps.search.urls import RecallContextBody

    if not isinstance(body, dict):
        raise InvalidParams("the request body must be a JSON object", details=[{"field": "(body)", "message": "must be an object"}])
    try:
        params = RecallContextBody.model_validate(body)
    except ValidationError as exc:
        raise invalid_from_validation(exc) from None
    return services.recall_context(
        profile=ctx.profile, query=params.query, session_key=params.sessionKey or ctx.session_key, cwd=params.cwd or ctx.cwd,
    )
