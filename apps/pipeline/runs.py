"""The run lifecycle: one run per (profile, job) at a time, sending it to a worker,
and finding runs whose worker or message was lost. What makes a run due is
`apps.pipeline.policy`."""

from __future__ import annotations

import logging
import os
import socket
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.accounts.models import Profile
from apps.pipeline.models import (
    ACTIVE_STATUSES,
    DRIVER_LLM,
    DRIVER_RULES,
    KIND_L1,
    KIND_L2,
    KIND_L3,
    KIND_SKILL,
    KINDS,
    STATUS_FAILED,
    STATUS_QUEUED,
    STATUS_RUNNING,
    JobRun,
)

logger = logging.getLogger(__name__)

JOB_TIMEOUT_SECONDS = {KIND_L1: 180, KIND_L2: 300, KIND_L3: 180, KIND_SKILL: 180}
# A queued run whose message has not started after this long is sent again.
RESEND_AFTER_SECONDS = 60
# A running run with no heartbeat for its timeout plus this grace lost its worker.
HEARTBEAT_GRACE_SECONDS = 90


def driver_for(kind: str) -> str:
    return DRIVER_LLM if (settings.LLM_BASE_URL and settings.LLM_MODEL) else DRIVER_RULES


def request_run(
    *, profile: Profile, kind: str, reason: str, requested_by: str = "scheduler", send: bool = True
) -> JobRun | None:
    """Create a queued run and (with `send`) enqueue it after commit. None when one is already active."""
    if kind not in KINDS:
        raise ValueError(f"unknown job kind {kind!r}; expected one of {', '.join(KINDS)}")
    try:
        with transaction.atomic():
            run = JobRun.objects.create(
                profile=profile, kind=kind, driver=driver_for(kind), status=STATUS_QUEUED,
                trigger_reason=reason[:300], requested_by=requested_by[:200],
                progress={"step": "queued", "updatedAt": _now_iso()},
            )
            if send:
                transaction.on_commit(lambda: enqueue(run))
    except IntegrityError:
        return None  # another process created the active run first
    return run


def active_run(*, profile: Profile, kind: str) -> JobRun | None:
    return JobRun.objects.filter(profile=profile, kind=kind, status__in=ACTIVE_STATUSES).first()


def enqueue(run: JobRun) -> bool:
    """Send the run's message. A broker that is down leaves the run queued for the sweep."""
    from apps.pipeline import tasks

    timeout = JOB_TIMEOUT_SECONDS[run.kind]
    now = timezone.now()
    try:
        result = tasks.run_job.apply_async(args=[run.pk], soft_time_limit=timeout + 30, time_limit=timeout + 60)
    except Exception as exc:  # noqa: BLE001 — kombu raises many types for a broker that is down
        logger.warning("could not enqueue %s run %s (%s); the sweep re-sends it", run.kind, run.pk, exc)
        JobRun.objects.filter(pk=run.pk).update(
            enqueue_attempts=run.enqueue_attempts + 1, enqueued_at=now, enqueue_error=f"{type(exc).__name__}: {exc}"[:2000]
        )
        return False
    JobRun.objects.filter(pk=run.pk).update(
        enqueue_attempts=run.enqueue_attempts + 1, enqueued_at=now, enqueue_error="", task_id=str(result.id or "")[:64]
    )
    return True


def this_worker() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A killed process can linger as a zombie until its parent (or init) reaps it.
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in (b"Z", b"X")


def reap_lost_runs(*, now: datetime | None = None) -> list[int]:
    """Fail running runs whose worker process is gone (same host) or went silent."""
    now = now or timezone.now()
    host = socket.gethostname()
    failed: list[int] = []
    for run in JobRun.objects.filter(status=STATUS_RUNNING):
        worker_host, _, pid_text = run.worker.rpartition(":")
        reason = ""
        if worker_host == host and pid_text.isdigit() and not _pid_alive(int(pid_text)):
            reason = f"worker lost: process {run.worker} is gone (killed or crashed mid-run)"
        else:
            beat = run.heartbeat_at or run.started_at or run.created_at
            limit = JOB_TIMEOUT_SECONDS[run.kind] + HEARTBEAT_GRACE_SECONDS
            if (now - beat).total_seconds() > limit:
                reason = f"worker lost: no heartbeat from {run.worker or 'the worker'} for over {limit} s"
        if reason:
            updated = JobRun.objects.filter(pk=run.pk, status=STATUS_RUNNING).update(
                status=STATUS_FAILED, finished_at=now, error=reason,
                progress={**(run.progress or {}), "step": "failed", "updatedAt": _now_iso()},
            )
            if updated:
                failed.append(run.pk)
    return failed


def resend_stale_queued(*, now: datetime | None = None) -> list[int]:
    now = now or timezone.now()
    resent = []
    cutoff = now - timedelta(seconds=RESEND_AFTER_SECONDS)
    for run in JobRun.objects.filter(status=STATUS_QUEUED):
        last = run.enqueued_at or run.created_at
        if last <= cutoff and enqueue(run):
            resent.append(run.pk)
    return resent


def _now_iso() -> str:
    return timezone.now().isoformat().replace("+00:00", "Z")
