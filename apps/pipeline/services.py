"""What the dashboard calls: list runs, trigger a job, read a run's progress."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from apps.accounts.models import Profile
from apps.accounts.services import audit_record
from apps.pipeline import scheduling
from apps.pipeline.models import ACTIVE_STATUSES, KINDS, JobRun


def jobrun_list(*, profile: Profile, kind: str | None = None, status: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
    runs = JobRun.objects.filter(profile=profile).defer("transcript").select_related("profile").order_by("-id")
    if kind:
        runs = runs.filter(kind=kind)
    if status:
        runs = runs.filter(status=status)
    return [r.as_dict() for r in runs[: max(1, min(limit, 500))]]


def job_trigger(*, profile: Profile, kind: str, actor: str, reason: str = "", tool: str = "pipeline") -> tuple[JobRun, bool]:
    """Queue a manual run. Returns (run, created); with created=False the run is the
    one already queued or running (at most one per profile and job). `tool` names the
    door it came through in the audit event (the dashboard passes "dashboard")."""
    if kind not in KINDS:
        raise ValueError(f"unknown job {kind!r}; expected one of {', '.join(KINDS)}")
    with transaction.atomic():
        run = scheduling.request_run(profile=profile, kind=kind, reason=reason or f"manual: {actor}", requested_by=actor)
        if run is not None:
            audit_record(profile=profile, actor=actor, tool=tool, action="job_trigger", target_type="job_run",
                         target_id=str(run.pk), after={"kind": kind})
            return run, True
    active = scheduling.active_run(profile=profile, kind=kind)
    if active is None:  # finished between the two reads: try once more
        return job_trigger(profile=profile, kind=kind, actor=actor, reason=reason, tool=tool)
    return active, False


def jobrun_progress(*, run: JobRun) -> dict[str, Any]:
    run.refresh_from_db(fields=["status", "progress", "counts", "error", "started_at", "finished_at", "heartbeat_at"])
    return {
        "id": run.pk,
        "status": run.status,
        "active": run.status in ACTIVE_STATUSES,
        "progress": dict(run.progress or {}),
        "counts": dict(run.counts or {}),
        "error": run.error,
        "startedAt": run.as_dict()["startedAt"],
        "finishedAt": run.as_dict()["finishedAt"],
    }
