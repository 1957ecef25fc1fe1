"""Run one tool call: role check, parameter validation, error mapping.

The HTTP endpoint, the LLM driver and the dashboard all come through `call_tool`, so a
tool behaves the same whoever calls it. `validate_body` is the same validation for the
JSON endpoints that are not tools (L0 ingest, skill feed, recall context).

Text that is not Unicode text is stopped here, before any model sees it: a lone UTF-16
surrogate (`"\ud800"` is valid JSON but cannot be encoded as UTF-8, so a file, a
database or the answer's encoder fails on it) and NUL (PostgreSQL text cannot hold it).
In parameters they are `invalid_params` naming the field. The append endpoints replace
them by U+FFFD in their free-text fields first (`text_scrub_deep`, called by
`apps.conversations.ingest`: the verbatim conversation archive), because refusing a
logger's batch for one bad character loses the rows. The decision per field:
docs/api.md.
"""

from __future__ import annotations

import logging
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from apps.accounts.locks import ProfileLocked
from apps.tools.errors import Forbidden, InvalidParams, Locked, NotFound, ToolError
from apps.tools.registry import ToolContext, get_tool

logger = logging.getLogger(__name__)
M = TypeVar("M", bound=BaseModel)

CONTEXT_KEYS = {"sessionKey": "session_key", "sessionId": "session_id", "turn": "turn", "cwd": "cwd"}
# The call context reaches columns and files (recall log, L1 rows, shards): these bounds
# are what the L0 ingest accepts for the same values, and every column they reach holds
# them. `turn` is shorter so the per-turn budget key stays well inside an index entry.
CONTEXT_LIMITS = {"sessionKey": 512, "sessionId": 512, "turn": 256, "cwd": 4096}
CONTEXT_HEADERS = {"sessionKey": "X-Memory-Session", "sessionId": "X-Memory-Session-Id", "turn": "X-Memory-Turn", "cwd": "X-Memory-Cwd"}
REPLACEMENT = "\ufffd"
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def text_fault(text: str) -> str | None:
    """Why `text` is not storable Unicode text, or None."""
    if "\x00" in text:
        return "must not contain NUL characters"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"contains a lone UTF-16 surrogate at position {exc.start} (not valid Unicode text)"
    return None


def text_scrub(text: str) -> str:
    """`text` with every NUL and lone surrogate replaced by U+FFFD."""
    # A Python str holds a surrogate code point only when it is lone (json.loads joins
    # a valid `\ud83d\ude00` pair into one character), so each one is replaced.
    return _UNSTORABLE.sub(REPLACEMENT, text) if text_fault(text) is not None else text


def text_scrub_deep(value: Any) -> Any:
    """`text_scrub` applied to every string (keys too) of a parsed JSON value."""
    if isinstance(value, str):
        return text_scrub(value)
    if isinstance(value, list):
        return [text_scrub_deep(v) for v in value]
    if isinstance(value, dict):
        return {text_scrub(k) if isinstance(k, str) else k: text_scrub_deep(v) for k, v in value.items()}
    return value


def text_check(value: Any) -> Any:
    """Walk a parsed JSON value: raise `invalid_params` listing every string (value or key)
    holding NUL or a lone surrogate, naming where it is. Returns the value.

    JSON has one number type, and JSON Schema calls `5.0` an integer: an integral float
    becomes an int here, so the strict models accept what the published schema allows."""
    details: list[dict[str, Any]] = []

    def fix(node: Any, path: tuple[str, ...]) -> Any:
        """The replacement of a leaf, or the leaf itself (faults are collected)."""
        if isinstance(node, str):
            fault = text_fault(node)
            if fault is None:
                return node
            details.append({"field": ".".join(path) or "(body)", "message": fault})
        elif isinstance(node, float) and node.is_integer() and abs(node) < 2**63:
            return int(node)
        return node

    # Iterative and in place (the value is the caller's freshly parsed JSON): a body
    # nested hundreds of levels deep must reach the models' own depth checks, not
    # exhaust the stack here.
    root = {"": value}
    stack: list[tuple[Any, tuple[str, ...]]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        for key, item in items:
            child = path if node is root else (*path, str(key))
            if isinstance(key, str) and node is not root:
                fault = text_fault(key)
                if fault is not None:
                    details.append({"field": ".".join(path) or "(body)", "message": f"a key {fault}"})
                    continue
            if isinstance(item, (dict, list)):
                stack.append((item, child))
            else:
                replaced = fix(item, child)
                if replaced is not item:
                    node[key] = replaced
    if details:
        raise InvalidParams(_summary("invalid text", details), details=details)
    return root[""]


def _summary(prefix: str, details: list[dict[str, Any]]) -> str:
    summary = "; ".join(f"{d['field']}: {d['message']}" for d in details[:5])
    if len(details) > 5:
        summary += f"; and {len(details) - 5} more"
    return f"{prefix}: {summary}"


def validation_details(exc: ValidationError) -> list[dict[str, Any]]:
    details = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(part) for part in err.get("loc", ())) or "(body)"
        details.append({"field": loc, "message": err.get("msg", "invalid"), "type": err.get("type")})
    return details


def invalid_from_validation(exc: ValidationError) -> InvalidParams:
    details = validation_details(exc)
    return InvalidParams(_summary("invalid parameters", details), details=details)


def validate_body(model: type[M], body: Any) -> M:
    """The one validation of a request body: text check, then the strict Pydantic model
    whose JSON Schema the OpenAPI document publishes."""
    if not isinstance(body, dict):
        raise InvalidParams("the request body must be a JSON object", details=[{"field": "(body)", "message": "must be an object"}])
    body = text_check(body)
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise invalid_from_validation(exc) from None


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


def context_check(ctx: ToolContext) -> None:
    """The call context (headers, then `_context`) obeys the same text rules and bounds as
    the parameters, whichever transport filled it."""
    details = []
    for key, attr in CONTEXT_KEYS.items():
        value = getattr(ctx, attr) or ""
        where = f"_context.{key}"
        fault = text_fault(value)
        if fault is None and len(value) > CONTEXT_LIMITS[key]:
            fault = f"is longer than {CONTEXT_LIMITS[key]} characters"
        if fault is not None:
            details.append({"field": where, "message": f"{fault} (the {CONTEXT_HEADERS[key]} header or {where})"})
    if details:
        raise InvalidParams(_summary("invalid call context", details), details=details)


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
    payload = text_check(dict(payload))
    apply_context(ctx, payload.pop("_context", None))
    context_check(ctx)
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
