"""Rendering and error plumbing shared by the dashboard views."""

from __future__ import annotations

import re
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


_LEADS = {
    "invalid_params": "Please check the form",
    "conflict": "Not done",
    "forbidden": "Not allowed",
    "not_found": "Not found",
    "locked": "The profile is busy; try again in a moment",
}
# "sceneWrites.0.filename: " is a path the tools' callers need, people do not; a top-level
# form field ("newContent: ") is named in words.
_NESTED_PATH = re.compile(r"^[A-Za-z]+\.\d+\.[A-Za-z]+: ")
_FIELD = re.compile(r"^([A-Za-z]+): ")
_WORDS = {"newContent": "New content", "evidence": "Evidence", "reason": "Reason", "filename": "File name",
          "priority": "Priority", "text": "Entry text", "roots": "Project roots", "change": "Version", "version": "Version"}


def _plain(message: str) -> str:
    text = (message or "").strip().removeprefix("nothing was written: ")
    text = _NESTED_PATH.sub("", text)
    match = _FIELD.match(text)
    if match and match.group(1) in _WORDS:
        text = f"{_WORDS[match.group(1)]}: {text[match.end():]}"
    return text


def plain_refusal(refusal: dict[str, Any]) -> dict[str, Any]:
    """The refusal with `sentence` (one plain sentence) and `points` (the further problems,
    when several fields were wrong), so a person reads no field paths and no JSON.
    `code` stays for the title attribute and the tests."""
    details = refusal.get("details")
    points: list[str] = []
    if isinstance(details, list) and len(details) > 1:
        for item in details:
            if isinstance(item, dict) and isinstance(item.get("message"), str):
                points.append(_plain(f"{item.get('field') or ''}: {item['message']}".lstrip(": ")))
            elif isinstance(item, str):
                points.append(item)
    sentence = f"{_LEADS.get(refusal.get('code', ''), 'Not done')}: {_plain(refusal.get('message', ''))}"
    if not sentence.endswith((".", "?", "!")):
        sentence += "."
    return {**refusal, "sentence": sentence, "points": points}


def flash_refusal(request: HttpRequest, refusal: dict[str, Any]) -> None:
    messages.error(request, plain_refusal(refusal)["sentence"])
