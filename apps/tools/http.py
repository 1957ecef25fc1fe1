"""HTTP plumbing shared by every JSON endpoint: bearer auth, body limit, JSON parsing,
call context from headers, and the one error shape."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from apps.accounts.locks import ProfileLocked
from apps.accounts.models import ROLE_RANK, ApiToken
from apps.accounts.services import token_authenticate
from apps.tools.dispatch import context_check
from apps.tools.errors import (
    Forbidden,
    Internal,
    InvalidParams,
    Locked,
    MethodNotAllowed,
    PayloadTooLarge,
    ToolError,
    Unauthorized,
)
from apps.tools.registry import ToolContext

logger = logging.getLogger(__name__)


def _json(data: Any, status: int) -> JsonResponse:
    try:
        return JsonResponse(data, status=status, safe=False, json_dumps_params={"ensure_ascii": False})
    except UnicodeEncodeError:
        # A lone surrogate read back from a file an agent wrote itself cannot be UTF-8:
        # ASCII escapes keep the answer valid JSON instead of a 500.
        return JsonResponse(data, status=status, safe=False)


def error_response(exc: ToolError) -> JsonResponse:
    response = _json(exc.as_dict(), exc.status)
    if isinstance(exc, MethodNotAllowed) and exc.allowed:
        response["Allow"] = ", ".join(exc.allowed)  # RFC 9110 §15.5.6: a 405 names what is allowed
    return response


def ok_response(data: Any, status: int = 200) -> JsonResponse:
    return _json(data, status)


def context_from_request(request: HttpRequest) -> ToolContext:
    header = request.headers.get("Authorization", "")
    if not header:
        raise Unauthorized("missing Authorization: Bearer <token> header")
    scheme, _, plain = header.partition(" ")
    if scheme.lower() != "bearer" or not plain.strip():
        raise Unauthorized("Authorization header must be 'Bearer <token>'")
    token = token_authenticate(plain=plain.strip())
    if token is None:
        raise Unauthorized("unknown or revoked token")
    return token_context(
        token,
        session_key=request.headers.get("X-Memory-Session", ""),
        session_id=request.headers.get("X-Memory-Session-Id", ""),
        turn=request.headers.get("X-Memory-Turn", ""),
        cwd=request.headers.get("X-Memory-Cwd", ""),
    )


def token_context(token: ApiToken, *, session_key: str = "", session_id: str = "", turn: str = "", cwd: str = "") -> ToolContext:
    """The call context of an authenticated token (HTTP requests and the stdio MCP server)."""
    return ToolContext(
        profile=token.profile,
        role=token.role,
        actor=token.actor,
        session_key=session_key,
        session_id=session_id,
        turn=turn,
        cwd=cwd,
        token_id=token.pk,
    )


def read_json_body(request: HttpRequest) -> Any:
    limit = settings.API_MAX_BODY_BYTES
    declared = request.META.get("CONTENT_LENGTH")
    if declared:
        try:
            if int(declared) > limit:
                raise PayloadTooLarge(f"request body is {int(declared)} bytes; the limit is {limit}", details={"limit": limit})
        except ValueError:
            raise InvalidParams("bad Content-Length header") from None
    body = request.read(limit + 1)
    if len(body) > limit:
        raise PayloadTooLarge(f"request body exceeds the limit of {limit} bytes", details={"limit": limit})
    if not body.strip():
        return {}
    try:
        value = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        raise InvalidParams("request body is not UTF-8", details=[{"field": "(body)", "message": "not UTF-8"}]) from None
    except RecursionError:
        raise InvalidParams(
            "request body is nested too deeply to parse",
            details=[{"field": "(body)", "message": "nested too deeply"}],
        ) from None
    except json.JSONDecodeError as exc:
        raise InvalidParams(
            f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
            details=[{"field": "(body)", "message": f"malformed JSON: {exc.msg}", "line": exc.lineno, "column": exc.colno}],
        ) from None
    if value is None:  # a literal `null` is not an empty body
        raise InvalidParams("the request body must be a JSON object", details=[{"field": "(body)", "message": "must be an object, not null"}])
    return value


def api_view(
    *, methods: tuple[str, ...], min_role: str | None = None, parse_body: bool = True
) -> Callable[[Callable[..., Any]], Callable[..., JsonResponse]]:
    """Wrap a JSON endpoint: `view(request, ctx, body)`; errors become the error shape.

    With `min_role=None` the endpoint needs no token (ctx is None).
    """

    def decorator(view: Callable[..., Any]) -> Callable[..., JsonResponse]:
        @csrf_exempt
        @functools.wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
            try:
                if request.method not in methods:
                    raise MethodNotAllowed.of(request.method or "", methods)
                ctx = None
                if min_role is not None:
                    ctx = context_from_request(request)
                    request.tool_context = ctx  # type: ignore[attr-defined]  # an ad-hoc attribute: the request log names the profile
                    if ROLE_RANK[ctx.role] < ROLE_RANK[min_role]:
                        raise Forbidden(f"role {ctx.role!r} may not use this endpoint (needs {min_role})")
                    context_check(ctx)  # the headers obey the rules of the parameters
                body = read_json_body(request) if parse_body and request.method == "POST" else None
                result = view(request, ctx, body, *args, **kwargs)
                if isinstance(result, JsonResponse):
                    return result
                return ok_response(result)
            except ToolError as exc:
                return error_response(exc)
            except ProfileLocked as exc:
                return error_response(Locked(str(exc)))
            except Exception:
                # A bug must still answer in the error shape (a client parses JSON, not
                # Django's HTML page); the traceback goes to the log.
                logger.exception("unhandled error in %s %s", request.method, request.path)
                return error_response(Internal("internal error; the server logged the details"))

        return wrapper

    return decorator
