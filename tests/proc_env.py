"""Separate OS processes against a database of their own, for concurrency tests: a
file-backed SQLite database, or a PostgreSQL database created for the test (skipped when
PostgreSQL does not answer), independent of the suite's test database.

A worker module is run as `python -m <module> <command> ...` with DATABASE_URL and
MEMORYWEB_DATA_DIR set, and prints one JSON line with its result.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PG_ADMIN_URL = os.environ.get("MW_RECORDS_PG_ADMIN", "postgres://postgres@127.0.0.1:5432/postgres")


def pg_available() -> bool:
    try:
        import psycopg

        psycopg.connect(PG_ADMIN_URL, connect_timeout=3).close()
        return True
    except Exception:  # noqa: BLE001 — any failure means: no PostgreSQL here
        return False


class ProcEnv:
    def __init__(self, module: str, database_url: str, data_dir: Path):
        self.module, self.data_dir = module, data_dir
        self.vars = {**os.environ, "DATABASE_URL": database_url, "MEMORYWEB_DATA_DIR": str(data_dir),
                     "DJANGO_SETTINGS_MODULE": "memoryweb.settings", "SQLITE_TIMEOUT_SECONDS": "10"}

    def start(self, *args: str, **extra_env: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", self.module, *args], cwd=ROOT, env={**self.vars, **extra_env},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def finish(self, proc: subprocess.Popen) -> dict:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-3000:]
        return json.loads(out.strip().splitlines()[-1])

    def run(self, *args: str, **extra_env: str) -> dict:
        return self.finish(self.start(*args, **extra_env))


@contextmanager
def proc_backend(kind: str, module: str, data_dir: Path, prefix: str) -> Iterator[ProcEnv]:
    """A ProcEnv on a fresh database of `kind` ("sqlite" or "postgresql"), set up with the
    worker's `setup` command; the PostgreSQL database is dropped afterwards."""
    if kind == "sqlite":
        env = ProcEnv(module, f"sqlite:///{data_dir / 'db.sqlite3'}", data_dir)
        env.run("setup")
        yield env
        return
    if not pg_available():
        pytest.skip("PostgreSQL is not reachable")
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        env = ProcEnv(module, PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}", data_dir)
        env.run("setup")
        yield env
    finally:
        with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
