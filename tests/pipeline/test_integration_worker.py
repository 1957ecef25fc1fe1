"""A real Celery worker on Redis with a file-backed database and the web process serving
the tool API (the embedded-Qdrant topology), including `kill -9` of the worker mid-job:
afterwards no record is duplicated or lost, the cursor is consistent with the records,
the run is marked failed with its error, and the next run completes the work."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
REDIS_DB = 11
# Enough for many batches (100 messages each): the worker is killed once two are committed,
# and with 400 a fast worker had committed the last batch before the kill landed.
MESSAGES = 1500


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _redis_or_skip():
    import redis

    client = redis.Redis.from_url(f"redis://127.0.0.1:6379/{REDIS_DB}")
    try:
        client.ping()
    except redis.exceptions.ConnectionError:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip("Redis is not running on 127.0.0.1:6379")
    return client


class Stack:
    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.port = _free_port()
        data = tmp / "stack-data"
        data.mkdir()
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "QDRANT_", "MEMORYWEB_PROCESS", "MEMORYWEB_TOOL"))},
            "MEMORYWEB_DATA_DIR": str(data),
            "DATABASE_URL": f"sqlite:///{data / 'memoryweb.sqlite3'}",
            "CELERY_BROKER_URL": f"redis://127.0.0.1:6379/{REDIS_DB}",
            # Other runs of this test may share the database: their workers must not take our messages.
            "CELERY_REDIS_KEY_PREFIX": f"mwtest-{os.getpid()}-{self.port}:",
            "MEMORYWEB_SERVICE_URL": f"http://127.0.0.1:{self.port}",
            "MEMORYWEB_LLM_BASE_URL": "",
            "PYTHONUNBUFFERED": "1",
        }
        self.procs: list[subprocess.Popen] = []

    def manage(self, *args: str, timeout: float = 120) -> str:
        out = subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], env=self.env, cwd=ROOT,
                             capture_output=True, text=True, timeout=timeout, check=False)
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout

    def py(self, code: str) -> dict:
        out = self.manage("shell", "-c", code)
        return json.loads(out.strip().splitlines()[-1])

    def start(self, name: str, cmd: list[str]) -> subprocess.Popen:
        log = open(self.tmp / f"{name}.log", "ab")  # noqa: SIM115 — closed with the process
        proc = subprocess.Popen(cmd, env=self.env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append(proc)
        return proc

    def start_web(self):
        proc = self.start("web", [sys.executable, str(ROOT / "manage.py"), "runserver", "--noreload", f"127.0.0.1:{self.port}"])
        import httpx

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/api/v1/health", timeout=2).status_code in (200, 503):
                    return proc
            except httpx.HTTPError:
                time.sleep(0.3)
        raise AssertionError("the web process did not start: " + (self.tmp / "web.log").read_text()[-2000:])

    def start_worker(self, name: str) -> subprocess.Popen:
        celery = Path(sys.executable).with_name("celery")
        return self.start(name, [str(celery), "-A", "memoryweb", "worker", "-Q", "quick,embed", "-c", "1",
                                 "-n", f"{name}-{self.port}@%h", "--without-mingle", "--without-gossip", "--loglevel", "INFO"])

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-2500:]}" for p in sorted(self.tmp.glob("*.log")))

    def stop_all(self):
        for proc in self.procs:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        import redis

        client = redis.Redis.from_url(self.env["CELERY_BROKER_URL"])
        keys = list(client.scan_iter(match=self.env["CELERY_REDIS_KEY_PREFIX"] + "*"))
        if keys:
            client.delete(*keys)


STATE = """
import json
from apps.accounts.models import Profile
from apps.accounts.paths import profile_subdir
from apps.conversations.cursors import cursor_get
from apps.pipeline.models import JobRun
from apps.records.models import L1Record
p = Profile.objects.get(slug="p")
recs = list(L1Record.objects.filter(profile=p).values("record_id", "content", "deleted", "source_message_ids", "content_key"))
shards = {x.name: x.stat().st_size for x in profile_subdir(p, "l0").glob("*.jsonl")}
runs = [r.as_dict() for r in JobRun.objects.filter(profile=p, kind="l1_extract").order_by("id")]
print(json.dumps({"records": recs, "cursor": cursor_get(profile=p, kind="l1"), "shards": shards, "runs": runs}))
"""

SETUP = """
import json
from apps.accounts.services import profile_create
from apps.conversations.services import l0_append
p = profile_create(slug="p")
topics = ["billing", "search", "auth", "cache", "queue", "mailer", "export", "reports", "uploads", "webhooks"]
rows = []
for i in range(MESSAGES_N):
    rows.append({"id": f"m{i}", "role": "user", "sessionKey": f"s{i % 7}", "sessionId": None, "cwd": "/srv/app",
                 "timestamp": 1764400000000 + i, "content": f"We decided that ticket {i} for the {topics[i % 10]} module belongs to sprint {i // 10}."})
