"""Lineage pages: where a record, a scene block or a persona entry came from and where it
went, L0 → L1 → L2 → L3, every step a link."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse

from apps.dashboard import lineage
from apps.dashboard.access import _get_profile_for_user
from apps.dashboard.views.common import page
from apps.persona import selectors as persona_selectors
from apps.records import selectors as record_selectors
from apps.scenes import selectors as scene_selectors


@login_required
def record_lineage(request: HttpRequest, slug: str, record_id: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    record = record_selectors.record_find(pv.profile, record_id)
    if record is None:
        raise Http404("no such record")
    return page(request, pv, "records", "dashboard/lineage.html", {"chain": lineage.record_lineage(pv.profile, record)})


@login_required
def block_lineage(request: HttpRequest, slug: str, block_id: int) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    block = scene_selectors.block_for_profile(pv.profile, block_id)
    if block is None:
        raise Http404("no such scene block")
    return page(request, pv, "scenes", "dashboard/lineage.html", {"chain": lineage.block_lineage(pv.profile, block)})


@login_required
def entry_lineage(request: HttpRequest, slug: str, index: int) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    entry = persona_selectors.proposal_entry(pv.profile, index)
    if entry is None:
        raise Http404("no such persona entry")
    return page(request, pv, "persona", "dashboard/lineage.html", {"chain": lineage.entry_lineage(pv.profile, entry)})
