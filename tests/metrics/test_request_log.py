"""One log line per request and per job run, as text or (MEMORYWEB_LOG_FORMAT=json) JSON."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

from django.test import Client

ROOT = Path(__file__).resolve().parents[2]


def _records(caplog, name: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == name]


def test_a_tool_call_logs_one_line_with_profile_tool_status_and_duration(agent_api, caplog):
    caplog.set_level(logging.INFO, logger="memoryweb.request")
    agent_api.ok("whoami")
    (line,) = _records(caplog, "memoryweb.request")
    assert (line.profile, line.tool, line.status, line.endpoint) == ("alice", "whoami", 200, "whoami")
    assert isinstance(line.durationMs, float) and line.durationMs >= 0
    assert "profile=alice tool=whoami" in line.getMessage() and " 200 " in line.getMessage()


def test_refused_and_anonymous_requests_are_logged_too(db, caplog):
    caplog.set_level(logging.INFO, logger="memoryweb.request")
    Client().post("/api/v1/tools/whoami", data="{}", content_type="application/json")
    Client().get("/no/such/page/?q=secret+memory+text")
    first, second = _records(caplog, "memoryweb.request")
    assert (first.status, first.profile, first.tool) == (401, "", "whoami")
    assert second.status == 404 and second.path == "/no/such/page/" and "secret" not in second.getMessage()


def test_a_job_run_logs_one_line(alice, caplog):
    from apps.pipeline.jobs import execute_run
    from apps.pipeline.models import JobRun

    caplog.set_level(logging.INFO, logger="memoryweb.job")
    run = JobRun.objects.create(profile=alice, kind="l2_organize", driver="rules", trigger_reason="test")
    execute_run(run_id=run.pk)
    (line,) = _records(caplog, "memoryweb.job")
    assert (line.profile, line.tool, line.run, line.status) == ("alice", "l2_organize", run.pk, "succeeded")
    assert line.durationMs >= 0


JSON_REQUEST = """
from apps.accounts.services import profile_create, token_create
from django.test import Client
_, plain = token_create(profile=profile_create(slug="alice"), role="agent", name="json-test")
Client().post("/api/v1/tools/whoami", data="{}", content_type="application/json", HTTP_AUTHORIZATION="Bearer " + plain)
"""


def _env(tmp_path: Path, fmt: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "MEMORYWEB_PROCESS"))}
    return {**env, "MEMORYWEB_DATA_DIR": str(tmp_path / "data"), "MEMORYWEB_LOG_FORMAT": fmt}


def test_json_log_format_writes_one_object_per_line(tmp_path):
    env = _env(tmp_path, "json")
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v", "0"], env=env, cwd=ROOT, check=True, timeout=300, capture_output=True)
    out = subprocess.run([*manage, "shell", "-c", JSON_REQUEST], env=env, cwd=ROOT, check=True, timeout=120,
                         capture_output=True, text=True)
    lines = [json.loads(line) for line in out.stderr.splitlines() if line.startswith("{")]
    (request,) = [entry for entry in lines if entry.get("logger") == "memoryweb.request"]
    assert request["profile"] == "alice" and request["tool"] == "whoami" and request["status"] == 200
    assert request["level"] == "INFO" and "time" in request and request["durationMs"] >= 0


def test_an_unknown_log_format_stops_the_start(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "manage.py"), "check"], env=_env(tmp_path, "yaml"), cwd=ROOT,
                         timeout=120, capture_output=True, text=True, check=False)
    assert out.returncode != 0 and "MEMORYWEB_LOG_FORMAT must be text or json" in out.stderr
