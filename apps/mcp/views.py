"""`/mcp`: MCP over streamable HTTP, as a plain Django view (see docs/mcp.md for why).

* POST one JSON-RPC message. Without a session (a bare client: no `initialize`, no
  `Mcp-Session-Id`) the answer is plain `application/json`. `initialize` opens a session
  (`Mcp-Session-Id` in the answer); inside a session a client that accepts
  `text/event-stream` gets its answer as an SSE stream, else JSON. A tools/call with a
  progressToken is streamed as it runs (progress notifications, keep-alives, answer).
* GET: this server sends no server-initiated messages, so no stream (405).
* DELETE with `Mcp-Session-Id`: ends the session.
Every request carries `Authorization: Bearer <token>`; the token selects profile and role.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import connections
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.http.request import split_domain_port, validate_host
from django.views.decorators.csrf import csrf_exempt
from mcp import types
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

from apps.mcp import protocol
from apps.mcp.backends import LocalBackend
from apps.mcp.services import session_close, session_find, session_open
from apps.tools.errors import Forbidden, InvalidParams, PayloadTooLarge, ToolError
from apps.tools.http import context_from_request, error_response, read_json_body

logger = logging.getLogger(__name__)

SESSION_HEADER = "Mcp-Session-Id"
# A stream with nothing to say sends a comment this often.
KEEPALIVE_SECONDS = 15.0
VERSION_HEADER = "MCP-Protocol-Version"


def _jsonrpc(message: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None) -> JsonResponse:
    response = JsonResponse(message, status=status, json_dumps_params={"ensure_ascii": False})
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def _event(message: dict[str, Any]) -> bytes:
    return f"event: message\ndata: {json.dumps(message, ensure_ascii=False)}\n\n".encode()


def _sse(message: dict[str, Any], headers: dict[str, str]) -> HttpResponse:
    response = HttpResponse(_event(message), content_type="text/event-stream; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    for name, value in headers.items():
        response[name] = value
    return response


def _streamed_call(raw: dict[str, Any], backend: LocalBackend) -> StreamingHttpResponse:
    """A tools/call that asked for progress: the call runs in a thread of this request
    while the stream sends its progress notifications, a keep-alive comment when nothing
    happened for a while (so proxies keep the connection), and finally the answer."""
    events: queue.Queue = queue.Queue()

    def work() -> None:
        try:
            message = protocol.handle(raw, backend, notify=lambda note: events.put(("note", note))).message
        except Exception:  # the stream must end with an answer, whatever failed
            logger.exception("streamed MCP call failed")
            message = protocol.internal_error(raw.get("id"))
        finally:
            connections.close_all()  # this thread's connections only
        events.put(("answer", message))

    threading.Thread(target=work, name="mcp-call", daemon=True).start()

    def stream():
        while True:
            try:
                kind, message = events.get(timeout=KEEPALIVE_SECONDS)
            except queue.Empty:
                yield b": keep-alive\n\n"
                continue
            yield _event(message)
            if kind == "answer":
                return

    response = StreamingHttpResponse(stream(), content_type="text/event-stream; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    return response


def _origin_allowed(request: HttpRequest) -> bool:
    """The transport's DNS-rebinding rule: a browser origin must be this host or a trusted one."""
    origin = request.headers.get("Origin")
    if not origin:
        return True
    if origin in settings.CSRF_TRUSTED_ORIGINS:
        return True
    domain, _ = split_domain_port(urlsplit(origin).netloc)
    return bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS)


@csrf_exempt
def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    try:
        ctx = context_from_request(request)
    except ToolError as exc:
        response = error_response(exc)
        response["WWW-Authenticate"] = 'Bearer realm="memoryweb"'
        return response
    if not _origin_allowed(request):
        return error_response(Forbidden(f"origin {request.headers.get('Origin')!r} is not allowed"))

    session = None
    session_id = request.headers.get(SESSION_HEADER, "")
    if session_id:
        session = session_find(session_id=session_id, token_id=ctx.token_id)
        if session is None:
            return _jsonrpc(protocol.session_error("unknown or ended session; send initialize again"), status=404)

    if request.method == "DELETE":
        if session is None:
            return _jsonrpc(protocol.session_error(f"DELETE needs the {SESSION_HEADER} header"), status=400)
        session_close(session=session)
        return HttpResponse(status=200)
    if request.method != "POST":
        response = HttpResponse(status=405)
        response["Allow"] = "POST, DELETE"
        return response

    version = request.headers.get(VERSION_HEADER)
    if version and version not in KNOWN_PROTOCOL_VERSIONS:
        return _jsonrpc(protocol.session_error(f"unsupported {VERSION_HEADER}: {version}"), status=400)
    try:
        raw = read_json_body(request)
    except PayloadTooLarge as exc:
        return error_response(exc)
    except InvalidParams as exc:
        return _jsonrpc(protocol.parse_error(exc.message), status=400)

    streaming = session is not None and "text/event-stream" in request.headers.get("Accept", "")
    if streaming and protocol.progress_token(raw) is not None:
        return _streamed_call(raw, LocalBackend(ctx))
    outcome = protocol.handle(raw, LocalBackend(ctx))
    if outcome.message is None:
        return HttpResponse(status=202)
    headers: dict[str, str] = {}
    if outcome.initialized_version and session is None:
        client = ((raw.get("params") or {}).get("clientInfo") or {}) if isinstance(raw, dict) else {}
        session = session_open(token_id=ctx.token_id, protocol_version=outcome.initialized_version,
                               client_name=str(client.get("name") or "") if isinstance(client, dict) else "")
        headers[SESSION_HEADER] = session.session_id
    if streaming:
        return _sse(outcome.message, headers)
    status = 400 if outcome.message.get("error", {}).get("code") in (types.PARSE_ERROR, types.INVALID_REQUEST) else 200
    return _jsonrpc(outcome.message, status=status, headers=headers)
