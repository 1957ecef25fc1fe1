"""L2 scene blocks: live and archived lists, one block, archive/restore by a person."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from apps.dashboard import actions, charts, presenters
from apps.dashboard.access import ProfileView, _get_profile_for_user
from apps.dashboard.views.common import flash_refusal, page
from apps.records.selectors import records_by_id
from apps.scenes import selectors
from apps.scenes import services as scene_services
from apps.scenes.models import SceneBlock
from apps.tools.errors import ToolError


def _get_block_for_user(request: HttpRequest, slug: str, block_id: int) -> tuple[ProfileView, SceneBlock]:
    pv = _get_profile_for_user(request, slug)
    block = selectors.block_for_profile(pv.profile, block_id)
    if block is None:
        raise Http404("no such scene block")
    return pv, block


@login_required
def scene_list(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    counts = selectors.scene_counts(pv.profile)
    context = {
        "blocks": selectors.scene_blocks(pv.profile),
        "counts": counts,
        "level": charts.cap_level(counts["live"], counts["cap"]),
        "pool": selectors.scene_pool(pv.profile),
    }
    return page(request, pv, "scenes", "dashboard/scenes/list.html", context)


def _members(block: SceneBlock) -> list[dict]:
    ids = selectors.block_member_ids(block)
    records = records_by_id(block.profile, ids)
    return [{"record_id": i, "record": records.get(i)} for i in ids]


@login_required
def scene_detail(request: HttpRequest, slug: str, block_id: int) -> HttpResponse:
    pv, block = _get_block_for_user(request, slug, block_id)
    counts = selectors.scene_counts(pv.profile)
    context = {
        "sb": block,
        "members": _members(block),
        "backups": presenters.backup_diffs(selectors.block_backups(block)),
        "counts": counts,
        "level": charts.cap_level(counts["live"], counts["cap"]),
        "archive": _archive_status(pv, block),
    }
    return page(request, pv, "scenes", "dashboard/scenes/detail.html", context)


def _archive_status(pv: ProfileView, block: SceneBlock) -> dict | None:
    """Whether the archive guard would let this live block go now, in its own words, and
    from when (shown beside the button, before the click)."""
    if block.archived or block.removed:
        return None
    try:
        guide = scene_services.scene_archive_guide(profile=pv.profile, filename=block.filename)
    except ToolError:
        return None
    return {"archivable": guide.get("archivable", False), "why": guide.get("why", ""), "from": selectors.archivable_from(block)}


def _finish(request: HttpRequest, pv: ProfileView, block: SceneBlock, outcome: actions.Outcome) -> HttpResponse:
    if outcome.ok:
        messages.success(request, outcome.message)
    else:
        flash_refusal(request, outcome.refusal)
    return redirect("dashboard:scene", slug=pv.slug, block_id=block.pk)


@login_required
@require_POST
def scene_archive(request: HttpRequest, slug: str, block_id: int) -> HttpResponse:
    pv, block = _get_block_for_user(request, slug, block_id)
    return _finish(request, pv, block, actions.scene_archive(request, pv, block, request.POST.get("reason", "")))


@login_required
@require_POST
def scene_restore(request: HttpRequest, slug: str, block_id: int) -> HttpResponse:
    pv, block = _get_block_for_user(request, slug, block_id)
    return _finish(request, pv, block, actions.scene_restore(request, pv, block))
