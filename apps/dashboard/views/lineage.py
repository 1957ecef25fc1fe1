"""Lineage pages: where a record, a scene block or a persona entry came from and where it
went, L0 → L1 → L2 → L3, every step a link."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse

from apps.dashboard import lineage
from apps.dashboard.access import _get_profile_for_user
from apps.dashboard.views.common import page
from apps.persona import selectors as persona_selectors
from apps.records import selectors as record_selectors
from apps.scenes import selectors as scene_selectors


def _lineage_page(request: HttpRequest, slug: str, section: str, find: Callable[[Any], Any], chain: Callable[[Any, Any], dict]) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    subject = find(pv.profile)
    if subject is None:
        raise Http404(f"no such {section} item")
    return page(request, pv, section, "dashboard/lineage.html", {"chain": chain(pv.profile, subject)})


@login_required
def record_lineage(request: HttpRequest, slug: str, record_id: str) -> HttpResponse:
    return _lineage_page(request, slug, "records", lambda p: record_selectors.record_find(p, record_id), lineage.record_lineage)


@login_required
def block_lineage(request: HttpRequest, slug: str, block_id: int) -> HttpResponse:
    return _lineage_page(request, slug, "scenes", lambda p: scene_selectors.block_for_profile(p, block_id), lineage.block_lineage)


@login_required
def entry_lineage(request: HttpRequest, slug: str, index: int) -> HttpResponse:
    return _lineage_page(request, slug, "persona", lambda p: persona_selectors.proposal_entry(p, index), lineage.entry_lineage)
