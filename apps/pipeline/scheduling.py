"""Scheduling of the jobs, kept as one import for its callers: the trigger policy lives
in `apps.pipeline.policy`, the run lifecycle in `apps.pipeline.runs`, the backlog counts
in `apps.conversations.backlog`. Patch those modules, not this one, in tests."""

from apps.conversations.backlog import Backlog, l0_backlog, skill_feed_tool_calls
from apps.pipeline.policy import (
    FAILURE_BACKOFF_BASE,
    FAILURE_BACKOFF_MAX,
    L1_IDLE_SECONDS,
    L1_STEADY,
    L1_WARMUP,
    L2_FIRST_DELAY_SECONDS,
    L2_MIN_GAP_SECONDS,
    L3_NEW_RECORDS,
    SKILL_TOOL_CALLS,
    Decision,
    consider,
    evaluate,
    failure_backoff_until,
    l1_threshold,
    on_l0_appended,
    on_l1_committed,
    on_l2_committed,
    on_skill_feed_appended,
    sweep,
)
from apps.pipeline.runs import (
    HEARTBEAT_GRACE_SECONDS,
    JOB_TIMEOUT_SECONDS,
    RESEND_AFTER_SECONDS,
    active_run,
    driver_for,
    enqueue,
    reap_lost_runs,
    request_run,
    resend_stale_queued,
    this_worker,
)

__all__ = [
    "FAILURE_BACKOFF_BASE", "FAILURE_BACKOFF_MAX", "HEARTBEAT_GRACE_SECONDS", "JOB_TIMEOUT_SECONDS", "L1_IDLE_SECONDS",
    "L1_STEADY", "L1_WARMUP", "L2_FIRST_DELAY_SECONDS", "L2_MIN_GAP_SECONDS", "L3_NEW_RECORDS", "RESEND_AFTER_SECONDS",
    "SKILL_TOOL_CALLS", "Backlog", "Decision", "active_run", "consider", "driver_for", "enqueue", "evaluate",
    "failure_backoff_until", "l0_backlog", "l1_threshold", "on_l0_appended", "on_l1_committed", "on_l2_committed",
    "on_skill_feed_appended", "reap_lost_runs", "request_run", "resend_stale_queued", "skill_feed_tool_calls", "sweep",
    "this_worker",
]
