"""SPEC §5 triggers, the one-run-per-(profile, job) guard, the sweep and a broker that is down."""

from __future__ import annotations

import json
import os
import time
from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.accounts.paths import profile_subdir
from apps.conversations.cursors import cursor_set
from apps.pipeline import policy, scheduling
from apps.pipeline.models import (
    KIND_L1,
    KIND_L2,
    KIND_L3,
    KIND_SKILL,
    STATUS_FAILED,
    STATUS_QUEUED,
    STATUS_RUNNING,
    STATUS_SUCCEEDED,
    JobRun,
    JobSignal,
)
from tests import factories
from tests.pipeline.conftest import msg


def make_record(profile, content="a durable fact about the build", *, source="subagent", type="work_fact"):
    return factories.make_record(profile, content, source=source, type=type, scope="unknown", created_at=timezone.now())


def finished_run(profile, kind, *, status=STATUS_SUCCEEDED, started=None):
    started = started or timezone.now()
    return JobRun.objects.create(profile=profile, kind=kind, driver="rules", status=status, trigger_reason="t",
                                 started_at=started, finished_at=started)


# --------------------------------------------------------------------------- L1


def test_l1_warm_up_thresholds_are_1_2_4_then_5(alice):
    assert scheduling.l1_threshold(alice) == 1
    expected = [2, 4, 5, 5]
    for want in expected:
        finished_run(alice, KIND_L1)
        assert scheduling.l1_threshold(alice) == want
    # Failed runs do not count as warm-up.
    finished_run(alice, KIND_L1, status=STATUS_FAILED)
    assert scheduling.l1_threshold(alice) == 5


def test_l1_due_when_eligible_rows_reach_the_threshold(alice, l0):
    for _ in range(3):
        finished_run(alice, KIND_L1)  # threshold 5 now
    l0(alice, [msg(f"m{i}", f"message number {i}") for i in range(4)])
    decision = scheduling.evaluate(profile=alice, kind=KIND_L1)
    assert not decision.due
    assert decision.recheck_at is not None
    l0(alice, [msg("m9", "the fifth one")])
    decision = scheduling.evaluate(profile=alice, kind=KIND_L1)
    assert decision.due
    assert "threshold 5" in decision.reason


def test_l1_ineligible_and_unfinished_lines_do_not_count(alice, l0):
    finished_run(alice, KIND_L1)  # threshold 2
    l0(alice, [msg("m1", "one eligible"), msg("t1", "tool output", role="tool"), msg("s1", "system", role="system")])
    shard = next(profile_subdir(alice, "l0").glob("*.jsonl"))
    with shard.open("ab") as handle:
        handle.write(json.dumps(msg("m2", "half written")).encode())  # no newline yet
    assert scheduling.l0_backlog(profile=alice, cursor={}, limit=5).eligible == 1
    assert not scheduling.evaluate(profile=alice, kind=KIND_L1).due


def test_l1_rows_before_the_committed_cursor_are_not_new(alice, l0):
    rows = l0(alice, [msg("m1", "first"), msg("m2", "second")])
    shard = rows[0]["shard"]
    end = profile_subdir(alice, "l0").joinpath(shard).stat().st_size
    cursor_set(profile=alice, kind="l1", value={"version": 2, "files": {shard: end}})
    assert scheduling.l0_backlog(profile=alice, cursor={"version": 2, "files": {shard: end}}, limit=5).eligible == 0
    assert not scheduling.evaluate(profile=alice, kind=KIND_L1).due
    l0(alice, [msg("m3", "third")])
    assert scheduling.evaluate(profile=alice, kind=KIND_L1).due


def test_l1_idle_600_seconds_after_new_rows_triggers_below_threshold(alice, l0):
    for _ in range(3):
        finished_run(alice, KIND_L1)
    l0(alice, [msg("m1", "only one row")])
    assert not scheduling.evaluate(profile=alice, kind=KIND_L1).due
    shard = next(profile_subdir(alice, "l0").glob("*.jsonl"))
    old = time.time() - 601
    os.utime(shard, (old, old))
    decision = scheduling.evaluate(profile=alice, kind=KIND_L1)
    assert decision.due and "idle" in decision.reason


# --------------------------------------------------------------------------- L2


