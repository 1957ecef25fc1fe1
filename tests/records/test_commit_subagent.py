"""l1_commit in subagent mode (SPEC §3.2): result shape, provenance, cursor, role, trigger."""

from __future__ import annotations

import json
import re

import pytest

from apps.conversations.cursors import cursor_get
from apps.records.models import L1Change
from apps.search.models import IndexOp
from tests.records.conftest import CURSOR, T0, fail, msg, rec, record, snapshot

RESULT_KEYS = {
    "success", "stored", "tombstoned", "cursorCommitted", "valueCheck", "priorityDefaulted", "provenanceMissing",
    "overRecallBudget", "taskStateIgnored", "taskStateDroppedOnReplace", "sceneWarns", "projectWarnings",
    "rulesLoaded", "warnings",
}


@pytest.fixture
def rows(alice, l0):
    return l0(
        alice,
        msg(1, "we decided: memoryweb uses pnpm for the web assets", cwd="/w/bench"),
        msg(2, "and the CI runs on GitHub Actions", cwd="/w/bench"),
        msg(3, "other session text", session="s2", cwd="/other"),
    )


def test_commit_stores_records_with_the_full_result_shape(worker_api, alice, rows):
    body = worker_api.ok("l1_commit", records=[rec("memoryweb uses pnpm for web assets", sources=["m1", "m2"], new_scene_name="memoryweb｜构建", new_scene_reason="first talk about the build")], cursor=CURSOR)
    assert set(body) == RESULT_KEYS
    assert body["success"] is True and body["cursorCommitted"] is True
    assert body["valueCheck"] == {"dropped": [], "retyped": [], "skipped": False}
    [rid] = body["stored"]
    assert re.fullmatch(r"l1_\d{13}_[a-z0-9]{4}", rid)
    stored = record(alice, rid).as_dict()
    assert stored["version"] == 1 and stored["deleted"] is False
    assert stored["sessionKey"] == "s1" and stored["sessionId"] == "s1-id" and stored["cwd"] == "/w/bench"
    assert stored["source_message_ids"] == ["m1", "m2"]


def test_timestamps_are_the_sorted_deduplicated_event_times_of_the_sources(worker_api, alice, rows):
    body = worker_api.ok("l1_commit", records=[rec("CI runs on GitHub Actions now", sources=["m2", "m1", "m2"], timestamps=["1999-01-01T00:00:00Z"])], cursor=CURSOR)
    stored = record(alice, body["stored"][0])
    from apps.records.writes import epoch_ms_to_iso

    assert stored.timestamps == [epoch_ms_to_iso(T0 + 1000), epoch_ms_to_iso(T0 + 2000)]


def test_rows_without_event_time_contribute_no_timestamp(worker_api, alice, l0):
    l0(alice, msg(1, "timeless message about deployment", timestamp=None))
    body = worker_api.ok("l1_commit", records=[rec("deployment goes through the staging host")], cursor=CURSOR)
    assert record(alice, body["stored"][0]).timestamps == []


def test_records_without_source_ids_or_with_unknown_refs_are_dropped_as_provenance_missing(worker_api, alice, rows):
    body = worker_api.ok("l1_commit", records=[
        rec("first fact without sources at all", source_message_ids=[]),
        rec("second fact citing a missing message", sources=["nope"]),
        rec("third fact citing messages of two sessions", sources=["m1", "m3"]),
        rec("fourth fact cites a real message"),
    ], cursor=CURSOR)
    assert body["provenanceMissing"] == 3
    assert body["stored"][:3] == [None, None, None] and body["stored"][3]
    assert [d["index"] for d in body["valueCheck"]["dropped"]] == [0, 1, 2]
    assert {d["reason"] for d in body["valueCheck"]["dropped"]} == {"provenanceMissing"}


def test_record_session_key_narrows_where_refs_are_looked_up(worker_api, alice, l0):
    l0(alice, msg(1, "session one says hello world", session="a"), msg(1, "session two has the same id", session="b", cwd="/b"))
    body = worker_api.ok("l1_commit", records=[rec("a fact from session b only", sessionKey="b"), rec("a fact from session c", sessionKey="c")], cursor=CURSOR)
    assert record(alice, body["stored"][0]).session_key == "b" and record(alice, body["stored"][0]).cwd == "/b"
    assert body["stored"][1] is None and body["provenanceMissing"] == 1


