"""The MCP methods memoryweb serves, independent of the transport (HTTP view or stdio).

Messages are parsed and answers serialised with the SDK's protocol types (`mcp.types`);
what a method does is ours: `tools/list` is the tool registry filtered by the caller's
role, `tools/call` is one call through a `Backend` — `apps.tools.dispatch.call_tool` in
this process, or the tool API over HTTP — so guards, budgets and audit are those of every
other caller. A tool's error is a result with `isError: true` whose text (and
`structuredContent`) is the SPEC error object; JSON-RPC errors are kept for messages that
are not valid requests.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from mcp import types
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION
from pydantic import ValidationError

from apps.tools.errors import ToolError
from apps.tools.registry import ToolSpec, all_tools, get_tool

logger = logging.getLogger(__name__)

SERVER_NAME = "memoryweb"
SERVER_VERSION = "1"
INSTRUCTIONS = (
    "Long-term memory of this user. memory_search answers 'what do you know about X' in plain text; "
    "memory_ingest stores a conversation and extracts memories from it. The other tools are the full "
    "memoryweb tool API (recall_l1_records, l1_commit, ...)."
)
# Result fields that only the stateless (2026) protocol era defines; handshake-era
# clients get answers without them.
_MODERN_ONLY = {"result_type", "ttl_ms", "cache_scope"}


Progress = Callable[[str], None]
Notify = Callable[[dict[str, Any]], None]


class Backend(Protocol):
    """Where a tools/call goes. `call` raises `ToolError` for an error answer; a tool that
    reports progress calls `progress(message)` while it runs (where the backend can)."""

    role: str

    def call(self, name: str, arguments: dict[str, Any], *, progress: Progress | None = None) -> Any: ...


@dataclass
class Outcome:
    """What the transport sends back: a JSON-RPC message (None for a notification) and,
    for an accepted `initialize`, the protocol version it agreed on."""

    message: dict[str, Any] | None
    initialized_version: str | None = None


def tools_for_role(role: str) -> list[ToolSpec]:
    return [spec for spec in all_tools() if role in spec.roles]


def tool_definition(spec: ToolSpec) -> types.Tool:
    return types.Tool(name=spec.name, description=spec.description, input_schema=spec.json_schema())


def _dump(model: Any) -> dict[str, Any]:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True, exclude=_MODERN_ONLY)


def _error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message, data=data)).model_dump(
        by_alias=True, mode="json", exclude_none=True
    )


def _response(request_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result).model_dump(by_alias=True, mode="json")


def parse_error(detail: str) -> dict[str, Any]:
    return _error(None, types.PARSE_ERROR, f"Parse error: {detail}")


def internal_error(request_id: Any) -> dict[str, Any]:
    return _error(request_id if isinstance(request_id, (str, int)) else None, types.INTERNAL_ERROR, "Internal error; see the server log")


def session_error(detail: str) -> dict[str, Any]:
    return _error(None, types.INVALID_REQUEST, detail)


def tool_result(spec: ToolSpec | None, result: Any) -> types.CallToolResult:
    if spec is not None and spec.text_result and isinstance(result, dict) and isinstance(result.get(spec.text_result), str):
        text = result[spec.text_result]
    else:
        text = json.dumps(result, ensure_ascii=False)
    structured = result if isinstance(result, dict) else None
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured, is_error=False)


def error_result(exc: ToolError) -> types.CallToolResult:
    body = exc.as_dict()
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(body, ensure_ascii=False))], structured_content=body, is_error=True
    )


def progress_token(raw: Any) -> str | int | None:
    """The progressToken of a tools/call message, if the client asked for progress."""
    if not isinstance(raw, dict) or raw.get("method") != "tools/call":
        return None
    meta = (raw.get("params") or {}).get("_meta") if isinstance(raw.get("params"), dict) else None
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None


def handle(raw: Any, backend: Backend, notify: Notify | None = None) -> Outcome:
    """Answer one JSON-RPC message (already decoded from JSON). With `notify`, a
    tools/call that carries a progressToken gets `notifications/progress` messages sent
    through it while the tool runs."""
    if isinstance(raw, list):
        return Outcome(_error(None, types.INVALID_REQUEST, "JSON-RPC batches are not supported; send one message per request"))
    try:
        message = types.jsonrpc_message_adapter.validate_python(raw)
    except ValidationError as exc:
        request_id = raw.get("id") if isinstance(raw, dict) and isinstance(raw.get("id"), (str, int)) else None
        return Outcome(_error(request_id, types.INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 message",
                              data=[e.get("msg") for e in exc.errors(include_url=False)][:5]))
    if not isinstance(message, types.JSONRPCRequest):
        return Outcome(None)  # notifications (initialized, cancelled, ...) and client responses: nothing to answer
    params = message.params or {}
    try:
        if message.method == "initialize":
            return _initialize(message.id, params)
        if message.method == "ping":
            return Outcome(_response(message.id, {}))
        if message.method == "tools/list":
            tools = [tool_definition(spec) for spec in tools_for_role(backend.role)]
            return Outcome(_response(message.id, _dump(types.ListToolsResult(tools=tools))))
        if message.method == "tools/call":
            return Outcome(_response(message.id, _dump(_call(params, backend, _progress(progress_token(raw), notify)))))
    except _BadParams as exc:
        return Outcome(_error(message.id, types.INVALID_PARAMS, str(exc)))
    # server/discover too: a client probing for the stateless protocol falls back to initialize.
    return Outcome(_error(message.id, types.METHOD_NOT_FOUND, f"Method not found: {message.method}"))


class _BadParams(Exception):
    pass


def _initialize(request_id: Any, params: dict[str, Any]) -> Outcome:
    try:
        request = types.InitializeRequestParams.model_validate(params)
    except ValidationError as exc:
        raise _BadParams(f"invalid initialize params: {exc.errors(include_url=False)[0].get('msg')}") from None
    wanted = request.protocol_version
    version = wanted if wanted in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
    result = types.InitializeResult(
        protocol_version=version,
        capabilities=types.ServerCapabilities(tools=types.ToolsCapability(list_changed=False)),
        server_info=types.Implementation(name=SERVER_NAME, version=SERVER_VERSION),
        instructions=INSTRUCTIONS,
    )
    return Outcome(_response(request_id, _dump(result)), initialized_version=version)


def _progress(token: str | int | None, notify: Notify | None) -> Progress | None:
    if token is None or notify is None:
        return None
    sent = [0]

    def progress(message: str) -> None:
        sent[0] += 1  # progress must grow with every notification; the total is unknown
        notify(types.JSONRPCNotification(
            jsonrpc="2.0", method="notifications/progress",
            params={"progressToken": token, "progress": sent[0], "message": message[:500]},
        ).model_dump(by_alias=True, mode="json", exclude_none=True))

    return progress


def _call(params: dict[str, Any], backend: Backend, progress: Progress | None) -> types.CallToolResult:
    try:
        request = types.CallToolRequestParams.model_validate(params)
    except ValidationError as exc:
        raise _BadParams(f"invalid tools/call params: {exc.errors(include_url=False)[0].get('msg')}") from None
    try:
        result = backend.call(request.name, dict(request.arguments or {}), progress=progress)
    except ToolError as exc:
        return error_result(exc)
    return tool_result(get_tool(request.name), result)
