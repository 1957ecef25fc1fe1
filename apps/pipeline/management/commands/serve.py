"""`manage.py serve`: the web server, a Celery worker and Celery beat as child processes.

Ctrl-C or SIGTERM is forwarded to every child; when one child exits, the others are
stopped and `serve` exits with that child's status, so a supervisor sees the failure.
Each child runs in its own process group, so a terminal's Ctrl-C reaches the children
once (through this command), not twice.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

STOP_GRACE_SECONDS = 15


class Command(BaseCommand):
    help = "Run the web server, a Celery worker (queues quick, embed) and Celery beat together."

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000", help="web address (default 127.0.0.1:8000)")
        parser.add_argument("--concurrency", type=int, default=2, help="worker processes (default 2)")
        parser.add_argument("--no-beat", action="store_true", help="do not start beat (another host runs it)")
        parser.add_argument("--no-worker", action="store_true", help="do not start a worker")

    def handle(self, *args, **options):
        addrport = options["addrport"]
        host, _, port = addrport.rpartition(":")
        if not port.isdigit():
            raise CommandError(f"addrport must look like 127.0.0.1:8000, got {addrport!r}")
        python = sys.executable
        # The console script, so the process is recognisably a Celery worker (argv[0]).
        celery_script = Path(python).with_name("celery")
        celery = [str(celery_script)] if celery_script.exists() else [python, "-m", "celery"]
        manage = str(settings.BASE_DIR / "manage.py")
        env = os.environ.copy()
        # Workers reach the tool API of this web server unless told otherwise.
        env.setdefault("MEMORYWEB_SERVICE_URL", f"http://{host or '127.0.0.1'}:{port}")
        children = {"web": ([python, manage, "runserver", "--noreload", addrport], "web")}
        if not options["no_worker"]:
            children["worker"] = (
                [*celery, "-A", "memoryweb", "worker", "-Q", "quick,embed", "-c", str(options["concurrency"]),
                 "-n", "memoryweb@%h", "--loglevel", "INFO"],
                "worker",
            )
        if not options["no_beat"]:
            children["beat"] = (
                [*celery, "-A", "memoryweb", "beat", "--loglevel", "INFO", "-s", settings.CELERY_BEAT_SCHEDULE_FILENAME],
                "beat",
            )
        self.stdout.write(f"broker: {_redact(settings.CELERY_BROKER_URL)}; web: http://{addrport}/")
        procs: dict[str, subprocess.Popen] = {}
        stopping = {"signal": None}

        def forward(signum, _frame):
            stopping["signal"] = signum

        # Handlers first: a Ctrl-C while children start must still stop the started ones.
        signal.signal(signal.SIGINT, forward)
        signal.signal(signal.SIGTERM, forward)
        exit_code = 0
        try:
            for name, (cmd, role) in children.items():
                if stopping["signal"] is not None:
                    break
                procs[name] = subprocess.Popen(cmd, env={**env, "MEMORYWEB_PROCESS_ROLE": role}, start_new_session=True)
                self.stdout.write(f"started {name} (pid {procs[name].pid})")
            while stopping["signal"] is None:
                dead = [(n, p.poll()) for n, p in procs.items() if p.poll() is not None]
                if dead:
                    name, code = dead[0]
                    self.stderr.write(f"{name} exited with status {code}; stopping the others")
                    exit_code = 128 - code if code and code < 0 else (code or 1)
                    break
                time.sleep(0.5)
        finally:
            _stop_all(procs)
        if stopping["signal"] is not None:
            self.stdout.write("stopped")
            return
        raise SystemExit(exit_code)


def _stop_all(procs: dict[str, subprocess.Popen]) -> None:
    for proc in procs.values():
        if proc.poll() is None:
            try:
                # The main process only: Celery stops its own pool children (warm shutdown).
                os.kill(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for proc in procs.values():
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
