"""Jobs: runs with counts and durations, one run's live progress and transcript, manual
triggers. Progress is polled by htmx; the poll ends (286) once the run has finished."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseStopPolling

from apps.dashboard import presenters
from apps.dashboard.access import ProfileView, _get_profile_for_user, actor_for
from apps.dashboard.views.common import page
from apps.pipeline import selectors
from apps.pipeline.models import ACTIVE_STATUSES, KINDS, JobRun
from apps.pipeline.services import job_trigger as pipeline_job_trigger
from apps.scenes import selectors as scene_selectors


def _get_run_for_user(request: HttpRequest, slug: str, run_id: int) -> tuple[ProfileView, JobRun]:
    pv = _get_profile_for_user(request, slug)
    run = selectors.run_for_profile(pv.profile, run_id)
    if run is None:
        raise Http404("no such job run")
    return pv, run


@login_required
def job_list(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    kind = request.GET.get("kind", "")
    page_obj = Paginator(selectors.job_runs(pv.profile, kind=kind), 30).get_page(request.GET.get("page"))
    active = selectors.active_runs(pv.profile)
    context = {"page_obj": page_obj, "kinds": KINDS, "kind": kind, "active": active}
    return page(request, pv, "jobs", "dashboard/jobs/list.html", context)


def _run_context(pv: ProfileView, run: JobRun) -> dict:
    """The run with its counts as rows and, once it has finished, what its tool calls changed."""
    context = {"run": run, "counts": presenters.job_counts(run.counts)}
    if run.status not in ACTIVE_STATUSES:
        events = selectors.run_changes(run)
        blocks = scene_selectors.block_ids_by_filename(pv.profile, [e.target_id for e in events if e.target_type == "scene_block"])
        context["rows"] = presenters.audit_rows(events, pv.slug, blocks)
    return context


@login_required
def job_detail(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    pv, run = _get_run_for_user(request, slug, run_id)
    return page(request, pv, "jobs", "dashboard/jobs/detail.html", _run_context(pv, run))


@login_required
def job_progress(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    pv, run = _get_run_for_user(request, slug, run_id)
    response = page(request, pv, "jobs", "dashboard/jobs/detail.html", _run_context(pv, run), partial="dashboard/jobs/_progress.html")
    if getattr(request, "htmx", False) and run.status not in ACTIVE_STATUSES:
        stop = HttpResponseStopPolling(response.content)
        return stop
    return response


@login_required
@require_POST
def job_trigger(request: HttpRequest, slug: str) -> HttpResponse:
    pv = _get_profile_for_user(request, slug)
    kind = request.POST.get("kind", "")
    if kind not in KINDS:
        messages.error(request, f"Unknown job {kind!r}; expected one of {', '.join(KINDS)}.")
        return redirect("dashboard:jobs", slug=pv.slug)
    actor = actor_for(request)
    run, created = pipeline_job_trigger(profile=pv.profile, kind=kind, actor=actor, tool="dashboard",
                                        reason=f"manual: requested in the dashboard by {actor}")
    if not created:
        messages.warning(request, f"{kind} is already queued or running.")
        return redirect("dashboard:job", slug=pv.slug, run_id=run.pk)
    messages.success(request, f"Requested {kind} run #{run.pk}; its state below updates by itself.")
    return redirect("dashboard:job", slug=pv.slug, run_id=run.pk)
