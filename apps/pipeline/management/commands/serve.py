"""`manage.py serve`: the production web server (gunicorn), a Celery worker and Celery
beat, as supervised child processes.

* Web: gunicorn with threaded workers (`gthread`). With embedded Qdrant exactly one
  worker process (only one process may open the index) with `--threads` threads; with a
  Qdrant server (`QDRANT_URL`) `--web-workers` processes. Static files stay with
  WhiteNoise inside the application.
* Supervision: a child that exits is started again after a back-off (1 s, doubling to
  at most 30 s; reset once it has run for a minute), with a log line each time; the
  other children keep running. So a broker outage that ends the worker, or a crash of
  beat, never takes the API down.
* Ctrl-C or SIGTERM is forwarded to every child's main process (gunicorn and Celery
  finish their current work); `serve` then exits 0. Each child runs in its own process
  group, so a terminal's Ctrl-C reaches the children once (through this command).
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from memoryweb.env import env_int

logger = logging.getLogger("memoryweb.serve")

STOP_GRACE_SECONDS = 15
BACKOFF_FIRST = 1.0
BACKOFF_MAX = 30.0
# A child that ran this long before dying is restarted at once, as a first failure.
STABLE_AFTER_SECONDS = 60.0


@dataclass
class Child:
    name: str
    cmd: list[str]
    env: dict[str, str]
    proc: subprocess.Popen | None = None
    started_at: float = 0.0
    restart_at: float | None = None
    backoff: float = BACKOFF_FIRST
    restarts: int = 0
    exits: list[int] = field(default_factory=list)

    def start(self) -> None:
        self.proc = subprocess.Popen(self.cmd, env=self.env, start_new_session=True)
        self.started_at = time.monotonic()
        self.restart_at = None

    def died(self, now: float) -> float:
        """Note the exit; returns the delay before the restart."""
        if now - self.started_at >= STABLE_AFTER_SECONDS:
            self.backoff = BACKOFF_FIRST
        delay = self.backoff
        self.backoff = min(self.backoff * 2, BACKOFF_MAX)
        self.restart_at = now + delay
        self.restarts += 1
        return delay


class Command(BaseCommand):
    help = "Run the web server (gunicorn), a Celery worker (queues quick, embed) and Celery beat, restarting any that dies."

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000", help="web address (default 127.0.0.1:8000)")
        parser.add_argument("--concurrency", type=int, default=2, help="Celery worker processes (default 2)")
        parser.add_argument(
            "--web-workers", type=int, default=None,
            help="web worker processes; only with QDRANT_URL (default MEMORYWEB_WEB_WORKERS or 2). Embedded Qdrant: always 1",
        )
        parser.add_argument("--threads", type=int, default=None, help="threads per web worker (default MEMORYWEB_WEB_THREADS or 8)")
        parser.add_argument("--no-beat", action="store_true", help="do not start beat (another host runs it)")
        parser.add_argument("--no-worker", action="store_true", help="do not start a worker")

    def handle(self, *args, **options):
        addrport = options["addrport"]
        host, _, port = addrport.rpartition(":")
        if not port.isdigit():
            raise CommandError(f"addrport must look like 127.0.0.1:8000, got {addrport!r}")
        host = host or "127.0.0.1"
        web_workers, threads = _web_shape(options["web_workers"], options["threads"])
        children = self._children(host, port, web_workers, threads, options)
        self.stdout.write(
            f"broker: {_redact(settings.CELERY_BROKER_URL)}; web: http://{host}:{port}/ "
            f"(gunicorn, {web_workers} worker process(es) x {threads} threads)"
        )
        stopping = {"signal": None}

        def forward(signum, _frame):
            stopping["signal"] = signum

        # Handlers first: a Ctrl-C while children start must still stop the started ones.
        signal.signal(signal.SIGINT, forward)
        signal.signal(signal.SIGTERM, forward)
        try:
            for child in children:
                if stopping["signal"] is not None:
                    break
                child.start()
                self.stdout.write(f"started {child.name} (pid {child.proc.pid})")
            while stopping["signal"] is None:
                self._supervise(children)
                time.sleep(0.2)
        finally:
            _stop_all(children)
        self.stdout.write("stopped")

    def _supervise(self, children: list[Child]) -> None:
        now = time.monotonic()
        for child in children:
            if child.restart_at is not None:
                if now >= child.restart_at:
                    child.start()
                    logger.info("restarted %s (pid %s, restart %s)", child.name, child.proc.pid, child.restarts,
                                extra={"event": "child_restart", "child": child.name, "pid": child.proc.pid})
                continue
            code = child.proc.poll() if child.proc is not None else None
            if code is None:
                continue
            child.exits.append(code)
            delay = child.died(now)
            status = f"signal {-code}" if code < 0 else f"status {code}"
            logger.warning("%s exited with %s; restarting it in %.0f s", child.name, status, delay,
                           extra={"event": "child_exit", "child": child.name, "exitStatus": code, "restartIn": delay})

    def _children(self, host: str, port: str, web_workers: int, threads: int, options) -> list[Child]:
        python = sys.executable
        env = os.environ.copy()
        # Workers reach the tool API of this web server unless told otherwise.
        env.setdefault("MEMORYWEB_SERVICE_URL", f"http://{host}:{port}")
        env["PROMETHEUS_MULTIPROC_DIR"] = str(_fresh_metrics_dir())
        gunicorn = [
            *_script(python, "gunicorn"), "memoryweb.wsgi:application",
            "--bind", f"{host}:{port}", "--worker-class", "gthread", "--workers", str(web_workers),
            "--threads", str(threads),
            # A tool call may embed and wait for the profile lock; jobs call back over HTTP.
            "--timeout", str(env_int("MEMORYWEB_WEB_TIMEOUT", 120, minimum=10)),
            "--graceful-timeout", str(STOP_GRACE_SECONDS - 2),
            "--keep-alive", "5",
            # gunicorn's control socket defaults to one path per user: a second install would clash.
            "--no-control-socket",
            # The application logs every request itself (memoryweb.request); gunicorn logs its own events.
            "--error-logfile", "-", "--log-level", "info",
        ]
        celery = _script(python, "celery")
        children = [Child("web", gunicorn, {**env, "MEMORYWEB_PROCESS_ROLE": "web"})]
        if not options["no_worker"]:
            children.append(Child("worker", [
                *celery, "-A", "memoryweb", "worker", "-Q", "quick,embed", "-c", str(options["concurrency"]),
                "-n", "memoryweb@%h", "--loglevel", "INFO",
            ], {**env, "MEMORYWEB_PROCESS_ROLE": "worker"}))
        if not options["no_beat"]:
            children.append(Child("beat", [
                *celery, "-A", "memoryweb", "beat", "--loglevel", "INFO", "-s", settings.CELERY_BEAT_SCHEDULE_FILENAME,
            ], {**env, "MEMORYWEB_PROCESS_ROLE": "beat"}))
        return children


def _web_shape(web_workers: int | None, threads: int | None) -> tuple[int, int]:
    threads = threads if threads is not None else env_int("MEMORYWEB_WEB_THREADS", 8, minimum=1)
    if threads < 1:
        raise CommandError("--threads must be at least 1")
    if not settings.QDRANT_URL:
        # Embedded Qdrant is a folder only one process may open: one web process, many threads.
        if web_workers not in (None, 1):
            raise CommandError("embedded Qdrant has one owner: --web-workers needs a Qdrant server (QDRANT_URL)")
        return 1, threads
    web_workers = web_workers if web_workers is not None else env_int("MEMORYWEB_WEB_WORKERS", 2, minimum=1)
    if web_workers < 1:
        raise CommandError("--web-workers must be at least 1")
    return web_workers, threads


def _script(python: str, name: str) -> list[str]:
    # The console script, so the process is recognisable by its argv[0].
    script = Path(python).with_name(name)
    return [str(script)] if script.exists() else [python, "-m", name]


def _fresh_metrics_dir() -> Path:
    # prometheus-client's multiprocess files must not outlive the processes that wrote them.
    path = Path(settings.DATA_DIR) / "prometheus"
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def _stop_all(children: list[Child]) -> None:
    running = [c.proc for c in children if c.proc is not None and c.proc.poll() is None]
    for proc in running:
        try:
            # The main process only: gunicorn and Celery stop their own workers gracefully.
            os.kill(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for proc in running:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()


def _redact(url: str) -> str:
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url
