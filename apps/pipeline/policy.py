"""When does a job run (SPEC §5 triggers): the trigger policy.

Every trigger is derived from the data itself (L0 bytes beyond the L1 cursor, L1 changes
beyond the L2 cursor, records since the last L3 run, tool calls in the feed beyond its
cursor), so a hook that never fired, a broker that was down or a worker that died loses
nothing: the periodic sweep re-evaluates every (profile, job) and finds the same work.
The hooks below only make the common case fast. The backlog counts are the
conversations app's (`apps.conversations.backlog`: its eligibility rule and its
confined shard listing); the run lifecycle is `apps.pipeline.runs`.

Hooks are called from `transaction.on_commit` inside API requests: they never raise.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from apps.accounts.models import Profile
from apps.conversations.backlog import l0_backlog, skill_feed_tool_calls
from apps.pipeline.models import (
    ACTIVE_STATUSES,
    KIND_L1,
    KIND_L2,
    KIND_L3,
    KIND_SKILL,
    KINDS,
    STATUS_FAILED,
    STATUS_SUCCEEDED,
    JobRun,
    JobSignal,
)
from apps.pipeline.runs import reap_lost_runs, request_run, resend_stale_queued

logger = logging.getLogger(__name__)

# SPEC §5 numbers.
L1_WARMUP = (1, 2, 4)
L1_STEADY = 5
L1_IDLE_SECONDS = 600
L2_FIRST_DELAY_SECONDS = 90
L2_MIN_GAP_SECONDS = 900
L3_NEW_RECORDS = 50
SKILL_TOOL_CALLS = 10
FAILURE_BACKOFF_BASE = 60
FAILURE_BACKOFF_MAX = 3600


@dataclass(frozen=True)
class Decision:
    due: bool
    reason: str = ""
    # Not due yet but will be at this time (a delayed re-check is scheduled).
    recheck_at: datetime | None = None


# --------------------------------------------------------------------------- hooks


def on_l0_appended(*, profile_id: int, eligible: int) -> None:
    if eligible > 0:
        _safe_consider(profile_id, KIND_L1)


def on_l1_committed(*, profile_id: int, stored: int, source: str) -> None:
    if source == "subagent" and stored > 0:
        _safe_consider(profile_id, KIND_L2)
    if stored > 0:
        _safe_consider(profile_id, KIND_L3)


def on_l2_committed(*, profile_id: int, persona_signal: bool, reason: str) -> None:
    if persona_signal:
        try:
            JobSignal.objects.create(profile_id=profile_id, kind=KIND_L3, reason=(reason or "personaSignal")[:2000])
        except Exception:  # the API call that caused this must not fail
            logger.exception("could not record the persona signal of profile %s", profile_id)
    _safe_consider(profile_id, KIND_L3)


def on_skill_feed_appended(*, profile_id: int, tool_calls: int) -> None:
    if tool_calls > 0:
        _safe_consider(profile_id, KIND_SKILL)


def _safe_consider(profile_id: int, kind: str) -> None:
    try:
        profile = Profile.objects.get(pk=profile_id)
        consider(profile=profile, kind=kind)
    except Exception:
        # Never fail the caller: the sweep evaluates the same trigger again.
        logger.exception("trigger check %s for profile %s failed; the sweep will retry", kind, profile_id)


# --------------------------------------------------------------------------- evaluation


def l1_threshold(profile: Profile) -> int:
    done = JobRun.objects.filter(profile=profile, kind=KIND_L1, status=STATUS_SUCCEEDED).count()
    return L1_WARMUP[done] if done < len(L1_WARMUP) else L1_STEADY


def evaluate(*, profile: Profile, kind: str, now: datetime | None = None) -> Decision:
    now = now or timezone.now()
    if kind == KIND_L1:
        return _evaluate_l1(profile, now)
    if kind == KIND_L2:
        return _evaluate_l2(profile, now)
    if kind == KIND_L3:
        return _evaluate_l3(profile, now)
    if kind == KIND_SKILL:
        return _evaluate_skill(profile, now)
    raise ValueError(f"unknown job kind {kind!r}")


def _evaluate_l1(profile: Profile, now: datetime) -> Decision:
    from apps.conversations.cursors import cursor_get

    need = l1_threshold(profile)
    backlog = l0_backlog(profile=profile, cursor=cursor_get(profile=profile, kind="l1"), limit=need)
    if backlog.eligible == 0:
        return Decision(False)
    if backlog.eligible >= need:
        return Decision(True, f"{backlog.eligible} new eligible L0 rows (threshold {need})")
    idle_since = backlog.newest_write
    if idle_since is not None and (now - idle_since).total_seconds() >= L1_IDLE_SECONDS:
        return Decision(True, f"{backlog.eligible} new L0 rows, idle for {L1_IDLE_SECONDS} s")
    base = idle_since or now
    return Decision(False, recheck_at=base + timedelta(seconds=L1_IDLE_SECONDS))


def _evaluate_l2(profile: Profile, now: datetime) -> Decision:
    from apps.conversations.cursors import cursor_get
    from apps.records.models import L1Change

    cursor = cursor_get(profile=profile, kind="l2")
    try:
        after = int(cursor.get("lastRecordId") or 0)
    except (TypeError, ValueError):
        after = 0
    first = (
        L1Change.objects.filter(profile=profile, id__gt=after, record__source="subagent")
        .order_by("id")
        .values_list("created_at", flat=True)
        .first()
    )
    if first is None:
        return Decision(False)
    due = first + timedelta(seconds=L2_FIRST_DELAY_SECONDS)
    last_start = (
        JobRun.objects.filter(profile=profile, kind=KIND_L2, started_at__isnull=False)
        .order_by("-started_at")
        .values_list("started_at", flat=True)
        .first()
    )
    if last_start is not None:
        due = max(due, last_start + timedelta(seconds=L2_MIN_GAP_SECONDS))
    if now >= due:
        return Decision(True, "new subagent L1 commits since the last L2 run")
    return Decision(False, recheck_at=due)


def _evaluate_l3(profile: Profile, now: datetime) -> Decision:
    from apps.records.models import L1Record
    from apps.scenes.models import SceneBlock

    signal = JobSignal.objects.filter(profile=profile, kind=KIND_L3, consumed_by__isnull=True).order_by("id").first()
    if signal is not None:
        return Decision(True, f"personaSignal: {signal.reason}"[:300])
    last = (
        JobRun.objects.filter(profile=profile, kind=KIND_L3, status=STATUS_SUCCEEDED)
        .order_by("-started_at")
        .values_list("started_at", flat=True)
        .first()
    )
    if last is None:
        if SceneBlock.objects.filter(profile=profile, archived=False, removed=False).exists():
            return Decision(True, "cold start: scene blocks exist and no persona run has completed")
        return Decision(False)
    new = L1Record.objects.filter(profile=profile, created_at__gt=last).count()
    if new >= L3_NEW_RECORDS:
        return Decision(True, f"{new} new L1 records since the last persona run")
    return Decision(False)


def _evaluate_skill(profile: Profile, now: datetime) -> Decision:
    from apps.conversations.cursors import cursor_get

    calls = skill_feed_tool_calls(profile=profile, cursor=cursor_get(profile=profile, kind="skill_feed"), limit=SKILL_TOOL_CALLS)
    if calls >= SKILL_TOOL_CALLS:
        return Decision(True, f"{calls} new tool calls in the skill feed")
    return Decision(False)


# --------------------------------------------------------------------------- deciding


def consider(*, profile: Profile, kind: str, now: datetime | None = None) -> JobRun | None:
    """Start a run of `kind` if its trigger holds and none is active; else maybe re-check later."""
    if JobRun.objects.filter(profile=profile, kind=kind, status__in=ACTIVE_STATUSES).exists():
        return None
    now = now or timezone.now()
    retry_at = failure_backoff_until(profile=profile, kind=kind)
    if retry_at is not None and now < retry_at:
        _schedule_recheck(profile, kind, retry_at, now)
        return None
    decision = evaluate(profile=profile, kind=kind, now=now)
    if decision.due:
        return request_run(profile=profile, kind=kind, reason=decision.reason)
    if decision.recheck_at is not None:
        _schedule_recheck(profile, kind, decision.recheck_at, now or timezone.now())
    return None


def failure_backoff_until(*, profile: Profile, kind: str) -> datetime | None:
    """After consecutive failed runs, automatic retries wait 60 s, 120 s, … up to an hour,
    so a job that cannot succeed (a model endpoint that is down) does not spin.
    Manual triggers are not held back."""
    recent = list(
        JobRun.objects.filter(profile=profile, kind=kind, status__in=(STATUS_SUCCEEDED, STATUS_FAILED))
        .order_by("-id")
        .values_list("status", "finished_at")[:8]
    )
    failures = 0
    for status, _ in recent:
        if status != STATUS_FAILED:
            break
        failures += 1
    if not failures or recent[0][1] is None:
        return None
    return recent[0][1] + timedelta(seconds=min(FAILURE_BACKOFF_MAX, FAILURE_BACKOFF_BASE * 2 ** (failures - 1)))


def _schedule_recheck(profile: Profile, kind: str, when: datetime, now: datetime) -> None:
    from apps.pipeline import tasks

    delay = max(1.0, (when - now).total_seconds() + 1)
    if delay > 3600:
        return  # the sweep covers long waits
    try:
        tasks.check_trigger.apply_async(args=[profile.pk, kind], countdown=delay)
    except Exception as exc:  # noqa: BLE001
        logger.info("could not schedule a re-check of %s for %s (%s); the sweep covers it", kind, profile.slug, exc)


# --------------------------------------------------------------------------- sweep


def sweep(*, now: datetime | None = None) -> dict[str, Any]:
    """Fail lost runs, re-send lost messages, and re-check every trigger of every profile."""
    now = now or timezone.now()
    report: dict[str, Any] = {"failed": reap_lost_runs(now=now), "resent": resend_stale_queued(now=now), "started": []}
    for profile in Profile.objects.all():
        for kind in KINDS:
            try:
                run = consider(profile=profile, kind=kind, now=now)
            except Exception:
                logger.exception("trigger check %s for %s failed", kind, profile.slug)
                continue
            if run is not None:
                report["started"].append({"profile": profile.slug, "kind": kind, "run": run.pk})
    return report
