"""How a recall's hits are written (docs/retrieval.md, "Hit statistics"): one transaction
of three statements whatever the number of records, exact under concurrent recalls, and
a `hit-stats.json` built by the database that says what `hit_stats_export` says."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.hitstats import services
from apps.hitstats.models import RecallEvent, RecallHit, RecordHits


def _writes(queries) -> list[str]:
    skip = ("SAVEPOINT", "RELEASE SAVEPOINT", "ROLLBACK TO SAVEPOINT", "BEGIN")
    return [q["sql"] for q in queries.captured_queries if not q["sql"].upper().startswith(skip)]


@pytest.mark.parametrize("returned", [1, 20])
def test_a_recall_is_logged_in_three_statements_whatever_it_returned(alice, returned):
    RecordHits.objects.create(profile=alice, record_id="l1_r0", hits=4)  # an existing row and new ones
    results = [(f"l1_r{i}", 1.0 - i / 100) for i in range(returned)]
    with CaptureQueriesContext(connection) as queries:
        services.hits_record(profile=alice, query="q", results=results, session_key="s", turn="t")
    statements = _writes(queries)
    assert len(statements) == 3, statements  # the event, its RecallHit rows, the counters
    assert RecordHits.objects.get(profile=alice, record_id="l1_r0").hits == 5
    assert RecordHits.objects.filter(profile=alice, hits=1).count() == returned - 1
    event = RecallEvent.objects.get(profile=alice)
    assert [r["recordId"] for r in event.results] == [rid for rid, _ in results]
    assert list(RecallHit.objects.filter(event=event).order_by("pk").values_list("record_id", "score")) == results


def test_each_returned_record_gets_one_hit_per_recall_and_its_last_hit_time(alice):
    services.hits_record(profile=alice, query="q", results=[("l1_a", 0.5), ("l1_a", 0.4), ("l1_b", 0.3)])
    first = RecordHits.objects.get(profile=alice, record_id="l1_a")
    assert (first.hits, RecordHits.objects.get(profile=alice, record_id="l1_b").hits) == (1, 1)
    services.hits_record(profile=alice, query="q", results=[("l1_a", 0.5)])
    again = RecordHits.objects.get(profile=alice, record_id="l1_a")
    assert again.hits == 2 and again.invalid_hits == 0 and again.last_hit_at >= first.last_hit_at
    assert RecallHit.objects.filter(profile=alice, record_id="l1_a").count() == 3  # the log keeps every row


def test_hits_of_one_profile_never_touch_another(alice, bob):
    services.hits_record(profile=bob, query="q", results=[("l1_a", 0.5)])
    services.hits_record(profile=alice, query="q", results=[("l1_a", 0.5)])
    assert RecordHits.objects.get(profile=bob, record_id="l1_a").hits == 1
    assert RecordHits.objects.get(profile=alice, record_id="l1_a").hits == 1


def test_the_hit_stats_file_says_what_the_export_says(alice, django_capture_on_commit_callbacks):
    RecordHits.objects.bulk_create([
        RecordHits(profile=alice, record_id="l1_never_hit_time", hits=0, invalid_hits=0, last_hit_at=None),
        RecordHits(profile=alice, record_id="l1_whole_second", hits=3, invalid_hits=5,
                   last_hit_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),
        RecordHits(profile=alice, record_id='l1_"quoted"_记忆', hits=7, invalid_hits=1,
                   last_hit_at=datetime(2026, 11, 30, 23, 59, 59, 123456, tzinfo=UTC)),
    ])
    with django_capture_on_commit_callbacks(execute=True):
        services.hits_record(profile=alice, query="q", results=[("l1_fresh", 0.5)])
    written = json.loads(services.hit_stats_path(alice).read_text(encoding="utf-8"))
    exported = services.hit_stats_export(profile=alice)
    assert written["records"] == exported["records"]
    assert written["records"]["l1_whole_second"] == {"hits": 3, "invalid_hits": 5, "effective_hits": -2,
                                                     "lastHitAt": "2026-01-02T03:04:05Z"}
    assert written["records"]['l1_"quoted"_记忆']["lastHitAt"] == "2026-11-30T23:59:59.123456Z"
    assert written["records"]["l1_never_hit_time"]["lastHitAt"] is None
    assert {k: written[k] for k in ("version", "profile")} == {"version": 1, "profile": "alice"}


def test_an_empty_table_is_an_empty_records_object(alice):
    services.hit_stats_write(profile=alice)
    assert json.loads(services.hit_stats_path(alice).read_text())["records"] == {}


@pytest.mark.django_db(transaction=True)
def test_concurrent_recalls_of_the_same_records_lose_no_hit(alice):
    if connection.vendor != "postgresql":
        pytest.skip("concurrent writers need a server database (SQLite test databases are in memory)")
    errors: list[Exception] = []

    def recall(k: int) -> None:
        try:
            for n in range(5):
                # Overlapping ids in different orders: the upsert locks them in one order.
                ids = ["l1_x", "l1_y", f"l1_own_{k}"] if (k + n) % 2 else [f"l1_own_{k}", "l1_y", "l1_x"]
                services.hits_record(profile=alice, query=f"q{k}", results=[(rid, 0.5) for rid in ids])
        except Exception as exc:  # noqa: BLE001 — reported by the assert below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=recall, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    hits = dict(RecordHits.objects.filter(profile=alice).values_list("record_id", "hits"))
    assert hits == {"l1_x": 30, "l1_y": 30, **{f"l1_own_{k}": 5 for k in range(6)}}
    assert RecallEvent.objects.filter(profile=alice).count() == 30
