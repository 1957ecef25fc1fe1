from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from apps.dashboard import charts
from apps.dashboard.access import _get_profile_for_user
from apps.dashboard.views.common import page
from apps.hitstats import selectors
from apps.records import selectors as record_selectors


def _with_records(profile, rows: list) -> list[dict]:
    records = record_selectors.records_by_id(profile, [h.record_id for h in rows])
    return [{"hits": h, "record": records.get(h.record_id)} for h in rows]


@login_required
def hitstats_page(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    profile = pv.profile
    series = charts.daily_series(charts.per_day(selectors.recall_events(profile), days=30), days=30, today=timezone.now().date())
    never_paginator = Paginator(record_selectors.never_recalled(profile), 25)
    never_paginator.count = record_selectors.never_recalled_count(profile)  # same set, counted cheaply
    never = never_paginator.get_page(request.GET.get("page"))
    context = {
        "totals": selectors.hit_totals(profile),
        "most": _with_records(profile, selectors.most_effective(profile)),
        "least": _with_records(profile, selectors.least_effective(profile)),
        "chart": charts.bar_chart(series),
        "page_obj": never,
        "recent": selectors.recent_recalls(profile),
    }
    return page(request, pv, "hitstats", "dashboard/hitstats.html", context)
