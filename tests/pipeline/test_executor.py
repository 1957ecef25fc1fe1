"""One tool interface, two transports (in process, HTTP with a worker token), and the
read-only `read` tool of the LLM driver."""

from __future__ import annotations

import json
import stat

import pytest

from apps.accounts.models import ApiToken
from apps.accounts.services import token_revoke
from apps.pipeline import executor
from apps.pipeline.executor import (
    HttpExecutor,
    InProcessExecutor,
    choose_transport,
    worker_token,
)
from apps.pipeline.models import KIND_L1, STATUS_SUCCEEDED
from apps.pipeline.readtool import PROMPTS_DIR, cursor_path, read_path, records_dir
from apps.records.models import L1Record
from apps.tools.errors import Forbidden, InvalidParams, NotFound
from tests.pipeline.conftest import msg


def test_transport_choice(monkeypatch, settings):
    monkeypatch.delenv("MEMORYWEB_TOOL_TRANSPORT", raising=False)
    monkeypatch.delenv("MEMORYWEB_PROCESS_ROLE", raising=False)
    settings.QDRANT_URL = ""
    assert choose_transport() == "inprocess"  # the web process owns embedded Qdrant
    monkeypatch.setenv("MEMORYWEB_PROCESS_ROLE", "worker")
    assert choose_transport() == "http"  # a worker must not open it
    settings.QDRANT_URL = "http://qdrant:6333"
    assert choose_transport() == "inprocess"  # a server may be opened by every process
    monkeypatch.setenv("MEMORYWEB_TOOL_TRANSPORT", "http")
    assert choose_transport() == "http"


def test_worker_token_is_stored_hashed_and_kept_in_a_0600_file(alice, settings):
    plain = worker_token(alice)
    path = settings.DATA_DIR / "pipeline" / "tokens" / "alice.token"
    assert path.read_text() == plain
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    token = ApiToken.objects.get(profile=alice, role="worker")
    assert plain not in token.token_hash and token.token_hash != plain
    assert worker_token(alice) == plain  # reused
    token_revoke(token=token)
    fresh = worker_token(alice)
    assert fresh != plain and ApiToken.objects.filter(profile=alice, role="worker", revoked_at__isnull=True).count() == 1


@pytest.mark.django_db(transaction=True)
def test_both_transports_give_the_same_answers_and_errors(live_server, make_profile):
    alice = make_profile("alice")
    local = InProcessExecutor(alice, actor="job:test")
    remote = HttpExecutor(alice, actor="job:test", base_url=live_server.url)
    assert remote.call("whoami", {}, session_key="s9") == local.call("whoami", {}, session_key="s9")
    assert remote.call("whoami", {})["role"] == "worker"
    for ex in (local, remote):
        with pytest.raises(NotFound):
            ex.call("no_such_tool", {})
        with pytest.raises(InvalidParams) as err:
            ex.call("list_l1_scenes", {"limit": "many"})
        assert err.value.details[0]["field"] == "limit"


@pytest.mark.django_db(transaction=True)
def test_rules_l1_run_over_http_to_the_web_process(live_server, make_profile, settings, monkeypatch, sent):
    from apps.conversations.services import l0_append
    from apps.pipeline import jobs, scheduling

    settings.SERVICE_URL = live_server.url
    monkeypatch.setenv("MEMORYWEB_PROCESS_ROLE", "worker")
    alice = make_profile("alice")
    l0_append(profile=alice, rows=[msg("h1", "From now on always pin dependency versions."), msg("h2", "We decided to deploy on Fridays never.")])
    run = scheduling.request_run(profile=alice, kind=KIND_L1, reason="test", send=False)
    done = jobs.execute_run(run_id=run.pk)
    assert done.status == STATUS_SUCCEEDED, done.error
    assert done.counts["transport"] == "http"
    assert L1Record.objects.filter(profile=alice, source_message_ids=["h1"]).exists()


