from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from apps.conversations import selectors as l0_selectors
from apps.dashboard import charts, cursors
from apps.dashboard.access import _get_profile_for_user
from apps.dashboard.views.common import page
from apps.persona import selectors as persona_selectors
from apps.pipeline import selectors as job_selectors
from apps.records import selectors
from apps.scenes import selectors as scene_selectors
from apps.search import selectors as search_selectors
from apps.tools.registry import health_report


@login_required
def overview(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    profile = pv.profile
    scenes = scene_selectors.scene_counts(profile)
    series = charts.daily_series(charts.per_day(selectors.profile_records(profile), days=30), days=30, today=timezone.now().date())
    open_count, open_list = selectors.open_tasks(profile)
    context = {
        "counts": selectors.record_counts(profile),
        "l0": l0_selectors.l0_counts(profile),
        "scenes": scenes,
        "scene_level": charts.cap_level(scenes["live"], scenes["cap"]),
        "chart": charts.bar_chart(series),
        "open_count": open_count,
        "open_list": open_list,
        "cursors": [cursors.describe(profile, c) for c in l0_selectors.cursors(profile)],
        "pending_index_ops": search_selectors.pending_index_ops(profile),
        "persona": persona_selectors.persona_summary(profile),
        "jobs": job_selectors.recent_jobs(profile, limit=6),
    }
    return page(request, pv, "overview", "dashboard/overview.html", context)


@login_required
def health(request: HttpRequest, slug: str) -> HttpResponse:
    """Index and model health, loaded after the page (checks may take a moment)."""
    pv = _get_profile_for_user(request, slug)
    return page(request, pv, "overview", "dashboard/health.html", {"checks": health_report()}, partial="dashboard/_health.html")
