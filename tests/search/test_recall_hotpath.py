"""The recall hot path (docs/retrieval.md, "The hot path"): the database check of the
candidates is one query that also reads their hits, it still drops what the index says
but the database no longer holds, query embeddings come from the LRU, and hits are
visible to every reader as soon as the recall has answered."""

from __future__ import annotations

import math

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from apps.hitstats.models import RecordHits
from apps.records.models import L1Record
from apps.search import embedding, index, services
from apps.search.models import IndexOp
from tests.search.conftest import write_record


@pytest.fixture
def open_recall(alice):
    alice.settings = {"recall.minRelevance": 0.0}  # these tests are about the check, not the threshold
    alice.save()
    return alice


def _lagging(profile, record: L1Record, **changes) -> None:
    """Change the row as a committed write would, while the index write failed a moment
    ago (the outbox keeps the op for a later retry): the point still says the old state."""
    if changes.pop("gone", False):
        L1Record.objects.filter(pk=record.pk).delete()
    else:
        L1Record.objects.filter(pk=record.pk).update(**changes)
    IndexOp.objects.create(profile=profile, record_id=record.record_id, op="upsert", attempts=3,
                           last_error="index down", last_attempt_at=timezone.now())


def test_one_query_checks_every_candidate_and_drops_tombstoned_missing_and_no_longer_matching(open_recall, monkeypatch):
    alice = open_recall
    kept = write_record(alice, "The staging database listens on port 5433.")
    tombstoned = write_record(alice, "The staging database used to listen on port 5432.")
    missing = write_record(alice, "Staging database port 5434 was a typo.")
    retyped = write_record(alice, "Close the staging database port ticket.", type="work_task")
    moved = write_record(alice, "The staging database port is 6000 in the other project.")
    _lagging(alice, tombstoned, deleted=True)
    _lagging(alice, missing, gone=True)
    _lagging(alice, retyped, task_state="done")
    _lagging(alice, moved, metadata={"scope": "self", "project": "/srv/elsewhere"})
    assert index.count_points(alice) == 5
    RecordHits.objects.create(profile=alice, record_id=kept.record_id, hits=9, invalid_hits=1)

    checks: list[int] = []
    real = services.live_rows

    def counted(profile, record_ids):
        with CaptureQueriesContext(connection) as queries:
            rows = real(profile, record_ids)
        checks.append(len(queries.captured_queries))
        return rows

    monkeypatch.setattr(services, "live_rows", counted)
    body = services.recall_records(profile=alice, query="staging database port", top_k=5, include_closed_tasks=False,
                                   trace=True)
    assert [r["recordId"] for r in body["records"]] == [kept.record_id]
    assert checks == [1]  # rows and hits of all five candidates in one query
    boost = body["trace"][0]["boosts"]["effectiveHits"]
    assert boost > 0  # the hits read with the row: 8 effective hits lift it
    assert boost == pytest.approx(min(services.HIT_BOOST_MAX, services.HIT_BOOST_SCALE * math.log1p(8)), abs=1e-6)


def test_a_record_with_more_invalid_than_valid_hits_gets_no_boost(open_recall):
    alice = open_recall
    rec = write_record(alice, "Rotate the staging database password monthly.")
    RecordHits.objects.create(profile=alice, record_id=rec.record_id, hits=2, invalid_hits=5)
    body = services.recall_records(profile=alice, query="staging database password", top_k=1, trace=True)
    assert body["trace"][0]["boosts"]["effectiveHits"] == 0.0


def test_a_repeated_recall_embeds_its_query_once(open_recall, monkeypatch):
    alice = open_recall
    write_record(alice, "The nightly backup runs at 02:00.")
    embedding.cache_clear()
    runs: list[str] = []
    real = embedding._run_texts

    def counting(model, texts):
        runs.extend(texts)
        return real(model, texts)

    monkeypatch.setattr(embedding, "_run_texts", counting)
    first = services.recall_records(profile=alice, query="when does the backup run", top_k=1)
    second = services.recall_records(profile=alice, query="when does the backup run", top_k=1)
    assert runs == ["query: when does the backup run"]
    assert [r["recordId"] for r in first["records"]] == [r["recordId"] for r in second["records"]]


def test_an_answered_recall_is_counted_before_the_answer_for_every_reader(open_recall, agent_api):
    from apps.hitstats import selectors as hit_selectors
    from apps.records import selectors as record_selectors

    alice = open_recall
    rec = write_record(alice, "The deploy key lives in the team vault.")
    body = agent_api.ok("recall_l1_records", query="where is the deploy key", topK=1)
    assert [r["recordId"] for r in body["records"]] == [rec.record_id]
    # No wait, no flush: the hit is committed with the answer.
    assert hit_selectors.hits_for(alice, [rec.record_id])[rec.record_id].hits == 1
    assert hit_selectors.hit_totals(alice)["hits"] == 1
    assert record_selectors.never_recalled_count(alice) == 0
    assert hit_selectors.record_recalls(alice, rec.record_id)[0].event.query == "where is the deploy key"
    assert agent_api.ok("clear_invalid_l1_records", recordIds=[rec.record_id]) == {"updated": [rec.record_id], "skipped": []}
