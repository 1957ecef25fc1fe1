"""POST /api/v1/l0/messages: validation, stored form, audit and trigger."""

from __future__ import annotations

import json

import pytest

from apps.accounts.models import AuditEvent
from apps.conversations import services
from apps.conversations.ingest import MAX_ROWS_PER_CALL

from .conftest import post_rows, row, shard_bytes


def test_append_returns_shard_offset_source_line_and_reference(agent_api, alice):
    body = post_rows(agent_api, [row(1), row(2, id=None)])
    shard = services.today_shard_name()
    assert body["appended"] == 2
    first, second = body["rows"]
    assert first["shard"] == shard and first["offset"] == 0 and first["sourceLine"] == 1 and first["messageRef"] == "m1"
    assert second["sourceLine"] == 2 and second["messageRef"] == "s1#2"
    data = shard_bytes(alice, shard)
    assert data[second["offset"] :].startswith(b"{") and data[second["offset"] - 1 : second["offset"]] == b"\n"
    stored = json.loads(data.split(b"\n")[1])
    assert stored["sourceLine"] == 2 and stored["recordedAt"] and stored["content"] == "message 2"


def test_bare_list_body_is_accepted(agent_api, alice):
    status, body = agent_api.post("/api/v1/l0/messages", [row(1)])
    assert status == 200 and body["rows"][0]["messageRef"] == "m1"


def test_optional_fields_are_normalised_and_unknown_fields_kept(agent_api, alice):
    post_rows(agent_api, [{"role": "user", "content": "hi", "sessionKey": "s", "model": "x-1", "meta": {"a": 1}}])
    stored = json.loads(shard_bytes(alice, services.today_shard_name()).split(b"\n")[0])
    assert stored["id"] is None and stored["timestamp"] is None and stored["sessionId"] is None and stored["cwd"] == ""
    assert stored["model"] == "x-1" and stored["meta"] == {"a": 1}


@pytest.mark.parametrize(
    "bad, field",
    [
        ({"content": "x", "sessionKey": "s"}, "messages.0.role"),
        ({"role": 5, "content": "x", "sessionKey": "s"}, "messages.0.role"),
        ({"role": "user", "sessionKey": "s"}, "messages.0.content"),
        ({"role": "user", "content": None, "sessionKey": "s"}, "messages.0.content"),
        ({"role": "user", "content": "x"}, "messages.0.sessionKey"),
        ({"role": "user", "content": "x", "sessionKey": ""}, "messages.0.sessionKey"),
        ({"role": "user", "content": "x", "sessionKey": "s", "timestamp": "123"}, "messages.0.timestamp"),
        ({"role": "user", "content": "x", "sessionKey": "s", "timestamp": True}, "messages.0.timestamp"),
        ({"role": "user", "content": "x", "sessionKey": "s", "timestamp": -1}, "messages.0.timestamp"),
        ({"role": "user", "content": "x", "sessionKey": "s", "id": 7}, "messages.0.id"),
        ({"role": "user", "content": "x", "sessionKey": "s", "sessionId": 7}, "messages.0.sessionId"),
        ({"role": "user", "content": "x", "sessionKey": "s", "cwd": ["/w"]}, "messages.0.cwd"),
        ({"role": "user", "content": "x", "sessionKey": "s", "recordedAt": "2026-01-01T00:00:00Z"}, "messages.0.recordedAt"),
        ({"role": "user", "content": "x", "sessionKey": "s", "sourceLine": 3}, "messages.0.sourceLine"),
        ("just text", "messages.0"),
    ],
)
def test_bad_rows_are_refused_naming_the_field_and_nothing_is_written(agent_api, alice, bad, field):
    post_rows(agent_api, [row(1)])
    before = shard_bytes(alice, services.today_shard_name())
    audits = AuditEvent.objects.count()
    status, body = agent_api.post("/api/v1/l0/messages", {"messages": [row(2), bad]})
    assert status == 400 and body["error"]["code"] == "invalid_params"
    fields = [d["field"] for d in body["error"]["details"]]
    assert field.replace("messages.0", "messages.1") in fields
    assert shard_bytes(alice, services.today_shard_name()) == before
    assert AuditEvent.objects.count() == audits