for start in range(0, len(rows), 500):
    l0_append(profile=p, rows=rows[start:start + 500])
print(json.dumps({"ok": True}))
""".replace("MESSAGES_N", str(MESSAGES))


def _message_offsets(stack: Stack) -> dict:
    """Byte offset of the end of each message's line, per shard."""
    data = Path(stack.env["MEMORYWEB_DATA_DIR"]) / "profiles" / "p" / "l0"
    ends = {}
    for shard in sorted(data.glob("*.jsonl")):
        pos = 0
        with shard.open("rb") as handle:
            for line in handle:
                pos += len(line)
                ends[json.loads(line)["id"]] = (shard.name, pos)
    return ends


def _check_consistent(state: dict, ends: dict) -> set[str]:
    """Records and cursor agree; returns the message ids the cursor covers."""
    cursor_files = (state["cursor"] or {}).get("files", {})
    covered = {mid for mid, (shard, end) in ends.items() if cursor_files.get(shard, 0) >= end}
    cited: dict[str, int] = {}
    live_keys: dict[str, int] = {}
    for rec in state["records"]:
        for mid in rec["source_message_ids"]:
            assert mid in covered, f"record {rec['record_id']} cites {mid} beyond the committed cursor"
            if not rec["deleted"]:
                cited[mid] = cited.get(mid, 0) + 1
        if not rec["deleted"]:
            live_keys[rec["content_key"]] = live_keys.get(rec["content_key"], 0) + 1
    assert all(n == 1 for n in live_keys.values()), "a live record is duplicated"
    assert all(n == 1 for n in cited.values()), "a message is cited by two live records"
    all_cited = {mid for rec in state["records"] for mid in rec["source_message_ids"]}
    missing = covered - all_cited
    assert not missing, f"{len(missing)} covered messages have no record (lost): {sorted(missing)[:5]}"
    return covered


def test_worker_killed_mid_job_loses_and_duplicates_nothing(tmp_path):
    _redis_or_skip()
    stack = Stack(tmp_path)
    try:
        stack.manage("migrate", "--noinput", "-v", "0", timeout=300)
        stack.py(SETUP)
        stack.start_web()
        worker = stack.start_worker("w1")
        stack.manage("runjob", "l1_extract", "p")
        # Wait until the run is running and has committed some batches, then kill -9.
        deadline = time.monotonic() + 150
        while True:
            state = stack.py(STATE)
            run = state["runs"][-1]
            if run["status"] == "running" and (run["counts"].get("batches") or 0) >= 2:
                break
            assert run["status"] in ("queued", "running"), run
            assert time.monotonic() < deadline, f"the run did not progress: {run}\n{stack.logs()}"
            time.sleep(0.5)
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
        ends = _message_offsets(stack)
        state = stack.py(STATE)
        covered = _check_consistent(state, ends)
        assert 0 < len(covered) < MESSAGES
        # The sweep notices the dead worker and fails the run with its error.
        killed = state["runs"][-1]
        for _ in range(10):  # the killed processes may take a moment to be reaped
            report = stack.py("import json; from apps.pipeline.scheduling import sweep; print(json.dumps(sweep()))")
            if killed["id"] in report["failed"]:
                break
            time.sleep(1)
        assert killed["id"] in report["failed"]
        state = stack.py(STATE)
        failed = next(r for r in state["runs"] if r["id"] == killed["id"])
        assert failed["status"] == "failed" and "worker lost" in failed["error"] and failed["finishedAt"]
        # The sweep already requested the next run; a new worker completes the work.
        stack.start_worker("w2")
        deadline = time.monotonic() + 400
        while True:
            state = stack.py(STATE)
            done = sum(state["cursor"].get("files", {}).values()) == sum(state["shards"].values())
            active = [r for r in state["runs"] if r["status"] in ("queued", "running")]
            if done and not active:
                break
            if not active:  # a run stopped at its time budget: the sweep re-checks the trigger
                stack.py("import json; from apps.pipeline.scheduling import sweep; print(json.dumps(sweep()))")
            assert time.monotonic() < deadline, f"the work did not complete: {state['runs'][-1]}\n{stack.logs()}"
            time.sleep(1)
        covered = _check_consistent(state, _message_offsets(stack))
        assert len(covered) == MESSAGES
        after = [r for r in state["runs"] if r["id"] > killed["id"]]
        assert after and all(r["status"] == "succeeded" for r in after), [(r["status"], r["error"]) for r in after]
        assert all(r["counts"]["transport"] == "http" for r in after)
    finally:
        stack.stop_all()
