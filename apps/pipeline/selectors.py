"""Read-only queries over job runs, for the dashboard."""

from __future__ import annotations

from django.db.models import QuerySet

from apps.accounts.models import Profile
from apps.pipeline.models import ACTIVE_STATUSES, KINDS, JobRun


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