def test_body_shape_errors(agent_api, alice):
    status, body = agent_api.post("/api/v1/l0/messages", {"rows": []})
    assert status == 400 and "rows" in [d["field"] for d in body["error"]["details"]]
    status, body = agent_api.post("/api/v1/l0/messages", {})
    assert status == 400 and body["error"]["details"][0]["field"] == "messages"
    status, body = agent_api.post("/api/v1/l0/messages", {"messages": {"a": 1}})
    assert status == 400 and body["error"]["details"][0]["field"] == "messages"
    assert not (services.l0_dir(alice) / services.today_shard_name()).exists()


def test_too_many_rows_in_one_call_are_refused(agent_api, alice):
    status, body = agent_api.post("/api/v1/l0/messages", {"messages": [row(i) for i in range(MAX_ROWS_PER_CALL + 1)]})
    assert status == 400 and body["error"]["details"][0]["field"] == "messages"
    assert not (services.l0_dir(alice) / services.today_shard_name()).exists()


def test_empty_batch_writes_nothing(agent_api, alice):
    status, body = agent_api.post("/api/v1/l0/messages", {"messages": []})
    assert status == 200 and body == {"appended": 0, "rows": [], "duplicates": []}
    assert not (services.l0_dir(alice) / services.today_shard_name()).exists()


def test_append_is_audited_and_wakes_the_l1_trigger_with_eligible_count(agent_api, alice, monkeypatch, django_capture_on_commit_callbacks):
    calls = []
    monkeypatch.setattr("apps.pipeline.triggers.l0_appended", lambda **kw: calls.append(kw))
    with django_capture_on_commit_callbacks(execute=True):
        post_rows(agent_api, [row(1), row(2, role="assistant"), row(3, role="tool"), row(4, role="system")])
    assert calls == [{"profile_id": alice.pk, "eligible": 2}]
    event = AuditEvent.objects.get(profile=alice, tool="l0/messages")
    assert event.action == "append" and event.after["rows"] == 4 and event.after["lastLine"] == 4


def test_append_needs_a_token_and_goes_to_the_callers_profile(make_api, client, alice, bob):
    response = client.post("/api/v1/l0/messages", data=json.dumps({"messages": [row(1)]}), content_type="application/json")
    assert response.status_code == 401
    post_rows(make_api(bob, "agent"), [row(1)])
    assert shard_bytes(bob, services.today_shard_name()) and not shard_bytes(alice, services.today_shard_name())


def test_appended_rows_are_indexed_for_lookup(agent_api, alice):
    post_rows(agent_api, [row(1, content="see /repo/a.py")])
    assert services.l0_lookup_messages(profile=alice, refs=["m1"])["m1"][0]["content"] == "see /repo/a.py"


def test_nul_characters_in_keys_are_refused(agent_api, alice):
    status, body = agent_api.post("/api/v1/l0/messages", [{"role": "user", "content": "x\x00ok", "sessionKey": "a\x00b"}])
    assert status == 400 and [d["field"] for d in body["error"]["details"]] == ["messages.0.sessionKey"]


def _fail(*args, **kwargs):
    from django.db import OperationalError

    raise OperationalError("database went away")


def test_a_database_failure_after_the_shard_write_still_answers_success_so_nothing_is_resent(agent_api, alice, monkeypatch):
    monkeypatch.setattr("apps.conversations.ingest.audit_record", _fail)
    status, body = agent_api.post("/api/v1/l0/messages", {"messages": [row(1), row(2, id=None)]})
    assert status == 200, body
    assert body["appended"] == 2 and [r["messageRef"] for r in body["rows"]] == ["m1", "s1#2"]
    assert [w["code"] for w in body["warnings"]] == ["auditFailed"]
    assert len(shard_bytes(alice, services.today_shard_name()).splitlines()) == 2
    # the index rows rolled back with the audit; the catch-up finds the rows anyway
    assert services.l0_lookup_messages(profile=alice, refs=["m1", "s1#2"])["s1#2"][0]["content"] == "message 2"


def test_an_index_failure_is_not_an_error_and_the_catch_up_indexes_the_rows(agent_api, alice, monkeypatch):
    monkeypatch.setattr("apps.conversations.services._index_save", _fail)
    body = post_rows(agent_api, [row(1)])
    assert body["appended"] == 1 and "warnings" not in body
    assert AuditEvent.objects.filter(profile=alice, tool="l0/messages").count() == 1
    monkeypatch.undo()
    post_rows(agent_api, [row(2)])  # later batches do not hide the gap in the indexed prefix
    found = services.l0_lookup_messages(profile=alice, refs=["m1", "m2"])
    assert found["m1"][0]["sourceLine"] == 1 and found["m2"][0]["sourceLine"] == 2


