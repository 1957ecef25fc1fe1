"""The index and its outbox: drain after commit, failures kept, degraded mode, reindex."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.records.models import L1Record
from apps.search import embedding, index
from apps.search.models import IndexOp
from apps.search.outbox import drain_outbox, enqueue_index_op
from tests.search.conftest import hold_index, tombstone, write_record


@pytest.fixture
def foreign_holder(settings):
    """Another process holding the embedded index (a second client in this process takes
    the same exclusive file lock)."""
    index.close_clients()
    holder = hold_index(settings)
    yield holder
    holder.close()


def test_enqueue_drains_after_the_transaction_commits(alice, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        write_record(alice, "The release train leaves every second Tuesday.", drain=False)
        write_record(alice, "Hotfixes skip the release train.", drain=False)
    assert len(callbacks) == 1  # one drain per transaction, however many ops
    assert IndexOp.objects.filter(profile=alice).count() == 0
    assert index.count_points(alice) == 2


def test_rolled_back_transaction_leaves_nothing_to_drain(alice):
    from django.db import transaction

    with pytest.raises(RuntimeError), transaction.atomic():
        write_record(alice, "This commit never happens.", drain=False)
        raise RuntimeError("abort")
    assert IndexOp.objects.count() == 0
    assert L1Record.objects.count() == 0


def test_drain_failure_keeps_the_ops_with_attempts_and_error(alice, foreign_holder):
    write_record(alice, "Written while another process holds the index.", drain=False)
    result = drain_outbox(alice.pk)
    assert result == {"applied": 0, "failed": 1, "pending": 1}
    op = IndexOp.objects.get(profile=alice)
    assert op.attempts == 1
    assert "held by another process" in op.last_error


def test_ops_applied_after_the_index_comes_back(alice, settings):
    index.close_clients()
    holder = hold_index(settings)
    rec = write_record(alice, "Queued while the index was locked.", drain=False)
    drain_outbox(alice.pk)
    assert IndexOp.objects.get(profile=alice).attempts == 1
    holder.close()
    assert drain_outbox()["applied"] == 1
    assert IndexOp.objects.count() == 0
    assert index.count_points(alice) == 1
    assert index.search_dense(alice, embedding.embed_one("queued locked", kind="query"), limit=1)[0].record_id == rec.record_id


def test_drain_never_raises_into_the_committing_caller(alice, django_capture_on_commit_callbacks, foreign_holder):
    with django_capture_on_commit_callbacks(execute=True):
        write_record(alice, "The commit succeeds although the index is held.", drain=False)
    assert L1Record.objects.filter(profile=alice).count() == 1
    assert IndexOp.objects.get(profile=alice).attempts == 1


def test_payload_op_updates_filters_without_reembedding(alice, agent_api):
    task = write_record(alice, "Upgrade the Redis client library.", type="work_task")
    L1Record.objects.filter(pk=task.pk).update(task_state="done")
    enqueue_index_op(profile=alice, record_id=task.record_id, op="payload")
    drain_outbox(alice.pk)
    alice.settings = {"recall.hideClosedTasks": True}
    alice.save()
    body = agent_api.ok("recall_l1_records", query="upgrade redis client")
    assert body["records"] == []


def test_a_client_vector_is_used_only_when_it_is_the_models_embedding_of_the_content(alice):
    content = "Prefer ripgrep over grep for code search."
    own = embedding.embed_one(content, kind=embedding.PASSAGE)
    assert index.client_vector_usable([float(x) for x in own], content) is not None
    assert index.client_vector_usable([float(x) for x in own], content + " (edited)") is None
    assert index.client_vector_usable([0.1] * 384, content) is None
    assert index.client_vector_usable([float(x) for x in own][:100], content) is None


def test_a_forged_client_vector_is_replaced_by_the_real_embedding(alice):
    content = "Prefer ripgrep over grep for code search."
    rec = write_record(alice, content, drain=False)
    IndexOp.objects.filter(record_id=rec.record_id).update(vector=[1.0] + [0.0] * 383)
    drain_outbox(alice.pk)
    hit = index.search_dense(alice, embedding.embed_one(content, kind=embedding.PASSAGE), limit=1)[0]
    assert hit.record_id == rec.record_id
    assert hit.score == pytest.approx(1.0, abs=1e-3)


# ------------------------------------------------------------------ degraded
def test_recall_degrades_to_keyword_search_when_the_index_is_held(alice, agent_api, settings):
    rec = write_record(alice, "The staging database lives on host db-stage-02.")
    write_record(alice, "Lunch is at noon.")
    index.close_clients()
    holder = hold_index(settings)
    try:
        body = agent_api.ok("recall_l1_records", query="staging database host")
    finally:
        holder.close()
    assert body["degraded"] is True
    assert [r["recordId"] for r in body["records"]] == [rec.record_id]


def test_degraded_recall_still_applies_scope_and_tombstones(alice, agent_api, foreign_holder):
    alice.known_projects = ["/home/dev/alpha"]
    alice.save()
    write_record(alice, "Database backups run at 02:00 in beta.", scope="self", project="/home/dev/beta", drain=False)
    gone = write_record(alice, "Database backups run at 03:00.", drain=False)
    tombstone(gone, drain=False)
    kept = write_record(alice, "Database backups are kept for a week.", drain=False)
    body = agent_api.ok("recall_l1_records", query="database backups", cwd="/home/dev/alpha")
    assert body["degraded"] is True
    assert [r["recordId"] for r in body["records"]] == [kept.record_id]


def test_recall_degrades_when_the_qdrant_server_is_down(alice, agent_api, settings):
    rec = write_record(alice, "Grafana dashboards are provisioned from JSON files.")
    settings.QDRANT_URL = "http://127.0.0.1:9"
    index.close_clients()
    body = agent_api.ok("recall_l1_records", query="grafana dashboards")
    assert body["degraded"] is True
    assert [r["recordId"] for r in body["records"]] == [rec.record_id]


def test_recall_degrades_when_the_embedding_model_is_missing(alice, agent_api, settings, tmp_path):
    rec = write_record(alice, "Grafana dashboards are provisioned from JSON files.")
    settings.EMBED_MODEL_DIR = tmp_path / "no-model"
    body = agent_api.ok("recall_l1_records", query="grafana dashboards")
    assert body["degraded"] is True
    assert [r["recordId"] for r in body["records"]] == [rec.record_id]


def test_degraded_recall_is_logged_as_degraded(alice, agent_api, foreign_holder):
    write_record(alice, "Grafana dashboards are provisioned from JSON files.", drain=False)
    agent_api.ok("recall_l1_records", query="grafana")
    from apps.hitstats.models import RecallEvent

    assert RecallEvent.objects.get(profile=alice).degraded is True


def test_health_reports_index_and_model(alice, admin_api):
    write_record(alice, "Health checks read the index.")
    body = admin_api.get("/api/v1/health")[1]
    assert body["checks"]["index"]["ok"] is True
    model = body["checks"]["embedding_model"]
    assert {k: model[k] for k in ("ok", "model", "dim")} == {"ok": True, "model": "memoryweb/multilingual-e5-small-int8", "dim": 384}
    # the embedding space names the model and the transform; the index reports the same one
    assert model["space"].startswith("memoryweb/multilingual-e5-small-int8:384:") and "/debias1-" in model["space"]
    assert body["checks"]["index"]["space"] == model["space"]


def test_health_reports_a_held_index(alice, admin_api, foreign_holder):
    body = admin_api.get("/api/v1/health")[1]
    assert body["checks"]["index"]["ok"] is False
    assert "held by another process" in body["checks"]["index"]["error"]


def test_job_workers_never_open_the_embedded_index(alice, monkeypatch):
    import sys

    monkeypatch.setattr(sys, "argv", ["/venv/bin/celery", "-A", "memoryweb", "worker"])
    index.close_clients()
    with pytest.raises(index.IndexLocked, match="belongs to the web process"):
        index.store()


def test_a_worker_started_as_python_dash_m_celery_never_opens_the_embedded_index(alice, monkeypatch):
    import sys

    monkeypatch.setattr(sys, "argv", ["/venv/lib/python3.11/site-packages/celery/__main__.py", "-A", "memoryweb", "worker"])
    monkeypatch.setenv("MEMORYWEB_PROCESS_ROLE", "worker")
    index.close_clients()
    with pytest.raises(index.IndexLocked, match="belongs to the web process"):
        index.store()


# ------------------------------------------------------------------- reindex
def test_reindex_rebuilds_from_the_database_and_switches_the_alias(alice, capsys):
    keep = write_record(alice, "Reindex keeps live records.")
    gone = write_record(alice, "Reindex drops tombstones.")
    old = index.current_collection(alice)
    # The index lost a point and kept a ghost: the rebuild follows the database.
    index.delete_points(alice, [keep.record_id])
    L1Record.objects.filter(pk=gone.pk).update(deleted=True)
    index.close_clients()
    call_command("reindex", "alice")
    assert "alice: 1 records" in capsys.readouterr().out
    new = index.current_collection(alice)
    assert new != old
    assert index.count_points(alice) == 1
    assert old not in index.collection_names()


def test_recall_answers_from_the_old_collection_until_the_switch(alice, agent_api, monkeypatch):
    rec = write_record(alice, "Recall works during a rebuild.")
    seen = []
    real_upsert = index.upsert_records

    def spying_upsert(profile, records, **kwargs):
        real_upsert(profile, records, **kwargs)
        if kwargs.get("collection") and not seen:
            seen.append(agent_api.ok("recall_l1_records", query="recall during rebuild")["records"])

    monkeypatch.setattr(index, "upsert_records", spying_upsert)
    index.reindex_profile(alice)
    assert [r["recordId"] for r in seen[0]] == [rec.record_id]


def test_reindex_catches_up_records_committed_during_the_build(alice, monkeypatch):
    write_record(alice, "Existing record.")
    late = []
    real_upsert = index.upsert_records

    def upsert_then_commit(profile, records, **kwargs):
        real_upsert(profile, records, **kwargs)
        if not late:
            late.append(write_record(alice, "Committed while the rebuild ran.", drain=False))

    monkeypatch.setattr(index, "upsert_records", upsert_then_commit)
    index.reindex_profile(alice)
    monkeypatch.undo()
    found = index.search_dense(alice, embedding.embed_one("committed while the rebuild ran", kind="query"), limit=2)
    assert late[0].record_id in {c.record_id for c in found}


def test_reindex_refuses_clearly_when_another_process_holds_the_index(alice, foreign_holder):
    with pytest.raises(CommandError, match="held by another process"):
        call_command("reindex", "alice")


def test_reindex_rejects_an_unknown_profile(alice):
    with pytest.raises(CommandError, match="unknown profile"):
        call_command("reindex", "nobody")


def test_an_index_built_for_another_dimension_asks_for_a_reindex(alice, agent_api):
    name = "mw-alice-old"
    index.store().create_collection(name, 8, "")
    index.store().set_alias(index.alias_name(alice), name)
    with pytest.raises(index.IndexUnavailable, match="reindex alice"):
        index.ensure_collection(alice)


def test_ops_that_failed_repeatedly_are_retried_by_recall_at_most_once_a_minute(alice, agent_api):
    from datetime import timedelta

    from django.utils import timezone

    rec = write_record(alice, "Recovered after the outage.", drain=False)
    recent = timezone.now()
    IndexOp.objects.filter(profile=alice).update(attempts=5, last_error="locked", last_attempt_at=recent)
    agent_api.ok("recall_l1_records", query="recovered outage", session="s", turn="1")
    assert IndexOp.objects.filter(profile=alice).count() == 1  # too soon: not retried
    IndexOp.objects.filter(profile=alice).update(last_attempt_at=recent - timedelta(minutes=2))
    body = agent_api.ok("recall_l1_records", query="recovered outage", session="s", turn="2")
    assert IndexOp.objects.filter(profile=alice).count() == 0
    assert body["records"][0]["recordId"] == rec.record_id


def test_a_failed_drain_records_when_it_was_tried(alice, foreign_holder):
    write_record(alice, "Tried while held.", drain=False)
    drain_outbox(alice.pk)
    assert IndexOp.objects.get(profile=alice).last_attempt_at is not None
