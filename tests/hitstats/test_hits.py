"""Hit statistics (SPEC §1.6, §3.15): invalid hits, effective hits, hit-stats.json."""

from __future__ import annotations

import json

import pytest

from apps.accounts.models import AuditEvent
from apps.hitstats import services
from apps.hitstats.models import RecallBudget, RecordHits


@pytest.fixture
def recalled(alice):
    services.hits_record(profile=alice, query="q", results=[("l1_a", 0.5), ("l1_b", 0.4)], session_key="s", turn="t")
    services.hits_record(profile=alice, query="q2", results=[("l1_a", 0.3)])
    return alice


def _stats(profile, rid):
    return RecordHits.objects.get(profile=profile, record_id=rid)


def test_hits_record_counts_each_returned_record(recalled):
    assert _stats(recalled, "l1_a").hits == 2
    assert _stats(recalled, "l1_b").hits == 1
    assert _stats(recalled, "l1_a").last_hit_at is not None


def test_clear_invalid_increments_invalid_hits_of_recalled_ids_only(recalled, agent_api):
    body = agent_api.ok("clear_invalid_l1_records", recordIds=["l1_a", "l1_never"])
    assert body == {"updated": ["l1_a"], "skipped": ["l1_never"]}
    row = _stats(recalled, "l1_a")
    assert (row.hits, row.invalid_hits, row.effective_hits) == (2, 1, 1)
    assert not RecordHits.objects.filter(record_id="l1_never").exists()


def test_clear_invalid_is_audited(recalled, agent_api):
    agent_api.ok("clear_invalid_l1_records", recordIds=["l1_b"])
    event = AuditEvent.objects.get(profile=recalled, tool="clear_invalid_l1_records")
    assert event.target_id == "l1_b"
    assert event.before["invalid_hits"] == 0 and event.after["invalid_hits"] == 1
    assert event.after["effective_hits"] == 0


def test_clear_invalid_counts_a_repeated_id_once_per_call(recalled, agent_api):
    agent_api.ok("clear_invalid_l1_records", recordIds=["l1_a", "l1_a"])
    assert _stats(recalled, "l1_a").invalid_hits == 1


def test_clear_invalid_never_deletes_anything(recalled, agent_api):
    for _ in range(3):
        agent_api.ok("clear_invalid_l1_records", recordIds=["l1_b"])
    row = _stats(recalled, "l1_b")
    assert (row.hits, row.invalid_hits, row.effective_hits) == (1, 3, -2)


def test_clear_invalid_stays_within_the_profile(recalled, bob, make_api):
    body = make_api(bob, "agent").ok("clear_invalid_l1_records", recordIds=["l1_a"])
    assert body == {"updated": [], "skipped": ["l1_a"]}
    assert _stats(recalled, "l1_a").invalid_hits == 0


@pytest.mark.parametrize(
    ("params", "field"),
    [({"recordIds": []}, "recordIds"), ({"recordIds": [" "]}, "recordIds.0"), ({}, "recordIds"),
     ({"recordIds": "l1_a"}, "recordIds"), ({"recordIds": ["x"] * 201}, "recordIds")],
)
def test_clear_invalid_bad_input_changes_nothing(recalled, agent_api, params, field):
    before = list(RecordHits.objects.values_list("record_id", "hits", "invalid_hits"))
    status, body = agent_api.call("clear_invalid_l1_records", **params)
    assert status == 400 and body["error"]["code"] == "invalid_params"
    assert body["error"]["details"][0]["field"] == field
    assert list(RecordHits.objects.values_list("record_id", "hits", "invalid_hits")) == before