def test_empty_records_commit_the_cursor_and_register_no_scene(worker_api, alice):
    body = worker_api.ok("l1_commit", records=[], cursor=CURSOR)
    assert body["stored"] == [] and body["cursorCommitted"] is True
    assert cursor_get(profile=alice, kind="l1") == json.loads(CURSOR)
    assert not alice.scene_entries.exists()


def test_cursor_accepts_an_object_too(worker_api, alice):
    worker_api.ok("l1_commit", records=[], cursor={"version": 2, "files": {"2026-11-30.jsonl": 5}})
    assert cursor_get(profile=alice, kind="l1") == {"version": 2, "files": {"2026-11-30.jsonl": 5}}


def test_cursor_never_moves_backwards_per_shard(worker_api, alice):
    worker_api.ok("l1_commit", records=[], cursor=json.dumps({"version": 2, "files": {"a.jsonl": 500, "b.jsonl": 10}}))
    worker_api.ok("l1_commit", records=[], cursor=json.dumps({"version": 2, "files": {"a.jsonl": 300, "c.jsonl": 7}}))
    assert cursor_get(profile=alice, kind="l1") == {"version": 2, "files": {"a.jsonl": 500, "b.jsonl": 10, "c.jsonl": 7}}


@pytest.mark.parametrize(
    "cursor, fragment",
    [
        (None, "required"),
        ("", "required"),
        ("{not json", "not valid JSON"),
        (json.dumps({"lastRecordedAt": "2026-01-01T00:00:00Z"}), "v2"),
        (json.dumps({"version": 1, "files": {}}), "version"),
        (json.dumps({"version": 2, "files": {"../x.jsonl": 1}}), "shard"),
    ],
)
def test_subagent_commit_needs_a_valid_v2_cursor_and_changes_nothing_otherwise(worker_api, alice, rows, cursor, fragment):
    before = snapshot(alice)
    payload = {"records": [rec("a perfectly good fact for the store")]}
    if cursor is not None:
        payload["cursor"] = cursor
    error = fail(worker_api, "l1_commit", 400, "invalid_params", **payload)
    assert fragment in error["message"]
    assert error["details"][0]["field"] == "cursor"
    assert snapshot(alice) == before


def test_agent_role_may_not_commit_in_subagent_mode(agent_api, alice, rows):
    before = snapshot(alice)
    fail(agent_api, "l1_commit", 403, "forbidden", records=[rec("a perfectly good fact for the store")], cursor=CURSOR)
    fail(agent_api, "l1_commit", 403, "forbidden", records=[rec("a perfectly good fact for the store")], cursor=CURSOR, source="subagent")
    assert snapshot(alice) == before


def test_admin_may_commit_in_subagent_mode(admin_api, rows):
    assert admin_api.ok("l1_commit", records=[rec("admins run the extractor by hand sometimes")], cursor=CURSOR)["stored"][0]


def test_every_stored_record_gets_a_change_an_audit_event_and_an_index_upsert(worker_api, alice, rows, monkeypatch):
    # The outbox drops vectors whose dimension is not the model's; here only the commit's
    # side is under test: it hands the client vector on when the content is unchanged.
    monkeypatch.setattr("apps.search.outbox._plausible", lambda vector: True)
    vector = [0.05] * 384
    body = worker_api.ok("l1_commit", records=[rec("fact number one for history"), rec("fact number two for history", embedding=vector)], cursor=CURSOR)
    for rid in body["stored"]:
        stored = record(alice, rid)
        [change] = L1Change.objects.filter(record=stored)
        assert change.action == "store" and change.state["content"] == stored.content
        assert stored.last_change == change.pk
        event = alice.audit_events.get(target_id=rid)
        assert event.before is None and event.after["id"] == rid
    ops = {op.record_id: op for op in IndexOp.objects.filter(profile=alice)}
    assert ops[body["stored"][0]].op == "upsert" and ops[body["stored"][0]].vector is None
    assert ops[body["stored"][1]].vector == vector


def test_client_embedding_of_the_wrong_dimension_is_invalid_params_and_changes_nothing(worker_api, alice, rows):
    before = snapshot(alice)
    body = fail(worker_api, "l1_commit", 400, "invalid_params",
                records=[rec("a fact with a good shape"), rec("a fact with a bad vector", embedding=[0.5, 0.25])], cursor=CURSOR)
    assert body["details"][0]["field"] == "records.1.embedding"
    assert "384" in body["message"]
    assert snapshot(alice) == before


