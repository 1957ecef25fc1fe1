"""A process killed (SIGKILL) after it answered recalls has counted every answered hit:
the hits are committed before the answer leaves the service. Runs against a file-backed
SQLite database and a PostgreSQL database of its own (skipped when PostgreSQL does not
answer), with the embedded index and the real model, independent of the suite's
test database."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter

import pytest

from tests.proc_env import ProcEnv, proc_backend

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def backend(request, tmp_path_factory):
    data_dir = tmp_path_factory.mktemp(f"hits-crash-{request.param}")
    with proc_backend(request.param, "tests.hitstats.proc_recall", data_dir, "mw_hits_crash") as env:
        yield env


def _since(before: dict, after: dict) -> dict:
    """What the calls between two counts logged (the module's tests share one database)."""
    events = after["events"][len(before["events"]):]
    assert after["events"][: len(before["events"])] == before["events"]
    hits = Counter(after["hits"])
    hits.subtract(before["hits"])
    return {"events": events, "hits": {rid: n for rid, n in hits.items() if n},
            "recallHits": after["recallHits"] - before["recallHits"], "file": after["file"], "allHits": after["hits"]}


def _answers_until(proc: subprocess.Popen, stop) -> list[list[str]]:
    """Read the answers the process printed until `stop(answers, line)` says so."""
    answers: list[list[str]] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        data = json.loads(line)
        if "ids" in data:
            answers.append(data["ids"])
        if stop(answers, data):
            return answers
    raise AssertionError(f"the recall process ended early: {proc.stderr.read()[-3000:] if proc.stderr else ''}")


def _kill(proc: subprocess.Popen) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL


def test_every_answered_hit_is_counted_after_a_kill(backend: ProcEnv):
    before = backend.run("count")
    proc = backend.start("recall", "9", "hold")
    try:
        answers = _answers_until(proc, lambda answers, data: data.get("done"))
        # The hits were committed before each answer; the file follows from the process's
        # background writer within about a second (read here while the process holds).
        deadline = time.monotonic() + 10
        while True:
            seen = backend.run("count")
            if seen["file"] == seen["hits"] or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    finally:
        _kill(proc)
    assert len(answers) == 9 and all(answers)
    after = _since(before, backend.run("count"))  # a fresh process: what survived the kill
    assert after["events"] == answers
    assert after["hits"] == dict(Counter(rid for ids in answers for rid in ids))
    assert after["recallHits"] == sum(len(ids) for ids in answers)
    assert after["file"] == after["allHits"]


def test_a_kill_in_the_middle_of_recalls_leaves_every_answer_counted_and_nothing_half_written(backend: ProcEnv):
    before = backend.run("count")
    proc = backend.start("recall", "0", "stream")
    try:
        answers = _answers_until(proc, lambda answers, data: len(answers) >= 6)
    finally:
        _kill(proc)  # while it answers the next ones
    after = _since(before, backend.run("count"))
    # Every answered call is there, in order; at most the calls in flight when the process
    # died come on top (committed but never delivered).
    assert after["events"][: len(answers)] == answers
    # Each logged call is whole: its event, its RecallHit rows and its hits, or none of them.
    assert after["hits"] == dict(Counter(rid for ids in after["events"] for rid in ids))
    assert after["recallHits"] == sum(len(ids) for ids in after["events"])