def test_http_transport_reports_an_unreachable_service(alice):
    from apps.tools.errors import Unavailable

    remote = HttpExecutor(alice, actor="job:test", base_url="http://127.0.0.1:9", token="mw_x")
    with pytest.raises(Unavailable):
        remote.call("whoami", {})


# --------------------------------------------------------------------------- read tool


def test_read_serves_prompt_files_cursor_and_rendered_shards(alice, make_api):
    from apps.conversations.cursors import cursor_set

    page = read_path(alice, {"path": str(PROMPTS_DIR / "l1-extractor.md"), "limit": 5})
    assert page["lines"] == 5 and page["truncated"] and page["content"].startswith("---")
    with pytest.raises(NotFound):
        read_path(alice, {"path": str(cursor_path(alice))})
    cursor_set(profile=alice, kind="l1", value={"version": 2, "files": {"2026-11-29.jsonl": 120}})
    assert json.loads(read_path(alice, {"path": str(cursor_path(alice))})["content"]) == {"version": 2, "files": {"2026-11-29.jsonl": 120}}
    api = make_api(alice, "agent")
    stored = api.ok("l1_commit", records=[{"content": "Use tabs in Makefiles always.", "type": "work_method"}], source="main-agent")["stored"]
    listing = read_path(alice, {"path": str(records_dir(alice))})
    assert len(listing["entries"]) == 1
    shard = read_path(alice, {"path": str(records_dir(alice) / listing["entries"][0])})
    rows = [json.loads(line) for line in shard["content"].split("\n")]
    assert rows[0]["id"] == stored[0] and rows[0]["content"] == "Use tabs in Makefiles always."


@pytest.mark.parametrize("path", [
    "/etc/passwd",
    str(PROMPTS_DIR / ".." / "llm.py"),
    str(PROMPTS_DIR.parent / "llm.py"),
    "relative/extract-chat.md",
])
def test_read_refuses_every_other_path(alice, path):
    with pytest.raises(Forbidden):
        read_path(alice, {"path": path})


def test_read_refuses_the_profiles_own_l0_files_and_other_profiles(alice, bob, l0):
    from apps.accounts.paths import profile_subdir

    l0(alice, [msg("m1", "hello")])
    shard = next(profile_subdir(alice, "l0").glob("*.jsonl"))
    with pytest.raises(Forbidden):
        read_path(alice, {"path": str(shard)})
    with pytest.raises(Forbidden):
        read_path(alice, {"path": str(cursor_path(bob))})
    with pytest.raises(InvalidParams):
        read_path(alice, {"path": str(cursor_path(alice)), "limit": 0})


def test_executor_for_a_shell_without_web_falls_back_to_in_process(alice, monkeypatch, settings):
    settings.SERVICE_URL = "http://127.0.0.1:9"
    monkeypatch.setenv("MEMORYWEB_PROCESS_ROLE", "cli")
    monkeypatch.delenv("MEMORYWEB_TOOL_TRANSPORT", raising=False)
    assert executor.executor_for(alice, actor="x").transport == "inprocess"
    monkeypatch.setenv("MEMORYWEB_PROCESS_ROLE", "worker")
    assert executor.executor_for(alice, actor="x").transport == "http"


# --------------------------------------------------------------------------- dashboard services and runjob


def test_dashboard_services_trigger_list_and_progress(alice, sent, django_capture_on_commit_callbacks):
    from apps.accounts.models import AuditEvent
    from apps.pipeline import services

    with django_capture_on_commit_callbacks(execute=True):
        run, created = services.job_trigger(profile=alice, kind=KIND_L1, actor="user:ann")
    assert created and sent.run_ids == [run.pk]
    again, created_again = services.job_trigger(profile=alice, kind=KIND_L1, actor="user:ann")
    assert not created_again and again.pk == run.pk
    assert AuditEvent.objects.filter(profile=alice, action="job_trigger").count() == 1
    listed = services.jobrun_list(profile=alice)
    assert [r["id"] for r in listed] == [run.pk] and listed[0]["status"] == "queued"
    assert services.jobrun_progress(run=run)["active"] is True
    with pytest.raises(ValueError):
        services.job_trigger(profile=alice, kind="nope", actor="user:ann")


