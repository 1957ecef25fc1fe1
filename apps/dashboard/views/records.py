"""L1 records: the filterable table, one record's page, and the actions on records.

Every change goes through the records services (the same guards as the tools); the
dashboard only shows what they answer, refusals included."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import EmptyPage, PageNotAnInteger, Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from apps.dashboard import actions, exports, presenters
from apps.dashboard.access import ProfileView, _get_profile_for_user
from apps.dashboard.views.common import flash_refusal, page
from apps.hitstats import selectors as hit_selectors
from apps.records import selectors
from apps.records import services as record_services
from apps.records.models import SCOPES, TASK_STATES, L1Record
from apps.scenes import selectors as scene_selectors

PAGE_SIZES = (25, 50, 100, 200)


def _page_size(raw: str | None) -> int:
    try:
        size = int(raw or 50)
    except ValueError:
        return 50
    return size if size in PAGE_SIZES else 50


@login_required
def record_list(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    profile = pv.profile
    filters = selectors.RecordFilters.from_query(request.GET)
    mode = request.GET.get("mode", "keyword")
    context: dict[str, Any] = {"filters": filters, "mode": mode}
    if mode == "semantic" and filters.q:
        context.update(actions.semantic_search(request, pv, filters))
    else:
        paginator = Paginator(selectors.filter_records(profile, filters), _page_size(request.GET.get("per_page")))
        try:
            page_obj = paginator.page(request.GET.get("page") or 1)
        except PageNotAnInteger:
            page_obj = paginator.page(1)
        except EmptyPage:
            page_obj = paginator.page(paginator.num_pages)
        rows = list(page_obj.object_list.only(*selectors.LIST_FIELDS))
        context.update(
            page_obj=page_obj,
            rows=rows,
            hits=hit_selectors.hits_for(profile, [r.record_id for r in rows]),
            page_range=page_obj.paginator.get_elided_page_range(page_obj.number, on_each_side=2, on_ends=1),
            record_base=reverse("dashboard:records", args=[pv.slug]),
        )
    context.update(
        # Counts beside the filter values cost one grouped query; with a filter that makes it
        # a scan they are computed only when asked for (?facets=1).
        facets=selectors.facet_counts(profile, filters) if selectors.facets_are_cheap(filters) or request.GET.get("facets") == "1" else None,
        types=selectors.types_for_mode(profile),
        scopes=SCOPES,
        task_states=TASK_STATES,
        statuses=selectors.STATUSES,
        sorts=list(selectors.SORT_LABELS.items()),
        scene_choices=scene_selectors.scene_choices(profile),
        project_choices=selectors.project_choices(profile),
        page_sizes=PAGE_SIZES,
    )
    return page(request, pv, "records", "dashboard/records/list.html", context, partial="dashboard/records/_results.html")


def _get_record_for_user(request: HttpRequest, slug: str, record_id: str) -> tuple[ProfileView, L1Record]:
    pv = _get_profile_for_user(request, slug)
    record = selectors.record_find(pv.profile, record_id)
    if record is None:
        raise Http404("no such record")
    return pv, record


@login_required
def record_detail(request: HttpRequest, slug: str, record_id: str) -> HttpResponse:
    pv, record = _get_record_for_user(request, slug, record_id)
    return page(request, pv, "records", "dashboard/records/detail.html", _record_context(pv, record))


def _record_context(pv: ProfileView, record: L1Record, **extra: Any) -> dict[str, Any]:
    profile = pv.profile
    hits = hit_selectors.hits_for(profile, [record.record_id]).get(record.record_id)
    changes = selectors.record_changes(record)
    related = selectors.related_records(record, changes)
    recalls = hit_selectors.record_recalls(profile, record.record_id)
    return {
        "record": record,
        "history": presenters.history_steps(changes),
        "related": related,
        "predecessors": presenters.predecessor_diffs(record, related["replaced"]),
        "created_by": changes[0] if changes else None,
        "last_recall": recalls[0] if recalls else None,
        "undo": presenters.tombstone_undo(record, changes),
        "guards": record_services.fix_guard_status(profile=profile, record_id=record.record_id, is_admin=pv.is_admin),
        "hits": hits,
        "recalls": recalls,
        "blocks": scene_selectors.record_blocks(profile, record.record_id),
        "cited": actions.cited_messages(profile, list(record.source_message_ids or [])),
        "task_states": TASK_STATES,
        "fix_min_evidence": actions.fix_min_evidence(profile),
        **extra,
    }


def _after_action(request: HttpRequest, pv: ProfileView, record: L1Record, outcome: actions.Outcome) -> HttpResponse:
    """A success reloads the record's page (a rewrite moves to the new record); a refusal
    re-renders the page (or, for htmx, the action panel) with the refusal and with what
    the person typed, so nothing has to be retyped."""
    target = reverse("dashboard:record", args=[pv.slug, outcome.redirect_record_id or record.record_id])
    if outcome.ok:
        messages.success(request, outcome.message)
        if getattr(request, "htmx", False):
            return HttpResponseClientRedirect(target)
        return redirect(target)
    fresh = selectors.record_find(pv.profile, record.record_id) or record
    typed = {k: request.POST.get(k, "") for k in ("action", "newContent", "evidence", "reason", "priority")}
    if not getattr(request, "htmx", False):
        flash_refusal(request, outcome.refusal)
    return page(request, pv, "records", "dashboard/records/detail.html",
                _record_context(pv, fresh, refusal=outcome.refusal, typed=typed), partial="dashboard/records/_actions.html")


@login_required
@require_POST
def record_fix(request: HttpRequest, slug: str, record_id: str) -> HttpResponse:
    pv, record = _get_record_for_user(request, slug, record_id)
    outcome = actions.fix_record(request, pv, record, request.POST)
    return _after_action(request, pv, record, outcome)


@login_required
@require_POST
def record_task_state(request: HttpRequest, slug: str, record_id: str) -> HttpResponse:
    pv, record = _get_record_for_user(request, slug, record_id)
    outcome = actions.set_task_state(request, pv, [record.record_id], request.POST.get("state", ""), request.POST.get("reason", ""))
    return _after_action(request, pv, record, outcome)


@login_required
@require_POST
def record_restore(request: HttpRequest, slug: str, record_id: str) -> HttpResponse:
    pv, record = _get_record_for_user(request, slug, record_id)
    outcome = actions.restore_version(request, pv, record, request.POST)
    return _after_action(request, pv, record, outcome)


@login_required
@require_POST
def record_bulk(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    ids = [i for i in request.POST.getlist("ids") if i][:500]
    action = request.POST.get("action", "")
    back = reverse("dashboard:records", args=[pv.slug]) + ("?" + request.POST["back"] if request.POST.get("back") else "")
    if not ids:
        messages.error(request, "Select at least one record.")
        return redirect(back)
    if action == "tombstone":
        outcome = actions.bulk_tombstone(request, pv, ids, request.POST.get("evidence", ""), request.POST.get("reason", ""))
    elif action.startswith("task_state:"):
        outcome = actions.set_task_state(request, pv, ids, action.split(":", 1)[1], request.POST.get("reason", ""))
    else:
        messages.error(request, f"Unknown bulk action {action!r}.")
        return redirect(back)
    if outcome.ok:
        messages.success(request, outcome.message)
    else:
        flash_refusal(request, outcome.refusal)
    for line in outcome.details:
        messages.warning(request, line)
    return redirect(back)


@login_required
def record_export(request: HttpRequest, slug: str) -> HttpResponse:
    """The current filtered list (keyword filters and sort) as CSV or JSON, at most
    `EXPORT_LIMIT` rows; the `X-Total-Count` header says how many matched."""
    pv = _get_profile_for_user(request, slug)
    fmt = request.GET.get("format", "csv")
    if fmt not in exports.FORMATS:
        return JsonResponse({"error": {"code": "invalid_params", "message": "format must be csv or json", "details": None}}, status=400)
    filters = selectors.RecordFilters.from_query(request.GET)
    rows = selectors.export_rows(pv.profile, filters)
    total = selectors.filter_records(pv.profile, filters).count()
    response = HttpResponse(exports.render(fmt, rows, total=total, ignored=filters.errors), content_type=exports.FORMATS[fmt])
    response["Content-Disposition"] = f'attachment; filename="memoryweb-{pv.slug}-records.{fmt}"'
    response["X-Total-Count"] = str(total)
    return response
