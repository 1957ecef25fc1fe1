"""What the dashboard and the tools call: list runs, trigger a job, run one now, read a
run's progress."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import transaction

from apps.accounts.models import Profile
from apps.accounts.services import audit_record
from apps.pipeline import scheduling
from apps.pipeline.models import ACTIVE_STATUSES, KINDS, STATUS_QUEUED, JobRun

logger = logging.getLogger(__name__)


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


def job_run_now(
    *, profile: Profile, kind: str, actor: str, reason: str, wait_seconds: float,
    on_poll: Callable[[JobRun], None] | None = None,
) -> tuple[JobRun, bool]:
    """Run `kind` for the profile now and wait for it at most `wait_seconds`.

    Joins the run already queued or running (at most one per profile and job) instead of
    starting a second. A queued run is executed in a thread of this process; if a worker
    claims it first, that worker runs it and this call only waits. A run still going at
    the deadline keeps going (the thread is not a daemon of the answer). `on_poll` sees
    the run (status, progress) each time it is read while waiting. Returns
    (run, finished).
    """
    run = scheduling.request_run(profile=profile, kind=kind, reason=reason, requested_by=actor, send=False)
    if run is None:
        run = scheduling.active_run(profile=profile, kind=kind)
        if run is None:  # finished between the two reads: start a fresh one
            return job_run_now(profile=profile, kind=kind, actor=actor, reason=reason, wait_seconds=wait_seconds, on_poll=on_poll)
    else:
        audit_record(profile=profile, actor=actor, tool="pipeline", action="job_trigger", target_type="job_run",
                     target_id=str(run.pk), after={"kind": kind, "reason": reason})
    if run.status == STATUS_QUEUED:
        threading.Thread(target=_execute_here, args=(run.pk,), name=f"run-{run.pk}").start()
    deadline = time.monotonic() + max(0.0, wait_seconds)
    pause = 0.05
    while True:
        run.refresh_from_db(fields=["status", "counts", "error", "progress", "started_at", "finished_at"])
        if run.status not in ACTIVE_STATUSES:
            return run, True
        if on_poll is not None:
            on_poll(run)
        left = deadline - time.monotonic()
        if left <= 0:
            return run, False
        time.sleep(min(pause, left))
        pause = min(pause * 2, 0.5)


def _execute_here(run_id: int) -> None:
    from django.db import OperationalError, connections

    from apps.pipeline.jobs import execute_run

    try:
        # The claim is a conditional update (queued -> running), so trying it again is safe:
        # a run already claimed is not run twice. SQLite answers "table is locked" at once
        # (no busy wait) while the requesting thread reads the run, which left it queued.
        for attempt in range(6):
            try:
                execute_run(run_id=run_id)  # None when a worker claimed it first: it runs there
                break
            except OperationalError as exc:
                if "locked" not in str(exc) or attempt == 5:
                    raise
                time.sleep(0.05 * 2**attempt)
    except Exception:  # a thread has no caller to tell: the run row carries the failure
        logger.exception("run %s failed in the requesting process", run_id)
    finally:
        connections.close_all()  # this thread's connections only