def test_l2_waits_90_seconds_after_the_first_subagent_commit(alice):
    make_record(alice)
    now = timezone.now()
    decision = scheduling.evaluate(profile=alice, kind=KIND_L2, now=now)
    assert not decision.due
    assert decision.recheck_at is not None and decision.recheck_at > now
    assert scheduling.evaluate(profile=alice, kind=KIND_L2, now=now + timedelta(seconds=91)).due


def test_l2_runs_at_least_900_seconds_apart(alice):
    finished_run(alice, KIND_L2, started=timezone.now())
    make_record(alice)
    later = timezone.now() + timedelta(seconds=200)
    decision = scheduling.evaluate(profile=alice, kind=KIND_L2, now=later)
    assert not decision.due
    assert scheduling.evaluate(profile=alice, kind=KIND_L2, now=timezone.now() + timedelta(seconds=901)).due


def test_l2_ignores_main_agent_records_and_changes_before_its_cursor(alice):
    make_record(alice, source="main-agent")
    future = timezone.now() + timedelta(hours=1)
    assert not scheduling.evaluate(profile=alice, kind=KIND_L2, now=future).due
    rec = make_record(alice)
    cursor_set(profile=alice, kind="l2", value={"lastRecordId": rec.changes.last().pk})
    assert not scheduling.evaluate(profile=alice, kind=KIND_L2, now=future).due


# --------------------------------------------------------------------------- L3


def test_l3_cold_start_needs_a_live_scene_block(alice):
    from apps.scenes.models import SceneBlock

    assert not scheduling.evaluate(profile=alice, kind=KIND_L3).due
    now = timezone.now()
    SceneBlock.objects.create(profile=alice, filename="a.md", content="# a", meta_created=now, meta_updated=now)
    decision = scheduling.evaluate(profile=alice, kind=KIND_L3)
    assert decision.due and "cold start" in decision.reason
    finished_run(alice, KIND_L3)
    assert not scheduling.evaluate(profile=alice, kind=KIND_L3).due


def test_l3_persona_signal_requests_a_run_and_is_consumed(alice, sent):
    from apps.pipeline.jobs import execute_run

    finished_run(alice, KIND_L3)
    scheduling.on_l2_committed(profile_id=alice.pk, persona_signal=True, reason="the user's language preference changed")
    queued = JobRun.objects.get(profile=alice, kind=KIND_L3, status=STATUS_QUEUED)
    assert "language preference" in queued.trigger_reason
    run = execute_run(run_id=queued.pk)
    assert run.status == STATUS_SUCCEEDED, run.error
    assert JobSignal.objects.get().consumed_by_id == run.pk
    assert not scheduling.evaluate(profile=alice, kind=KIND_L3).due


def test_l3_fifty_new_records_since_the_last_run(alice):
    finished_run(alice, KIND_L3, started=timezone.now() - timedelta(minutes=5))
    for i in range(49):
        make_record(alice, f"record {i}")
    assert not scheduling.evaluate(profile=alice, kind=KIND_L3).due
    make_record(alice, "record 50")
    assert scheduling.evaluate(profile=alice, kind=KIND_L3).due


# --------------------------------------------------------------------------- skill review


def _feed(profile, rows):
    from apps.conversations.feed import skill_feed_append

    return skill_feed_append(profile=profile, rows=rows)


def test_skill_review_after_ten_new_tool_calls(alice):
    rows = []
    for i in range(9):
        rows.append({"role": "tool_call", "content": "{}", "tool_name": "grep", "tool_call_id": f"c{i}", "sessionKey": "s"})
        rows.append({"role": "tool_result", "content": "ok", "tool_call_id": f"c{i}", "sessionKey": "s"})
    _feed(alice, rows)
    assert not scheduling.evaluate(profile=alice, kind=KIND_SKILL).due
    _feed(alice, [{"role": "tool_call", "content": "{}", "tool_name": "grep", "tool_call_id": "c10", "sessionKey": "s"}])
    assert scheduling.evaluate(profile=alice, kind=KIND_SKILL).due


# --------------------------------------------------------------------------- guard and enqueue


