"""Executing one job run: claim it, pick the driver, record counts, progress and errors.

A failed run changes no cursor by itself: cursors move only inside the commit tools
(l1_commit, l2_commit, l3_commit), so whatever a run did not commit is read again by the
next run.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.db import OperationalError, connection
from django.utils import timezone

from apps.accounts.locks import is_lock_error
from apps.metrics.instruments import observe_job
from apps.pipeline.errors import JobFailed
from apps.pipeline.executor import ToolExecutor, executor_for
from apps.pipeline.models import (
    DRIVER_LLM,
    KIND_L3,
    STATUS_FAILED,
    STATUS_QUEUED,
    STATUS_RUNNING,
    STATUS_SUCCEEDED,
    JobRun,
    JobSignal,
)
from apps.pipeline.scheduling import JOB_TIMEOUT_SECONDS, this_worker

logger = logging.getLogger(__name__)
# One line per finished run (the request log's counterpart), under a name operators can filter.
job_log = logging.getLogger("memoryweb.job")


class RunContext:
    """What a driver gets: the run, a tool executor, a deadline, counters and progress."""

    PROGRESS_MIN_INTERVAL = 0.5

    def __init__(self, run: JobRun, executor: ToolExecutor, *, timeout: float):
        self.run = run
        self.profile = run.profile
        self.kind = run.kind
        self.executor = executor
        self.started = time.monotonic()
        self.timeout = timeout
        self.deadline = self.started + timeout
        self.counts: dict[str, Any] = {}
        self.transcript: list[dict[str, Any]] = []
        self._last_progress = 0.0

    # -- time
    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def elapsed(self) -> float:
        return round(time.monotonic() - self.started, 3)

    def check_deadline(self) -> None:
        if self.remaining() <= 0:
            raise JobFailed(f"timed out after {self.timeout:.0f} s")

    # -- bookkeeping
    def add(self, key: str, amount: int = 1) -> None:
        self.counts[key] = int(self.counts.get(key, 0)) + amount

    def progress(self, step: str, message: str = "", *, done: int | None = None, total: int | None = None, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_progress < self.PROGRESS_MIN_INTERVAL:
            return
        self._last_progress = now
        data = {"step": step, "message": message[:500], "updatedAt": _now_iso(), "elapsed": self.elapsed()}
        if done is not None:
            data["done"] = done
        if total is not None:
            data["total"] = total
        # A heartbeat is bookkeeping: one that cannot get the lock is dropped (the next one,
        # or the run's final write, carries the same fields) rather than failing the run.
        _update_run(self.run.pk, required=False, progress=data, heartbeat_at=timezone.now(), counts=dict(self.counts))

    def tool(self, name: str, params: dict[str, Any], *, session_key: str = "", cwd: str = "") -> Any:
        self.check_deadline()
        self.add(f"toolCalls.{name}")
        started = time.monotonic()
        try:
            return self.executor.call(name, params, session_key=session_key, cwd=cwd)
        finally:
            # Where a run's time goes: its tools (the services behind them) or the driver itself.
            self.add(f"toolMs.{name}", round((time.monotonic() - started) * 1000))


def _claim(run_id: int) -> JobRun | None:
    now = timezone.now()
    updated = JobRun.objects.filter(pk=run_id, status=STATUS_QUEUED).update(
        status=STATUS_RUNNING, started_at=now, heartbeat_at=now, worker=this_worker(),
        progress={"step": "starting", "updatedAt": _now_iso()},
    )
    if not updated:
        return None
    return JobRun.objects.select_related("profile").get(pk=run_id)


def execute_run(*, run_id: int, executor: ToolExecutor | None = None) -> JobRun | None:
    """Run a queued run to its end. Returns None when it was not queued (already taken)."""
    run = _claim(run_id)
    if run is None:
        logger.info("run %s is not queued any more; nothing to do", run_id)
        return None
    if run.kind == KIND_L3:
        JobSignal.objects.filter(profile=run.profile, kind=KIND_L3, consumed_by__isnull=True).update(consumed_by=run)
    from apps.pipeline.selectors import run_actor  # the one spelling of a run's actor (the dashboard reads it back)

    executor = executor or executor_for(run.profile, actor=run_actor(run))
    ctx = RunContext(run, executor, timeout=JOB_TIMEOUT_SECONDS[run.kind])
    ctx.counts["transport"] = executor.transport
    status, error = STATUS_SUCCEEDED, ""
    try:
        driver = _driver(run)
        driver(ctx)
    except JobFailed as exc:
        status, error = STATUS_FAILED, str(exc)
    except Exception as exc:  # includes Celery's SoftTimeLimitExceeded
        logger.exception("%s run %s failed", run.kind, run.pk)
        status, error = STATUS_FAILED, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    finished = timezone.now()
    _update_run(
        run.pk, required=True,
        status=status, finished_at=finished, error=error[:10000], counts=ctx.counts,
        transcript=ctx.transcript, heartbeat_at=finished,
        progress={"step": status, "message": error[:500], "updatedAt": _now_iso(), "elapsed": ctx.elapsed()},
    )
    run.refresh_from_db()
    seconds = ctx.elapsed()
    observe_job(kind=run.kind, status=status, seconds=seconds)
    job_log.info(
        "job %s run %s %s %.1fms profile=%s", run.kind, run.pk, status, seconds * 1000, run.profile.slug,
        extra={"event": "job", "profile": run.profile.slug, "tool": run.kind, "run": run.pk, "driver": run.driver,
               "status": status, "durationMs": round(seconds * 1000, 1), "error": error[:300]},
    )
    _follow_up(run)
    return run


def _update_run(run_pk: int, *, required: bool, attempts: int = 6, **fields: Any) -> None:
    """Write fields of the run row, waiting out a lock held by a reader of the same row.

    SQLite answers "table is locked" at once, with no busy wait, when another connection
    of a shared cache is reading the table (the requesting thread polling the run while
    it waits for the answer). A required write (the run's outcome) is retried until the
    attempts run out and then raises; a heartbeat gives up quietly after them."""
    for attempt in range(attempts):
        try:
            JobRun.objects.filter(pk=run_pk).update(**fields)  # one statement: autocommit is its transaction
            return
        except OperationalError as exc:
            # Inside a caller's transaction the failed statement has spoilt it: retrying cannot help.
            if connection.in_atomic_block or not is_lock_error(exc):
                raise
            if attempt == attempts - 1:
                if required:
                    raise
                logger.warning("run %s: heartbeat not written, the run row stayed locked: %s", run_pk, exc)
                return
            time.sleep(0.02 * 2**attempt)


def _driver(run: JobRun):
    if run.driver == DRIVER_LLM:
        from apps.pipeline.llm import run_llm_job

        return run_llm_job
    from apps.pipeline.rules import RULES_DRIVERS

    return RULES_DRIVERS[run.kind]


def _follow_up(run: JobRun) -> None:
    """After a run, its own trigger may still hold (a backlog beyond one batch)."""
    from apps.pipeline.scheduling import consider

    if run.status != STATUS_SUCCEEDED:
        return  # the sweep retries failed work later; an immediate retry could loop
    try:
        consider(profile=run.profile, kind=run.kind)
    except Exception:
        logger.exception("follow-up trigger check after run %s failed", run.pk)


def _now_iso() -> str:
    return timezone.now().isoformat().replace("+00:00", "Z")