def test_runjob_sync_runs_and_prints_the_finished_run(alice, l0, capsys, monkeypatch):
    from django.core.management import call_command

    monkeypatch.delenv("MEMORYWEB_PROCESS_ROLE", raising=False)  # runjob sets it; restore after

    l0(alice, [msg("r1", "We decided to keep the monorepo layout.")])
    call_command("runjob", KIND_L1, "alice", "--sync")
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == STATUS_SUCCEEDED and out["triggerReason"] == "manual: manage.py runjob"
    assert L1Record.objects.filter(profile=alice, source_message_ids=["r1"]).exists()


def test_runjob_refuses_a_second_active_run_and_unknown_profiles(alice, sent, monkeypatch):
    from django.core.management import CommandError, call_command

    monkeypatch.delenv("MEMORYWEB_PROCESS_ROLE", raising=False)

    call_command("runjob", KIND_L1, "alice")
    with pytest.raises(CommandError, match=r"already queued .* start a worker"):
        call_command("runjob", KIND_L1, "alice")
    with pytest.raises(CommandError, match="no profile"):
        call_command("runjob", KIND_L1, "nobody")


def test_runjob_sync_takes_over_a_run_queued_with_no_worker(alice, l0, sent, capsys, monkeypatch):
    from django.core.management import CommandError, call_command

    from apps.pipeline import scheduling
    from apps.pipeline.models import JobRun

    monkeypatch.delenv("MEMORYWEB_PROCESS_ROLE", raising=False)
    l0(alice, [msg("q1", "We agreed to ship the release on Friday.")])
    queued = scheduling.request_run(profile=alice, kind=KIND_L1, reason="trigger: 1 new L0 row", send=False)
    call_command("runjob", KIND_L1, "alice", "--sync")
    out = json.loads(capsys.readouterr().out)
    assert out["id"] == queued.pk and out["status"] == STATUS_SUCCEEDED
    assert JobRun.objects.filter(profile=alice, kind=KIND_L1).count() == 1
    # A run that is running is never taken over.
    running = scheduling.request_run(profile=alice, kind=KIND_L1, reason="manual", send=False)
    JobRun.objects.filter(pk=running.pk).update(status="running", worker="host:1")
    with pytest.raises(CommandError, match="already running by host:1"):
        call_command("runjob", KIND_L1, "alice", "--sync")


# --------------------------------------------------------------------------- health


def test_health_reports_the_broker_and_the_job_queue(admin_api, alice, settings, monkeypatch):
    from datetime import timedelta

    from django.utils import timezone

    from apps.pipeline.models import JobRun

    body = admin_api.get("/api/v1/health")[1]
    assert body["checks"]["broker"]["ok"] is True
    assert body["checks"]["jobs"] == {"queued": 0, "running": 0, "failedLastHour": 0, "oldestQueuedSeconds": 0.0, "ok": True}
    run = JobRun.objects.create(profile=alice, kind=KIND_L1, driver="rules", trigger_reason="t")
    JobRun.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(seconds=400))
    jobs = admin_api.get("/api/v1/health")[1]["checks"]["jobs"]
    assert jobs["ok"] is False and "worker" in jobs["error"] and jobs["queued"] == 1


def test_health_reports_a_broker_that_is_down(admin_api, monkeypatch):
    from memoryweb.celery import app

    monkeypatch.setattr(app.conf, "broker_url", "redis://127.0.0.1:9/0")
    body = admin_api.get("/api/v1/health")[1]
    assert body["checks"]["broker"]["ok"] is False and body["status"] == "degraded"