def test_only_one_active_run_per_profile_and_job(alice, bob, sent):
    with transaction.atomic():
        first = scheduling.request_run(profile=alice, kind=KIND_L1, reason="one")
    assert first is not None
    assert scheduling.request_run(profile=alice, kind=KIND_L1, reason="two") is None
    # Another job, or another profile, is independent.
    assert scheduling.request_run(profile=alice, kind=KIND_L2, reason="x") is not None
    assert scheduling.request_run(profile=bob, kind=KIND_L1, reason="x") is not None
    assert JobRun.objects.filter(profile=alice, kind=KIND_L1).count() == 1


def test_the_database_itself_refuses_a_second_active_run(alice):
    JobRun.objects.create(profile=alice, kind=KIND_L1, driver="rules", status=STATUS_RUNNING, trigger_reason="a")
    with pytest.raises(IntegrityError), transaction.atomic():
        JobRun.objects.create(profile=alice, kind=KIND_L1, driver="rules", status=STATUS_QUEUED, trigger_reason="b")
    # Finished runs do not block.
    JobRun.objects.create(profile=alice, kind=KIND_L1, driver="rules", status=STATUS_FAILED, trigger_reason="c")


def test_run_is_enqueued_after_commit_with_the_jobs_time_limit(alice, sent, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        run = scheduling.request_run(profile=alice, kind=KIND_L2, reason="manual")
    assert sent.run_ids == [run.pk]
    assert sent.calls[0]["soft_time_limit"] == 300 + 30
    run.refresh_from_db()
    assert run.enqueue_attempts == 1 and run.enqueued_at is not None and run.task_id == "task-1"


def test_broker_down_keeps_the_run_queued_and_the_sweep_resends_it(alice, sent, django_capture_on_commit_callbacks):
    sent.fail = ConnectionRefusedError("broker down")
    with django_capture_on_commit_callbacks(execute=True):
        run = scheduling.request_run(profile=alice, kind=KIND_L1, reason="manual")
    run.refresh_from_db()
    assert run.status == STATUS_QUEUED
    assert "broker down" in run.enqueue_error
    assert sent.run_ids == []
    # Not yet stale: nothing resent.
    assert scheduling.resend_stale_queued() == []
    sent.fail = None
    report = scheduling.sweep(now=timezone.now() + timedelta(seconds=61))
    assert report["resent"] == [run.pk]
    run.refresh_from_db()
    assert run.enqueue_error == "" and run.enqueue_attempts == 2


def test_l0_ingest_succeeds_and_keeps_the_trigger_when_the_broker_is_down(alice, sent, make_api, django_capture_on_commit_callbacks):
    sent.fail = OSError("connection refused")
    api = make_api(alice, "agent")
    with django_capture_on_commit_callbacks(execute=True):
        status, body = api.post("/api/v1/l0/messages", {"messages": [msg("m1", "We decided to use PostgreSQL.")]})
    assert status == 200, body
    run = JobRun.objects.get(profile=alice, kind=KIND_L1)
    assert run.status == STATUS_QUEUED and "connection refused" in run.enqueue_error


def test_hooks_never_raise(alice, monkeypatch):
    def boom(**kwargs):
        raise RuntimeError("database exploded")

    monkeypatch.setattr(policy, "consider", boom)
    scheduling.on_l0_appended(profile_id=alice.pk, eligible=3)
    scheduling.on_l1_committed(profile_id=alice.pk, stored=2, source="subagent")
    scheduling.on_skill_feed_appended(profile_id=alice.pk, tool_calls=11)
    scheduling.on_l0_appended(profile_id=999999, eligible=3)


def test_l1_commit_wakes_l2_through_the_trigger_seam(alice, sent, monkeypatch):
    seen = []
    monkeypatch.setattr(policy, "_safe_consider", lambda pid, kind: seen.append(kind))
    scheduling.on_l1_committed(profile_id=alice.pk, stored=3, source="subagent")
    scheduling.on_l1_committed(profile_id=alice.pk, stored=3, source="main-agent")
    assert seen == [KIND_L2, KIND_L3, KIND_L3]


# --------------------------------------------------------------------------- lost runs


def test_sweep_fails_a_run_whose_worker_process_is_gone(alice):
    import socket
    import subprocess

    proc = subprocess.Popen(["true"])
    proc.wait()
    run = JobRun.objects.create(profile=alice, kind=KIND_L1, driver="rules", status=STATUS_RUNNING, trigger_reason="t",
                                started_at=timezone.now(), heartbeat_at=timezone.now(), worker=f"{socket.gethostname()}:{proc.pid}")
    assert scheduling.reap_lost_runs() == [run.pk]
    run.refresh_from_db()
    assert run.status == STATUS_FAILED and "worker lost" in run.error and run.finished_at is not None


def test_sweep_fails_a_run_without_heartbeat_past_its_timeout(alice):
    old = timezone.now() - timedelta(seconds=180 + 91)
    run = JobRun.objects.create(profile=alice, kind=KIND_L1, driver="rules", status=STATUS_RUNNING, trigger_reason="t",
                                started_at=old, heartbeat_at=old, worker="elsewhere:1")
    alive = JobRun.objects.create(profile=alice, kind=KIND_L2, driver="rules", status=STATUS_RUNNING, trigger_reason="t",
                                  started_at=old, heartbeat_at=timezone.now(), worker="elsewhere:2")
    assert scheduling.reap_lost_runs() == [run.pk]
    alive.refresh_from_db()
    assert alive.status == STATUS_RUNNING


def test_sweep_starts_due_jobs_of_every_profile(alice, bob, l0, sent, django_capture_on_commit_callbacks):
    l0(alice, [msg("m1", "hello there, we use Redis")])
    l0(bob, [msg("m1", "bob's first message")])
    with django_capture_on_commit_callbacks(execute=True):
        report = scheduling.sweep()
    started = {(s["profile"], s["kind"]) for s in report["started"]}
    assert started == {("alice", KIND_L1), ("bob", KIND_L1)}
    assert len(sent.run_ids) == 2


def test_failed_runs_back_off_automatic_retries_but_not_manual_ones(alice, l0, sent):
    l0(alice, [msg("m1", "We decided to use Redis.")])
    now = timezone.now()
    finished_run(alice, KIND_L1, status=STATUS_FAILED, started=now)
    JobRun.objects.filter(kind=KIND_L1).update(finished_at=now)
    assert scheduling.consider(profile=alice, kind=KIND_L1, now=now + timedelta(seconds=30)) is None
    assert sent.rechecks.calls  # re-checked when the backoff ends
    finished_run(alice, KIND_L1, status=STATUS_FAILED, started=now)
    JobRun.objects.filter(kind=KIND_L1).update(finished_at=now)
    assert scheduling.consider(profile=alice, kind=KIND_L1, now=now + timedelta(seconds=90)) is None  # 120 s after 2 failures
    run = scheduling.consider(profile=alice, kind=KIND_L1, now=now + timedelta(seconds=121))
    assert run is not None
    run.delete()
    manual = scheduling.request_run(profile=alice, kind=KIND_L1, reason="manual", requested_by="cli")
    assert manual is not None


def test_a_zombie_worker_counts_as_gone(alice):
    import socket
    import subprocess

    proc = subprocess.Popen(["true"])
    time.sleep(0.5)  # exited, not yet reaped: a zombie
    try:
        run = JobRun.objects.create(profile=alice, kind=KIND_L1, driver="rules", status=STATUS_RUNNING, trigger_reason="t",
                                    started_at=timezone.now(), heartbeat_at=timezone.now(), worker=f"{socket.gethostname()}:{proc.pid}")
        assert scheduling.reap_lost_runs() == [run.pk]
    finally:
        proc.wait()


def test_celery_tasks_are_thin_shells_over_the_services(alice, l0, sent):
    from apps.pipeline import tasks

    l0(alice, [msg("m1", "We decided to use Redis for sessions.")])
    assert tasks.check_trigger.apply(args=[alice.pk, KIND_L1]).get() is not None
    run = JobRun.objects.get(profile=alice, kind=KIND_L1)
    assert tasks.run_job.apply(args=[run.pk]).get() == {"run": run.pk, "status": STATUS_SUCCEEDED}
    # A second delivery of the same message does nothing.
    assert tasks.run_job.apply(args=[run.pk]).get() == {"run": run.pk, "status": "skipped"}
    assert tasks.check_trigger.apply(args=[999999, KIND_L1]).get() is None
    report = tasks.sweep.apply().get()
    assert set(report) == {"failed", "resent", "started"}
    assert tasks.drain_index_outbox.apply().get() == {"skipped": "embedded Qdrant belongs to the web process"}
