"""`manage.py serve` as an operator runs it: gunicorn (not runserver), worker and beat
start with no Redis (embedded SQLite broker); SIGTERM stops all of them; a child that
dies is restarted while the others keep serving; and with a Redis of the test's own,
stopped mid-run, the API answers throughout and a job ingested during the outage
completes once Redis is back."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.pipeline.test_integration_worker import ROOT, _free_port

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True, check=False)
    return [int(x) for x in out.stdout.split()]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    except FileNotFoundError:
        return ""


def _child(pid: int, word: str) -> int:
    return next(c for c in _children(pid) if word in _cmdline(c))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped) counts as gone.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


class Serve:
    """One `manage.py serve` in its own data dir; `stop()` ends it and every child."""

    def __init__(self, tmp_path: Path, **env: str):
        self.tmp = tmp_path
        self.data = tmp_path / "serve-data"
        self.data.mkdir()
        self.port = _free_port()
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("DATABASE_URL", "CELERY_", "MEMORYWEB_PROCESS", "MEMORYWEB_SERVICE", "QDRANT_", "PROMETHEUS"))}
        self.env.update({"MEMORYWEB_DATA_DIR": str(self.data), "PYTHONUNBUFFERED": "1", "MEMORYWEB_LLM_BASE_URL": "", **env})
        self.log_path = tmp_path / "serve.log"
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def manage(self, *args: str) -> str:
        out = subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], env=self.env, cwd=ROOT,
                             capture_output=True, text=True, timeout=300, check=False)
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def start(self, *, ready_words: tuple[str, ...] = (" ready.", "beat: Starting")) -> None:
        self.manage("migrate", "-v", "0")
        log = open(self.log_path, "wb")  # noqa: SIM115 — closed with the process
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), "serve", f"127.0.0.1:{self.port}"],
                                     env=self.env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.healthy() and all(w in self.log() for w in ready_words):
                return
            assert self.proc.poll() is None, self.log()[-3000:]
            time.sleep(0.5)
        raise AssertionError(self.log()[-3000:])

    def healthy(self) -> bool:
        try:
            return httpx.get(f"{self.url}/api/v1/health", timeout=3).status_code in (200, 503)
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        children = _children(self.proc.pid)
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for pid in children:
            if _alive(pid):
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


@pytest.fixture
def serve(tmp_path):
    started: list[Serve] = []

    def make(**env: str) -> Serve:
        s = Serve(tmp_path, **env)
        started.append(s)
        return s

    yield make
    for s in started:
        s.stop()


def test_serve_runs_gunicorn_without_redis_and_stops_on_sigterm(serve):
    s = serve()
    s.start()
    children = _children(s.proc.pid)
    assert len(children) == 3
    web = _child(s.proc.pid, "memoryweb.wsgi")
    assert "gunicorn" in _cmdline(web) and "runserver" not in " ".join(_cmdline(c) for c in children)
    # Embedded Qdrant: exactly one web worker process, with threads.
    assert "--workers 1 " in _cmdline(web) and "gthread" in _cmdline(web)
    assert len(_children(web)) == 1
    assert "sqla+sqlite" in s.log()
    assert (s.data / "celery-broker.sqlite3").exists()
    # Static files still come from WhiteNoise inside the application.
    assert httpx.get(f"{s.url}/static/vendor/htmx.min.js", timeout=5).status_code == 200
    s.proc.send_signal(signal.SIGTERM)
    assert s.proc.wait(timeout=40) == 0
    time.sleep(0.5)
    assert not any(_alive(c) for c in children)


def test_serve_restarts_a_child_that_dies_and_keeps_the_others(serve):
    s = serve()
    s.start()
    worker_before = _child(s.proc.pid, " worker ")
    beat = _child(s.proc.pid, " beat ")
    os.kill(beat, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and "restarted beat" not in s.log():
        assert s.healthy()
        time.sleep(0.3)
    assert "beat exited with signal 9; restarting it in 1 s" in s.log()
    assert "restarted beat" in s.log()
    new_beat = _child(s.proc.pid, " beat ")
    assert new_beat != beat and _alive(new_beat)
    assert _child(s.proc.pid, " worker ") == worker_before  # the others were left alone
    # The web server itself: killed hard, started again, answering again.
    web = _child(s.proc.pid, "memoryweb.wsgi")
    os.kill(web, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not ("restarted web" in s.log() and s.healthy()):
        time.sleep(0.5)
    assert "restarted web" in s.log() and s.healthy(), s.log()[-3000:]
    assert s.proc.poll() is None


def _redis(port: int, tmp: Path) -> subprocess.Popen:
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", str(tmp)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    import redis

    while time.monotonic() < deadline:
        try:
            redis.Redis(port=port).ping()
            return proc
        except redis.exceptions.ConnectionError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError("redis-server did not start")


@pytest.fixture
def own_redis(tmp_path):
    if shutil.which("redis-server") is None:
        if os.environ.get("CI") == "true":
            raise AssertionError("redis-server is not installed")
        pytest.skip("redis-server is not installed")
    port = _free_port()
    state = {"proc": _redis(port, tmp_path)}

    def stop() -> None:
        state["proc"].terminate()
        state["proc"].wait(timeout=10)

    def start() -> None:
        state["proc"] = _redis(port, tmp_path)

    yield port, stop, start
    if state["proc"].poll() is None:
        state["proc"].kill()
        state["proc"].wait()


RUNS = """
import json
from apps.pipeline.models import JobRun
print(json.dumps([{"kind": r.kind, "status": r.status, "enqueueError": bool(r.enqueue_error)}
                  for r in JobRun.objects.filter(kind="l1_extract").order_by("id")]))
