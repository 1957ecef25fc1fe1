"""Read-only queries over job runs, for the dashboard, health and metrics."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from apps.accounts.models import Profile
from apps.pipeline.models import (
    ACTIVE_STATUSES,
    KINDS,
    STATUS_FAILED,
    STATUS_QUEUED,
    STATUS_RUNNING,
    JobRun,
)


def recent_jobs(profile: Profile, *, limit: int = 10) -> list[JobRun]:
    return list(JobRun.objects.filter(profile=profile).order_by("-id")[:limit])


def job_runs(profile: Profile, *, kind: str = "") -> QuerySet[JobRun]:
    """The profile's runs, newest first, without transcripts (`kind` narrows to one job)."""
    runs = JobRun.objects.filter(profile=profile).defer("transcript").order_by("-id")
    return runs.filter(kind=kind) if kind in KINDS else runs


def active_runs(profile: Profile) -> dict[str, JobRun]:
    """The queued or running run of each job that has one."""
    return {r.kind: r for r in JobRun.objects.filter(profile=profile, status__in=ACTIVE_STATUSES).defer("transcript")}


def run_for_profile(profile: Profile, run_id: int) -> JobRun | None:
    return JobRun.objects.filter(profile=profile, pk=run_id).first()


def run_actor(run: JobRun) -> str:
    """The actor a run's tool calls write as (see pipeline.jobs: job:<kind>:<run id>)."""
    return f"job:{run.kind}:{run.pk}"


def run_changes(run: JobRun, *, limit: int = 200) -> list:
    """The audit events the run's tool calls wrote, oldest first (what the run changed)."""
    from apps.accounts.selectors import audit_events

    return list(reversed(list(audit_events(run.profile, {}, exact_actor=run_actor(run))[:limit])))


def jobrun_queue_stats() -> dict[str, Any]:
    """Queued and running runs, the oldest queued run's age, failures of the last hour."""
    now = timezone.now()
    oldest = JobRun.objects.filter(status=STATUS_QUEUED).order_by("created_at").values_list("created_at", flat=True).first()
    return {
        "queued": JobRun.objects.filter(status=STATUS_QUEUED).count(),
        "running": JobRun.objects.filter(status=STATUS_RUNNING).count(),
        "failedLastHour": JobRun.objects.filter(status=STATUS_FAILED, finished_at__gte=now - timedelta(hours=1)).count(),
        "oldestQueuedSeconds": round((now - oldest).total_seconds(), 1) if oldest else 0.0,
    }
