"""One log line and one metric observation per HTTP request."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from apps.metrics.instruments import observe_request

logger = logging.getLogger("memoryweb.request")

TOOL_CALL_ROUTE = "tool-call"


def request_endpoint(request: HttpRequest) -> tuple[str, str]:
    """(endpoint label, tool name or ""). A tool call is labelled by its tool, other
    requests by their route name; names outside the registry and unknown paths are
    folded into one label each, so a caller cannot grow the label set."""
    from apps.tools.registry import get_tool

    match = getattr(request, "resolver_match", None)
    if match is None:
        # WhiteNoise answers static files before URL resolution.
        return ("static" if request.path.startswith(settings.STATIC_URL) else "(unmatched)"), ""
    if match.url_name == TOOL_CALL_ROUTE:
        name = str(match.kwargs.get("name", ""))
        return (name, name) if get_tool(name) is not None else ("(unknown tool)", "")
    return match.view_name or "(unnamed)", ""


def request_profile(request: HttpRequest) -> str:
    ctx = getattr(request, "tool_context", None)  # set by apps.tools.http once a token is checked
    if ctx is not None:
        return ctx.profile.slug
    match = getattr(request, "resolver_match", None)
    return str(match.kwargs.get("slug", "")) if match is not None else ""


class RequestObservationMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.monotonic()
        response = self.get_response(request)
        seconds = time.monotonic() - started
        endpoint, tool = request_endpoint(request)
        observe_request(endpoint=endpoint, status=response.status_code, seconds=seconds)
        profile = request_profile(request)
        # The path without its query string: a search query is memory text.
        logger.info(
            "%s %s %s %.1fms profile=%s tool=%s", request.method, request.path, response.status_code, seconds * 1000,
            profile or "-", tool or "-",
            extra={"event": "request", "method": request.method, "path": request.path, "endpoint": endpoint,
                   "tool": tool, "profile": profile, "status": response.status_code,
                   "durationMs": round(seconds * 1000, 1)},
        )
        return response
