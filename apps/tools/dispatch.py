"""Run one tool call: role check, parameter validation, error mapping.

The HTTP endpoint, the LLM driver and the dashboard all come through `call_tool`, so a
tool behaves the same whoever calls it.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel, ValidationError

from apps.accounts.locks import ProfileLocked
from apps.tools.errors import Forbidden, InvalidParams, Locked, NotFound, ToolError
from apps.tools.registry import ToolContext, get_tool

logger = logging.getLogger(__name__)

CONTEXT_KEYS = {"sessionKey": "session_key", "sessionId": "session_id", "turn": "turn", "cwd": "cwd"}


def validation_details(exc: ValidationError) -> list[dict[str, Any]]:
    details = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(part) for part in err.get("loc", ())) or "(body)"
        details.append({"field": loc, "message": err.get("msg", "invalid"), "type": err.get("type")})
    return details


def invalid_from_validation(exc: ValidationError) -> InvalidParams:
    details = validation_details(exc)
    summary = "; ".join(f"{d['field']}: {d['message']}" for d in details[:5])
    if len(details) > 5:
        summary += f"; and {len(details) - 5} more"
    return InvalidParams(f"invalid parameters: {summary}", details=details)


def apply_context(ctx: ToolContext, raw: Any) -> None:
    """Merge a body `_context` object into the call context (headers were applied first)."""
    if raw is None:
        return
    if not isinstance(raw, dict):
        raise InvalidParams("_context must be an object", details=[{"field": "_context", "message": "must be an object"}])
    for key, value in raw.items():
        if key not in CONTEXT_KEYS:
            raise InvalidParams(
                f"_context.{key}: unknown context field (allowed: {', '.join(CONTEXT_KEYS)})",
                details=[{"field": f"_context.{key}", "message": "unknown context field"}],
            )
        if value is not None and not isinstance(value, str):
            raise InvalidParams(f"_context.{key} must be a string", details=[{"field": f"_context.{key}", "message": "must be a string"}])
        setattr(ctx, CONTEXT_KEYS[key], value or "")


def to_jsonable(result: Any) -> Any:
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json", by_alias=True)
    return result


def call_tool(name: str, payload: Any, ctx: ToolContext) -> Any:
    spec = get_tool(name)
    if spec is None:
        raise NotFound(f"unknown tool {name!r}", details={"tool": name})
    if not ctx.has_role(spec.min_role):
        raise Forbidden(f"role {ctx.role!r} may not call {name!r} (needs {spec.min_role})", details={"tool": name, "role": ctx.role})
    if payload is None:
        payload = {}
    if not isinstance(payload, dict):
        raise InvalidParams("the request body must be a JSON object", details=[{"field": "(body)", "message": "must be an object"}])
    payload = dict(payload)
    apply_context(ctx, payload.pop("_context", None))
    try:
        params = spec.params.model_validate(payload)
    except ValidationError as exc:
        raise invalid_from_validation(exc) from None
    try:
        return to_jsonable(spec.func(ctx, params))
    except ProfileLocked as exc:
        raise Locked(str(exc)) from None
    except ValidationError as exc:  # a service validating nested input late
        raise invalid_from_validation(exc) from None
    except ToolError:
        raise