"""


@pytest.mark.parametrize("settle", ["ack", "reject"])
def test_a_message_settled_after_the_broker_connection_was_lost_neither_stops_the_worker_nor_is_lost(own_redis, settle):
    """With late acks the worker settles a task on the channel it came from once the task
    ends. When the connection was lost meanwhile, kombu has dropped the transport's client
    (Connection._do_close_transport) and closed that channel; settling there raised
    AttributeError from the event loop and stopped the worker ("Unrecoverable error")."""
    from kombu import Connection

    from memoryweb.broker import RedisTransport

    port, _stop, _start = own_redis
    url, options = f"redis://127.0.0.1:{port}/0", {"visibility_timeout": 1}
    lost = Connection(url, transport=RedisTransport, transport_options=options)
    queue = lost.SimpleQueue("settle", channel=lost.channel())
    queue.put({"run": 7})
    message = queue.get(timeout=5)
    channel = message.channel
    channel.connection.client = None
    channel.close()
    assert channel.connection is None
    getattr(message, settle)()
    # Nothing is lost: Redis still holds the message as unacknowledged, and the sweep a
    # worker's event loop runs puts it back on its queue once the visibility timeout passed.
    time.sleep(1.5)
    with Connection(url, transport=RedisTransport, transport_options=options) as fresh:
        queue = fresh.SimpleQueue("settle")
        queue.channel.qos.restore_visible(interval=1)
        again = queue.get(timeout=5)
        assert again.payload == {"run": 7}
        again.ack()


def test_a_redis_outage_pauses_jobs_and_never_the_api(serve, own_redis):
    port, stop_redis, start_redis = own_redis
    s = serve(CELERY_BROKER_URL=f"redis://127.0.0.1:{port}/0", MEMORYWEB_SWEEP_SECONDS="5")
    s.manage("migrate", "-v", "0")
    s.manage("createprofile", "alice")
    token = s.manage("createtoken", "alice", "--role", "agent", "--name", "outage-test").strip().splitlines()[-1]
    admin = s.manage("createtoken", "alice", "--role", "admin", "--name", "scraper").strip().splitlines()[-1]
    s.start()
    worker = _child(s.proc.pid, " worker ")
    # The worker holds an unacknowledged countdown message when the broker goes away:
    # exactly the state in which kombu's Redis channel used to crash the worker.
    s.manage("shell", "-c", "from apps.pipeline.tasks import check_trigger; check_trigger.apply_async((1, 'l2_organize'), countdown=600)")
    time.sleep(2)
    stop_redis()
    headers = {"Authorization": f"Bearer {token}"}
    outage_end = time.monotonic() + 12
    ingested = False
    while time.monotonic() < outage_end:
        health = httpx.get(f"{s.url}/api/v1/health", timeout=10)
        assert health.status_code == 200 and health.json() == {"status": "degraded"}
        if not ingested:
            started = time.monotonic()
            response = httpx.post(f"{s.url}/api/v1/l0/messages", headers=headers, timeout=30, json={"messages": [
                {"role": "user", "content": "From now on always run the database migrations before starting the API server.",
                 "sessionKey": "outage", "id": "m-outage-1", "timestamp": int(time.time() * 1000)}]})
            assert response.status_code == 200, response.text
            assert time.monotonic() - started < 10  # a dead broker does not hold the request
            ingested = True
        assert httpx.post(f"{s.url}/api/v1/tools/whoami", headers=headers, json={}, timeout=10).status_code == 200
        time.sleep(0.5)
    runs = json.loads(s.manage("shell", "-c", RUNS).strip().splitlines()[-1])
    assert runs and runs[-1]["status"] == "queued" and runs[-1]["enqueueError"], runs
    start_redis()
    # The sweep re-sends runs whose last send is over a minute old; then the worker runs it.
    deadline = time.monotonic() + 150
    while time.monotonic() < deadline:
        runs = json.loads(s.manage("shell", "-c", RUNS).strip().splitlines()[-1])
        if runs and runs[-1]["status"] in ("succeeded", "failed"):
            break
        assert s.healthy()
        time.sleep(3)
    assert runs[-1]["status"] == "succeeded", (runs, s.log()[-4000:])
    log = s.log()
    assert "Unrecoverable error" not in log
    assert "worker exited" not in log and _child(s.proc.pid, " worker ") == worker
    # The run was measured in a Celery pool process; the web process's /metrics adds it in.
    metrics = httpx.get(f"{s.url}/metrics", headers={"Authorization": f"Bearer {admin}"}, timeout=10).text
    assert 'memoryweb_job_runs_total{kind="l1_extract",status="succeeded"} 1.0' in metrics
    assert 'memoryweb_http_requests_total{endpoint="l0-messages",status="200"} 1.0' in metrics
