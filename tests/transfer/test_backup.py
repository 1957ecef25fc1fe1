"""`manage.py memory backup` of a service under a commit burst: the restored copy holds
every commit acknowledged before the backup began, nothing that was never acknowledged,
and no record without its history. File-backed SQLite in separate OS processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _env(database: Path, data_dir: Path) -> dict[str, str]:
    # A job-worker role: these processes never open the embedded index (it is derived and
    # not part of a backup).
    return {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "MEMORYWEB_DATA_DIR": str(data_dir),
            "DJANGO_SETTINGS_MODULE": "memoryweb.settings", "MEMORYWEB_PROCESS_ROLE": "worker"}


def _run(env: dict[str, str], *args: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "tests.transfer.proc_burst", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _acks(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.endswith("}")]


def test_backup_under_a_commit_burst_restores_every_acknowledged_commit(tmp_path):
    data = tmp_path / "service"
    env = _env(data / "memoryweb.sqlite3", data)
    data.mkdir()
    _run(env, "setup")
    ack_file = tmp_path / "acks.jsonl"
    burst = subprocess.Popen([sys.executable, "-m", "tests.transfer.proc_burst", "burst", "250", str(ack_file)], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while len(_acks(ack_file)) < 15 and time.monotonic() < deadline and burst.poll() is None:
            time.sleep(0.05)
        before = _acks(ack_file)
        assert len(before) >= 15, burst.stderr.read() if burst.poll() is not None else "burst too slow"
        backup_dir = tmp_path / "backup"
        proc = subprocess.run([sys.executable, "manage.py", "memory", "backup", str(backup_dir)], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)
        still_running = burst.poll() is None
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "SQLite online backup" in proc.stdout and "reindex" in proc.stdout
    finally:
        _out, err = burst.communicate(timeout=300)
    assert burst.returncode == 0, err[-3000:]
    assert still_running, "the burst ended before the backup did; the test would prove nothing"

    restored = _run(_env(backup_dir / "memoryweb.sqlite3", backup_dir / "data"), "report")
    everything = _acks(ack_file)
    assert {a["record"] for a in before} <= set(restored["records"])
    assert set(restored["records"]) <= {a["record"] for a in everything}
    assert restored["withoutHistory"] == 0
    assert {a["l0"] for a in before} <= set(restored["l0"])
    assert not (backup_dir / "data" / "qdrant").exists()


@pytest.mark.django_db(transaction=True)
def test_postgresql_backup_is_a_pg_dump_holding_committed_records(tmp_path, make_profile, make_api):
    import shutil as _shutil

    from django.db import connection

    if connection.vendor != "postgresql" or _shutil.which("pg_restore") is None:
        pytest.skip("a PostgreSQL database and pg_dump/pg_restore are needed")
    from django.core.management import call_command

    profile = make_profile("pgbackup")
    stored = make_api(profile, "agent").ok("l1_commit", source="main-agent", records=[
        {"content": "The release checklist lives in docs/release.md", "type": "work_fact"}])["stored"][0]
    dest = tmp_path / "pgbackup"
    call_command("memory", "backup", str(dest))
    dump = dest / "memoryweb.pgdump"
    listing = subprocess.run(["pg_restore", "--list", str(dump)], capture_output=True, text=True, check=True).stdout
    assert "TABLE DATA public records_l1record" in listing
    data = subprocess.run(["pg_restore", "--data-only", "--table=records_l1record", "-f", "-", str(dump)],
                          capture_output=True, text=True, check=True).stdout
    assert stored in data
