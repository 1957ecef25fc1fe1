"""`GET /api/v1/persona/USER.md`: the live persona as Markdown text (SPEC §2)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from apps.accounts.models import ROLE_RANK
from apps.persona.services import persona_live_text
from apps.tools.errors import Forbidden, ToolError
from apps.tools.http import context_from_request, error_response


@require_GET
def user_md(request: HttpRequest) -> HttpResponse:
    try:
        ctx = context_from_request(request)
        if ROLE_RANK[ctx.role] < ROLE_RANK["agent"]:
            raise Forbidden(f"role {ctx.role!r} may not read USER.md")
    except ToolError as exc:
        return error_response(exc)
    response = HttpResponse(persona_live_text(profile=ctx.profile), content_type="text/markdown; charset=utf-8")
    response["Cache-Control"] = "no-store"
    return response
