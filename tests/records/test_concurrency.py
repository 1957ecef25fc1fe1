"""Two OS processes committing to one profile lose nothing; a held write lock answers
`locked`. Runs against a file-backed SQLite database and a PostgreSQL database of its own
(skipped when PostgreSQL does not answer), independent of the suite's test database."""

from __future__ import annotations

import json
import time

import pytest

from tests.proc_env import proc_backend

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def backend(request, tmp_path_factory):
    data_dir = tmp_path_factory.mktemp(f"conc-{request.param}")
    with proc_backend(request.param, "tests.records.proc_worker", data_dir, "mw_records_conc") as env:
        yield env


def test_two_processes_committing_at_once_lose_no_record_and_no_cursor_step(backend):
    per_worker = 15
    procs = [backend.start("commit", str(w), str(per_worker)) for w in (1, 2)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-3000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    stored = [rid for r in results for rid in r["stored"]]
    assert len(stored) == 2 * per_worker and None not in stored and len(set(stored)) == len(stored)
    report = backend.run("report")
    expected = sorted(f"worker {w} memory number {i} about the project" for w in (1, 2) for i in range(per_worker))
    assert [c for c in report["contents"] if c.startswith("worker ")] == expected
    assert set(stored) <= set(report["records"])
    files = report["cursor"]["files"]
    assert files["w1.jsonl"] == per_worker * 10 and files["w2.jsonl"] == per_worker * 10
    assert files["shared.jsonl"] == 2000 + per_worker - 1
    # three scene names registered once each, under one id each, counted per record
    topics = {name: v for name, v in report["scenes"].items() if name.startswith("proj")}
    assert len(topics) == 3 and sum(v[1] for v in topics.values()) == 2 * per_worker
    assert len({v[0] for v in topics.values()}) == 3


def test_a_held_write_lock_makes_task_state_answer_locked(backend):
    task_id = backend.run("add_task")["id"]
    backend.run("set_lock_timeout", "1")
    holder = backend.start("hold", "6")
    try:
        assert json.loads(holder.stdout.readline())["held"] is True
        # The connection timeout stays at 10 s: the profile's own 1 s must win.
        result = backend.run("task_state", task_id)
        assert result["error"] == "locked" and result["status"] == 423
        assert result["seconds"] < 5
    finally:
        holder.communicate(timeout=30)
    time.sleep(0.1)
    after = backend.run("task_state", task_id)
    assert after["result"]["applied"] == [task_id]
