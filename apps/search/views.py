"""`POST /api/v1/recall/context` (SPEC §3.19)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from pydantic import BaseModel, ConfigDict, Field

from apps.search import services
from apps.tools.dispatch import validate_body
from apps.tools.http import api_view
from apps.tools.registry import ToolContext


class RecallContextBody(BaseModel):
    """The request body: validated here and published in the OpenAPI document (urls.py)."""

    model_config = ConfigDict(extra="forbid")
    query: str = Field(description="The user's message of this turn.")
    sessionKey: str = Field("", max_length=512, description="Conversation key (default: X-Memory-Session).")
    cwd: str = Field("", max_length=4096, description="The agent's working directory (default: X-Memory-Cwd).")


@api_view(methods=("POST",), min_role="agent")
def recall_context(request: HttpRequest, ctx: ToolContext, body: Any) -> dict[str, Any]:
    params = validate_body(RecallContextBody, body)
    return services.recall_context(
        profile=ctx.profile, query=params.query, session_key=params.sessionKey or ctx.session_key, cwd=params.cwd or ctx.cwd,
        actor=ctx.actor,
    )
