"""Rendering and error plumbing shared by the dashboard views."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers

from apps.accounts.locks import ProfileLocked
from apps.dashboard.access import ProfileView, profiles_for_user
from apps.tools.errors import Locked, ToolError


def page(
    request: HttpRequest,
    pv: ProfileView | None,
    section: str,
    template: str,
    context: dict[str, Any],
    *,
    partial: str | None = None,
    status: int = 200,
) -> HttpResponse:
    """Render the page, or only its swappable partial for an htmx request."""
    ctx = {"pv": pv, "section": section, **context}
    htmx = getattr(request, "htmx", None)
    # A history-restore request (back button after htmx's cache dropped the page) needs the whole page.
    if partial and htmx and not htmx.boosted and not htmx.history_restore_request:
        response = render(request, partial, ctx, status=status)
    else:
        ctx["my_profiles"] = profiles_for_user(request.user)
        response = render(request, template, ctx, status=status)
    if partial:
        # One URL, two bodies: caches must not hand the fragment to a full page load.
        patch_vary_headers(response, ("HX-Request",))
    return response


def refusal_from(exc: Exception) -> dict[str, Any]:
    """A guard's refusal in the shape the templates show: code, message, details."""
    if isinstance(exc, ProfileLocked):
        exc = Locked(str(exc))
    if isinstance(exc, ToolError):
        return {"code": exc.code, "status": exc.status, "message": exc.message, "details": exc.details}
    return {"code": "error", "status": 400, "message": str(exc), "details": None}


def flash_refusal(request: HttpRequest, refusal: dict[str, Any]) -> None:
    messages.error(request, f"Refused ({refusal['code']}): {refusal['message']}")
