"""L3 persona: USER.md beside the proposal USER-temp.md as an entry-level diff; a person
accepts all, or accepts / rejects / edits single entries; merge history with restore."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from apps.dashboard import actions, presenters
from apps.dashboard.access import ProfileView, _get_profile_for_user
from apps.dashboard.views.common import flash_refusal, page
from apps.persona import selectors
from apps.scenes import services as scene_services


def _context(pv: ProfileView, **extra) -> dict:
    review = presenters.persona_rows(selectors.persona_review(pv.profile))
    return {
        "diff": review,
        "proposers": selectors.entry_proposers(pv.profile, [r["text"] for r in review["changed"]]),
        "rejections": selectors.persona_rejections(pv.profile),
        "versions": selectors.persona_versions(pv.profile),
        # Why the scene organizer asked for a persona run (l2_commit personaReason).
        "requests": scene_services.scene_persona_requests(profile=pv.profile, limit=10),
        **extra,
    }


@login_required
def persona_page(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    return page(request, pv, "persona", "dashboard/persona/page.html", _context(pv), partial="dashboard/persona/_review.html")


def _finish(request: HttpRequest, pv: ProfileView, outcome: actions.Outcome) -> HttpResponse:
    if getattr(request, "htmx", False):
        # The review region re-renders in place with the new budget; refusals show inline.
        if outcome.ok:
            return page(request, pv, "persona", "dashboard/persona/page.html", _context(pv, notice=outcome.message), partial="dashboard/persona/_review.html")
        return page(request, pv, "persona", "dashboard/persona/page.html", _context(pv, refusal=outcome.refusal), partial="dashboard/persona/_review.html")
    if outcome.ok:
        messages.success(request, outcome.message)
    else:
        flash_refusal(request, outcome.refusal)
    return redirect(reverse("dashboard:persona", args=[pv.slug]))


@login_required
@require_POST
def persona_merge_all(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    return _finish(request, pv, actions.persona_merge_all(request, pv))


@login_required
@require_POST
def persona_entry(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    return _finish(request, pv, actions.persona_entry(request, pv, request.POST))


@login_required
@require_POST
def persona_restore(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    return _finish(request, pv, actions.persona_restore(request, pv, request.POST.get("version", "")))
