"""A run's own bookkeeping (heartbeats, its outcome) survives a reader of the run table.

On SQLite with a shared cache (the test databases, and any process where threads share
one database) a write to a table another connection is reading fails at once with
"database table is locked" — no busy wait. The requesting thread polls the run while it
waits for the answer, so the run's writes meet that reader in ordinary use.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import OperationalError, connection, connections

from apps.pipeline import scheduling
from apps.pipeline.jobs import RunContext, execute_run
from apps.pipeline.models import JobRun

pytestmark = pytest.mark.django_db(transaction=True)


class Reader:
    """Another connection with a SELECT on the run table left open for `seconds`."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.holding = threading.Event()
        self.thread = threading.Thread(target=self._hold, daemon=True)

    def _hold(self) -> None:
        try:
            raw = connections["default"]
            raw.ensure_connection()
            cursor = raw.connection.cursor()
            cursor.execute("SELECT id FROM pipeline_jobrun")  # stepped once, not finished: the read stays open
            self.holding.set()
            time.sleep(self.seconds)
            cursor.close()
        finally:
            connections.close_all()

    def __enter__(self) -> Reader:
        self.thread.start()
        assert self.holding.wait(5)
        return self

    def __exit__(self, *exc) -> None:
        self.thread.join(10)


def _blocks_writers() -> bool:
    """Whether this database answers a write under an open read with a lock error."""
    with Reader(0.3):
        try:
            JobRun.objects.filter(pk=-1).update(error="probe")
        except OperationalError:
            return True
    return False


@pytest.fixture
def queued(alice):
    run = scheduling.request_run(profile=alice, kind="l1_extract", reason="test", send=False)
    assert run is not None
    return run


def test_a_heartbeat_waits_out_a_short_read_of_the_run_table(queued):
    blocked = connection.vendor == "sqlite" and _blocks_writers()
    ctx = RunContext(queued, executor=None, timeout=60)
    with Reader(0.15):
        ctx.progress("commit", "batch 1: committing 3 items", force=True)
    queued.refresh_from_db()
    assert queued.progress["step"] == "commit" and queued.progress["message"] == "batch 1: committing 3 items"
    if connection.vendor == "sqlite":
        assert blocked, "the reader did not hold the table: this test would not show the wait"


def test_a_heartbeat_that_cannot_get_the_table_is_dropped_not_raised(queued):
    blocked = connection.vendor == "sqlite" and _blocks_writers()
    ctx = RunContext(queued, executor=None, timeout=60)
    ctx.progress("read", "batch 1: reading L0", force=True)
    with Reader(2.0):
        ctx.progress("commit", "batch 1: committing 3 items", force=True)  # gives up after its attempts
    queued.refresh_from_db()
    assert queued.progress["step"] == ("read" if blocked else "commit")


def test_a_runs_outcome_is_written_after_a_short_read_of_the_run_table(queued, monkeypatch):
    """The run's outcome is the write that matters: it waits for the reader to finish."""
    from apps.pipeline import rules

    readers: list[Reader] = []

    def driver(ctx) -> None:  # a driver whose last moment meets a reader of the run table
        readers.append(Reader(0.15).__enter__())

    monkeypatch.setitem(rules.RULES_DRIVERS, "l1_extract", driver)
    done = execute_run(run_id=queued.pk)
    readers[0].__exit__(None, None, None)
    assert done is not None and done.status == "succeeded", done.error
    assert done.finished_at is not None and done.progress["step"] == "succeeded"


@pytest.mark.skipif(connection.vendor != "sqlite", reason="the table lock under a reader is SQLite's shared-cache behaviour")
def test_inside_a_callers_transaction_a_locked_heartbeat_raises_at_once(queued):
    from django.db import transaction

    if not _blocks_writers():
        pytest.skip("this SQLite build lets the write through")
    ctx = RunContext(queued, executor=None, timeout=60)
    with Reader(2.0):
        started = time.monotonic()
        with pytest.raises(OperationalError), transaction.atomic():
            ctx.progress("commit", "batch 1", force=True)
        took = time.monotonic() - started
    assert took < 0.3  # raised at once, not after the attempts' waits (0.6 s in all)