def test_a_failed_shard_write_leaves_the_shard_as_it_was_and_answers_unavailable(agent_api, alice, monkeypatch):
    import errno
    import os

    post_rows(agent_api, [row(1)])
    before = shard_bytes(alice, services.today_shard_name())
    audits = AuditEvent.objects.count()
    real_write = os.write

    def write_half_then_fail(fd, data):
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("apps.conversations.shards.os.write", write_half_then_fail)
    status, body = agent_api.post("/api/v1/l0/messages", {"messages": [row(2), row(3)]})
    monkeypatch.undo()
    assert status == 503 and body["error"]["code"] == "unavailable"
    assert "No space left on device" in body["error"]["message"]
    assert shard_bytes(alice, services.today_shard_name()) == before
    assert AuditEvent.objects.count() == audits
    assert post_rows(agent_api, [row(2)])["rows"][0]["sourceLine"] == 2


def test_a_row_nested_absurdly_deep_is_refused_naming_the_row(agent_api, alice):
    deep: object = "x"
    for _ in range(100):
        deep = [deep]
    status, body = agent_api.post("/api/v1/l0/messages", {"messages": [row(1), row(2, extra=deep)]})
    assert status == 400 and [d["field"] for d in body["error"]["details"]] == ["messages.1"]
    assert "64 levels" in body["error"]["message"]
    assert not (services.l0_dir(alice) / services.today_shard_name()).exists()


def test_an_l0_folder_linked_to_another_profile_is_never_read_or_written(agent_api, worker_api, alice, bob):
    import os

    from apps.accounts.paths import profile_dir

    services.l0_append(profile=bob, rows=[row(1, content="bob's secret")])
    bob_l0 = services.l0_dir(bob)
    before = sorted((p.name, p.read_bytes()) for p in bob_l0.iterdir())
    profile_dir(alice).mkdir(parents=True, exist_ok=True)
    os.symlink(bob_l0, profile_dir(alice) / "l0")
    status, body = agent_api.post("/api/v1/l0/messages", {"messages": [row(2)]})
    assert status == 403 and "link" in body["error"]["message"]
    status, body = worker_api.call("read_l0_increment", l0Files=services.today_shard_name(), cursor="")
    assert status == 403 and "bob's secret" not in json.dumps(body)
    status, body = worker_api.call("l1_project_get", sessionKey="s1")
    assert status == 403
    assert sorted((p.name, p.read_bytes()) for p in bob_l0.iterdir()) == before


def test_a_line_count_folder_linked_outside_the_profile_is_never_written(agent_api, alice, bob, tmp_path):
    import os

    from apps.accounts.paths import profile_dir

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (profile_dir(alice) / services.STATE_DIR).mkdir(parents=True, exist_ok=True)
    os.symlink(outside, profile_dir(alice) / services.STATE_DIR / "l0")
    status, body = agent_api.post("/api/v1/l0/messages", {"messages": [row(1)]})
    assert status == 403 and "link" in body["error"]["message"]
    assert list(outside.iterdir()) == []
    assert not (services.l0_dir(alice) / services.today_shard_name()).exists()


def test_the_same_id_twice_in_one_session_of_a_batch_is_stored_once_and_reported_as_duplicate(agent_api, alice):
    body = post_rows(agent_api, [row(1), row(2), row(1, content="again"), row(1, session="s2")])
    assert body["appended"] == 3 and [r["index"] for r in body["rows"]] == [0, 1, 3]
    first = body["rows"][0]
    assert body["duplicates"] == [{"index": 2, "shard": first["shard"], "offset": first["offset"], "sourceLine": 1, "messageRef": "m1"}]
    lines = shard_bytes(alice, services.today_shard_name()).splitlines()
    assert len(lines) == 3 and b"again" not in b"".join(lines)


def test_a_failed_first_write_leaves_no_empty_shard(agent_api, alice, monkeypatch):
    import errno

    def no_space(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("apps.conversations.shards.os.write", no_space)
    status, body = agent_api.post("/api/v1/l0/messages", {"messages": [row(1)]})
    monkeypatch.undo()
    assert status == 503 and body["error"]["code"] == "unavailable"
    assert not (services.l0_dir(alice) / services.today_shard_name()).exists()
    assert post_rows(agent_api, [row(1)])["rows"][0]["sourceLine"] == 1
