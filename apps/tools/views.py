"""Tool API endpoints: catalog, OpenAPI, call, health."""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.http import HttpRequest

from apps.accounts.models import ROLE_ADMIN
from apps.tools.dispatch import call_tool
from apps.tools.errors import Unavailable
from apps.tools.http import api_view, context_from_request, ok_response
from apps.tools.openapi import openapi_document
from apps.tools.registry import ToolContext, all_tools, health_checks


@api_view(methods=("GET",), min_role="agent", parse_body=False)
def tools_catalog(request: HttpRequest, ctx: ToolContext | None, body: Any) -> Any:
    return [
        {"name": spec.name, "description": spec.description, "parameters": spec.json_schema(), "roles": spec.roles}
        for spec in all_tools()
    ]


@api_view(methods=("GET",), min_role=None, parse_body=False)
def openapi(request: HttpRequest, ctx: ToolContext | None, body: Any) -> Any:
    return openapi_document()


@api_view(methods=("POST",), min_role="agent")
def tool_call(request: HttpRequest, ctx: ToolContext, body: Any, name: str) -> Any:
    return call_tool(name, body, ctx)


@api_view(methods=("GET",), min_role=None, parse_body=False)
def health(request: HttpRequest, ctx: ToolContext | None, body: Any) -> Any:
    """Anyone may ask whether the service is up; only an admin token sees the checks,
    whose messages name hosts, paths and versions."""
    detailed = False
    if request.headers.get("Authorization"):
        ctx = context_from_request(request)  # a bad token is refused, not ignored
        request.tool_context = ctx  # type: ignore[attr-defined]  # an ad-hoc attribute read by the request log
        detailed = ctx.role == ROLE_ADMIN
    checks: dict[str, Any] = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = {"ok": True, "vendor": connection.vendor}
    except Exception as exc:  # noqa: BLE001 — health must answer, whatever is broken
        checks["database"] = {"ok": False, "error": str(exc)}
    for name, func in health_checks().items():
        try:
            checks[name] = func()
        except Exception as exc:  # noqa: BLE001 — one failing check must not hide the others
            checks[name] = {"ok": False, "error": str(exc)}
    ok = checks["database"]["ok"]
    status = "ok" if all(c.get("ok") for c in checks.values()) else ("degraded" if ok else "down")
    response = ok_response({"status": status, "checks": checks} if detailed else {"status": status})
    if not ok:
        response.status_code = Unavailable.status
    return response
