"""`manage.py serve`: web, worker and beat start with no Redis (embedded SQLite broker);
SIGTERM stops all of them; when one child dies the others are stopped too."""

from __future__ import annotations

import os
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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped) counts as gone.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


def _start(tmp_path: Path):
    data = tmp_path / "serve-data"
    data.mkdir()
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CELERY_BROKER_URL", "MEMORYWEB_PROCESS", "MEMORYWEB_SERVICE"))}
    env.update({"MEMORYWEB_DATA_DIR": str(data), "PYTHONUNBUFFERED": "1"})
    subprocess.run([sys.executable, str(ROOT / "manage.py"), "migrate", "-v", "0"], env=env, cwd=ROOT, check=True, timeout=300)
    log = open(tmp_path / "serve.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), "serve", f"127.0.0.1:{port}"], env=env, cwd=ROOT,
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        text = (tmp_path / "serve.log").read_text(errors="replace")
        try:
            healthy = httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=2).status_code in (200, 503)
        except httpx.HTTPError:
            healthy = False
        if healthy and " ready." in text and "beat: Starting" in text:
            return proc, port, data
        assert proc.poll() is None, text[-3000:]
        time.sleep(0.5)
    proc.kill()
    raise AssertionError((tmp_path / "serve.log").read_text(errors="replace")[-3000:])


def test_serve_starts_everything_without_redis_and_stops_on_sigterm(tmp_path):
    proc, _port, data = _start(tmp_path)
    children = _children(proc.pid)
    assert len(children) == 3
    assert "sqla+sqlite" in (tmp_path / "serve.log").read_text()
    assert (data / "celery-broker.sqlite3").exists()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=40) == 0
    time.sleep(0.5)
    assert not any(_alive(c) for c in children)


def test_serve_exits_when_a_child_dies(tmp_path):
    proc, _port, _data = _start(tmp_path)
    children = _children(proc.pid)
    beat = next(c for c in children if "beat" in Path(f"/proc/{c}/cmdline").read_text().replace("\0", " "))
    os.kill(beat, signal.SIGKILL)
    assert proc.wait(timeout=40) == 128 + signal.SIGKILL
    time.sleep(0.5)
    assert not any(_alive(c) for c in children)
    assert "beat exited" in (tmp_path / "serve.log").read_text()