def test_client_embedding_is_not_passed_on_when_the_content_was_changed(worker_api, alice, rows):
    body = worker_api.ok("l1_commit", records=[rec("  padded content gets trimmed  ", embedding=[0.05] * 384)], cursor=CURSOR)
    assert record(alice, body["stored"][0]).content == "padded content gets trimmed"
    assert IndexOp.objects.get(record_id=body["stored"][0]).vector is None


def test_successful_subagent_commit_with_records_wakes_the_l2_job(worker_api, alice, rows, monkeypatch, django_capture_on_commit_callbacks):
    calls = []
    from apps.pipeline import triggers

    monkeypatch.setattr(triggers, "l1_committed", lambda **kw: calls.append(kw))
    with django_capture_on_commit_callbacks(execute=True):
        worker_api.ok("l1_commit", records=[rec("one record wakes the organizer"), rec("tiny")], cursor=CURSOR)
    assert calls == [{"profile_id": alice.pk, "stored": 1, "source": "subagent"}]
    with django_capture_on_commit_callbacks(execute=True):
        worker_api.ok("l1_commit", records=[], cursor=CURSOR)
    assert len(calls) == 1


def test_client_id_is_kept_and_a_replay_of_the_same_batch_is_dropped_as_duplicate(worker_api, alice, rows):
    item = rec("client chose the id of this record", id="l1_1767000000000_ab12")
    assert worker_api.ok("l1_commit", records=[item], cursor=CURSOR)["stored"] == ["l1_1767000000000_ab12"]
    again = worker_api.ok("l1_commit", records=[item], cursor=CURSOR)
    assert again["stored"] == [None] and again["valueCheck"]["dropped"][0]["reason"] == "duplicate"


def test_client_id_of_another_existing_record_is_invalid(worker_api, alice, rows):
    worker_api.ok("l1_commit", records=[rec("client chose the id of this record", id="l1_1767000000000_ab12")], cursor=CURSOR)
    before = snapshot(alice)
    error = fail(worker_api, "l1_commit", 400, "invalid_params", records=[rec("different content, same id", id="l1_1767000000000_ab12")], cursor=CURSOR)
    assert error["details"][0]["field"] == "records.0.id"
    assert snapshot(alice) == before


@pytest.mark.parametrize(
    "bad, field",
    [
        ({"priority": "80"}, "records.0.priority"),
        ({"priority": 101}, "records.0.priority"),
        ({"colour": "red"}, "records.0.colour"),
        ({"type": "mystery"}, "records.0.type"),
        ({"type": "persona"}, "records.0.type"),
        ({"type": None}, "records.0.type"),
        ({"taskState": "finished", "type": "work_task"}, "records.0.taskState"),
        ({"source_message_ids": "m1"}, "records.0.source_message_ids"),
        ({"metadata": []}, "records.0.metadata"),
        ({"id": "not-an-id"}, "records.0.id"),
        ({"scene_id": "sc0001", "new_scene_name": "x｜y", "new_scene_reason": "r"}, "records.0.scene_id"),
        ({"new_scene_name": "x｜y"}, "records.0.new_scene_reason"),
        ({"new_scene_reason": "because"}, "records.0.new_scene_name"),
        ({"new_scene_name": "unclassified", "new_scene_reason": "r"}, "records.0.new_scene_name"),
    ],
)
def test_invalid_record_fields_name_index_and_field_and_change_nothing(worker_api, alice, rows, bad, field):
    worker_api.ok("l1_commit", records=[rec("an earlier good record in the store")], cursor=CURSOR)
    before = snapshot(alice)
    record_in = rec("second good record before the bad one")
    bad_record = {**rec("a record with one bad field in it"), **bad}
    error = fail(worker_api, "l1_commit", 400, "invalid_params", records=[bad_record, record_in], cursor=json.dumps({"version": 2, "files": {"z.jsonl": 9}}))
    assert error["details"][0]["field"] == field, error
    assert snapshot(alice) == before


def test_unknown_top_level_parameter_is_invalid(worker_api):
    fail(worker_api, "l1_commit", 400, "invalid_params", records=[], cursor=CURSOR, extra=1)


def test_duplicate_ids_in_one_batch_are_invalid(worker_api, alice, rows):
    error = fail(worker_api, "l1_commit", 400, "invalid_params", records=[
        rec("same id first content here", id="l1_1767000000000_aaaa"),
        rec("same id second content here", id="l1_1767000000000_aaaa"),
    ], cursor=CURSOR)
    assert error["details"][0]["field"] == "records.1.id"