def test_hit_stats_json_is_rewritten_after_each_change(alice, agent_api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        services.hits_record(profile=alice, query="q", results=[("l1_a", 0.5)])
    path = services.hit_stats_path(alice)
    data = json.loads(path.read_text())
    assert path.parts[-3:] == ("alice", "l1", "hit-stats.json")
    assert data["records"]["l1_a"]["hits"] == 1 and data["records"]["l1_a"]["effective_hits"] == 1
    with django_capture_on_commit_callbacks(execute=True):
        agent_api.ok("clear_invalid_l1_records", recordIds=["l1_a"])
    data = json.loads(path.read_text())
    assert data["records"]["l1_a"] == {
        "hits": 1, "invalid_hits": 1, "effective_hits": 0, "lastHitAt": data["records"]["l1_a"]["lastHitAt"],
    }
    assert data["profile"] == "alice" and data["version"] == 1


def test_a_recall_with_no_results_does_not_rewrite_the_file(alice, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        services.hits_record(profile=alice, query="q", results=[])
    assert callbacks == []
    assert not services.hit_stats_path(alice).exists()


def test_recall_budget_counts_per_session_turn(alice):
    for expected in (1, 2, 3):
        assert services.recall_budget_take(profile=alice, session_key="s", turn="t", limit=3) == expected
    with pytest.raises(services.BudgetExceeded):
        services.recall_budget_take(profile=alice, session_key="s", turn="t", limit=3)
    assert RecallBudget.objects.get(profile=alice, session_key="s", turn="t").calls == 3
    assert services.recall_budget_take(profile=alice, session_key="s", turn="t2", limit=3) == 1


def test_recall_budget_without_a_turn_id_is_not_counted(alice):
    for _ in range(5):
        assert services.recall_budget_take(profile=alice, session_key="s", turn="", limit=3) == 0
    assert RecallBudget.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_large_profiles_rewrite_hit_stats_in_the_background_within_a_second(alice, monkeypatch):
    import time

    monkeypatch.setattr(services, "SYNC_ROWS_LIMIT", 1)
    monkeypatch.setattr(services, "COALESCE_SECONDS", 0.1)
    services.hits_record(profile=alice, query="q", results=[("l1_a", 0.5), ("l1_b", 0.4)])
    path = services.hit_stats_path(alice)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not path.exists():
        time.sleep(0.05)
    assert set(json.loads(path.read_text())["records"]) == {"l1_a", "l1_b"}


@pytest.mark.background_hit_stats
@pytest.mark.django_db(transaction=True)
def test_a_recall_leaves_the_file_to_the_background_writer_whatever_the_profile_size(alice, monkeypatch):
    import time

    monkeypatch.setattr(services, "COALESCE_SECONDS", 0.5)
    services.hits_record(profile=alice, query="q", results=[("l1_a", 0.5)])  # committed: the hits are counted
    path = services.hit_stats_path(alice)
    assert not path.exists()  # a small profile, yet the answer did not wait for the file
    assert RecordHits.objects.get(profile=alice, record_id="l1_a").hits == 1
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not path.exists():
        time.sleep(0.05)
    assert json.loads(path.read_text())["records"]["l1_a"]["hits"] == 1


@pytest.mark.background_hit_stats
@pytest.mark.django_db(transaction=True)
def test_pending_hit_files_are_written_by_a_flush_at_exit(alice, monkeypatch):
    monkeypatch.setattr(services, "COALESCE_SECONDS", 30)  # the writer would wait far longer than the test
    services.hits_record(profile=alice, query="q", results=[("l1_a", 0.5), ("l1_b", 0.4)])
    path = services.hit_stats_path(alice)
    assert not path.exists()
    services.hit_stats_flush()  # what the interpreter runs at exit
    assert set(json.loads(path.read_text())["records"]) == {"l1_a", "l1_b"}


@pytest.mark.background_hit_stats
@pytest.mark.django_db(transaction=True)
def test_stopping_the_writer_writes_what_it_was_waiting_to_write(alice, monkeypatch):
    monkeypatch.setattr(services, "COALESCE_SECONDS", 30)
    services.hits_record(profile=alice, query="q", results=[("l1_a", 0.5)])
    path = services.hit_stats_path(alice)
    assert not path.exists()
    services.hit_stats_writer_stop()  # wakes the writer long before its 30 s are up
    assert json.loads(path.read_text())["records"]["l1_a"]["hits"] == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_recalls_share_one_turn_budget(alice):
    import threading

    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("concurrent writers need a server database (SQLite test databases are in memory)")
    outcomes: list[str] = []
    lock = threading.Lock()

    def call() -> None:
        try:
            services.recall_budget_take(profile=alice, session_key="s", turn="t", limit=3)
            result = "ok"
        except services.BudgetExceeded:
            result = "limited"
        finally:
            connection.close()
        with lock:
            outcomes.append(result)

    threads = [threading.Thread(target=call) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["limited"] * 5 + ["ok"] * 3
    assert RecallBudget.objects.get(profile=alice, session_key="s", turn="t").calls == 3


def test_hit_stats_json_is_never_written_through_a_linked_l1_folder(alice, bob, django_capture_on_commit_callbacks):
    import os

    from apps.accounts.paths import profile_dir, profile_subdir

    bobs = profile_subdir(bob, "l1") / "hit-stats.json"
    bobs.write_text('{"profile": "bob"}\n')
    profile_dir(alice).mkdir(parents=True, exist_ok=True)
    os.symlink(profile_subdir(bob, "l1"), profile_dir(alice) / "l1")
    with django_capture_on_commit_callbacks(execute=True):
        services.hits_record(profile=alice, query="q", results=[("l1_a", 0.5)])
    assert bobs.read_text() == '{"profile": "bob"}\n'
    assert RecordHits.objects.get(profile=alice, record_id="l1_a").hits == 1  # the statistics themselves are kept
