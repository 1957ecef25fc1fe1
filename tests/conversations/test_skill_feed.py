"""Skill feed: POST /api/v1/skill-feed/events and read_skill_feed_increment (SPEC §1.8, §3.18)."""

from __future__ import annotations

import json
import os

import pytest

from apps.accounts.models import AuditEvent
from apps.accounts.paths import profile_subdir
from apps.conversations import services

from .conftest import shard_bytes

FEED = "2026-01-05.jsonl"


def event(i: int, *, role: str = "tool_call", at: str | None = None, **extra):
    out = {"role": role, "content": f"event {i}", "sessionKey": "s1", "tool_name": "bash", "tool_call_id": f"c{i}", "n": i}
    if at is not None:
        out["recordedAt"] = at
    out.update(extra)
    return out


def at(second: int, micro: int = 0) -> str:
    return f"2026-01-05T10:{second // 60:02d}:{second % 60:02d}.{micro:06d}Z"


def read(api, cursor=None, files=FEED):
    params = {"feedFiles": files}
    if cursor is not None:
        params["cursor"] = cursor
    return api.ok("read_skill_feed_increment", **params)


def test_events_are_appended_with_recorded_at(agent_api, alice):
    status, body = agent_api.post("/api/v1/skill-feed/events", {"events": [event(1), event(2, role="tool_result", is_error=True)]})
    assert status == 200 and body["appended"] == 2
    shard = services.today_shard_name()
    rows = [json.loads(x) for x in shard_bytes(alice, shard, "skill-feed").split(b"\n")[:-1]]
    assert [r["n"] for r in rows] == [1, 2] and all(r["recordedAt"] for r in rows)
    assert rows[0]["recordedAt"] <= rows[1]["recordedAt"]
    assert AuditEvent.objects.filter(profile=alice, tool="skill-feed/events").count() == 1


def test_append_wakes_the_skill_reviewer_with_tool_call_count(agent_api, alice, monkeypatch, django_capture_on_commit_callbacks):
    calls = []
    monkeypatch.setattr("apps.pipeline.triggers.skill_feed_appended", lambda **kw: calls.append(kw))
    with django_capture_on_commit_callbacks(execute=True):
        agent_api.post("/api/v1/skill-feed/events", [event(1), event(2, role="tool_result"), event(3), event(4, role="user")])
    assert calls == [{"profile_id": alice.pk, "tool_calls": 2}]


@pytest.mark.parametrize(
    "bad, field",
    [
        ({"role": "tool", "content": "x", "sessionKey": "s"}, "events.0.role"),
        ({"role": "user", "content": 3, "sessionKey": "s"}, "events.0.content"),
        ({"role": "user", "content": "x"}, "events.0.sessionKey"),
        ({"role": "tool_call", "content": "x", "sessionKey": "s", "tool_name": 1}, "events.0.tool_name"),
        ({"role": "tool_call", "content": "x", "sessionKey": "s", "tool_call_id": []}, "events.0.tool_call_id"),
        ({"role": "tool_result", "content": "x", "sessionKey": "s", "is_error": "yes"}, "events.0.is_error"),
        ({"role": "user", "content": "x", "sessionKey": "s", "recordedAt": at(1)}, "events.0.recordedAt"),
    ],
)
def test_bad_events_are_refused_and_nothing_is_written(agent_api, alice, bad, field):
    status, body = agent_api.post("/api/v1/skill-feed/events", {"events": [bad]})
    assert status == 400 and field in [d["field"] for d in body["error"]["details"]]
    assert shard_bytes(alice, services.today_shard_name(), "skill-feed") == b""


def test_read_returns_50_rows_then_the_rest_without_loss_or_duplicates(worker_api, alice, write_shard):
    write_shard(alice, FEED, [event(i, at=at(i)) for i in range(60)], area="skill-feed")
    first = read(worker_api)
    assert [m["n"] for m in first["messages"]] == list(range(50))
    assert first["truncated"] is True and first["nextCursor"] == at(49) and first["background"] == []
    replayed = read(worker_api, first["nextCursor"])
    assert [m["n"] for m in replayed["messages"]] == list(range(49, 60))  # a plain ISO replays its own row
    second = read(worker_api, json.dumps(first["nextCursorState"]))
    assert [m["n"] for m in second["messages"]] == list(range(50, 60))
    assert second["truncated"] is False
    assert [b["n"] for b in second["background"]] == [45, 46, 47, 48, 49]
    third = read(worker_api, json.dumps(second["nextCursorState"]))
    assert third["messages"] == [] and third["nextCursor"] == second["nextCursor"]


def test_rows_sharing_the_cursor_time_are_replayed_for_a_plain_iso_and_not_for_the_state(worker_api, alice, write_shard):
    rows = [event(i, at=at(1)) for i in range(55)] + [event(55, at=at(2))]
    write_shard(alice, FEED, rows, area="skill-feed")
    first = read(worker_api)
    assert first["nextCursor"] == at(1) and first["nextCursorState"] == {"recordedAt": at(1), "seen": 50}
    exact = read(worker_api, json.dumps(first["nextCursorState"]))
    assert [m["n"] for m in exact["messages"]] == list(range(50, 56))
    assert exact["nextCursorState"] == {"recordedAt": at(2), "seen": 1}
    as_object = worker_api.ok("read_skill_feed_increment", feedFiles=FEED, cursor=first["nextCursorState"])
    assert as_object["messages"] == exact["messages"]
    replay = read(worker_api, first["nextCursor"])
    assert [m["n"] for m in replay["messages"]][:50] == list(range(50))  # none lost: the boundary is replayed


def test_boundary_state_counts_rows_consumed_in_earlier_calls(worker_api, alice, write_shard):
    alice_rows = [event(i, at=at(1)) for i in range(120)]
    write_shard(alice, FEED, alice_rows, area="skill-feed")
    got, cursor = [], None
    while True:
        out = read(worker_api, json.dumps(cursor) if cursor else None)
        got += [m["n"] for m in out["messages"]]
        cursor = out["nextCursorState"]
        if not out["truncated"]:
            break
    assert got == list(range(120))


def test_rows_across_shards_in_time_order_and_old_shards_give_background(worker_api, alice, write_shard):
    write_shard(alice, "2026-01-01.jsonl", [event(i, at=f"2026-01-01T00:00:0{i}Z") for i in range(3)], area="skill-feed")
    write_shard(alice, FEED, [event(10, at=at(1)), event(11, at=at(2))], area="skill-feed")
    out = read(worker_api, "2026-01-04T00:00:00Z", files=f"{FEED},2026-01-01.jsonl")
    assert [m["n"] for m in out["messages"]] == [10, 11]
    assert [b["n"] for b in out["background"]] == [0, 1, 2]
    everything = read(worker_api, None, files=f"{FEED},2026-01-01.jsonl")
    assert [m["n"] for m in everything["messages"]] == [0, 1, 2, 10, 11]


def test_rows_without_a_readable_recorded_at_are_skipped_and_counted(worker_api, alice, write_shard):
    write_shard(alice, FEED, ["{bad", event(1, at=at(1)), {"role": "user", "content": "x"}, event(2, at=at(2))], area="skill-feed")
    out = read(worker_api)
    assert [m["n"] for m in out["messages"]] == [1, 2] and out["skippedLines"] == 2


def test_partial_last_feed_line_is_not_read(worker_api, alice, write_shard):
    write_shard(alice, FEED, [event(1, at=at(1))], area="skill-feed")
    write_shard(alice, FEED, [json.dumps(event(2, at=at(2)))[:15]], area="skill-feed", newline_at_end=False)
    assert [m["n"] for m in read(worker_api)["messages"]] == [1]


@pytest.mark.parametrize("name", ["../../bob/skill-feed/2026-01-05.jsonl", "/etc/passwd", "../l0/2026-01-05.jsonl"])
def test_feed_paths_outside_the_feed_folder_are_refused(worker_api, alice, bob, write_shard, name):
    write_shard(bob, FEED, [event(1, at=at(1))], area="skill-feed")
    write_shard(alice, FEED, [{"role": "user", "content": "x", "sessionKey": "s"}])
    status, body = worker_api.call("read_skill_feed_increment", feedFiles=name)
    assert status == 403 and body["error"]["code"] == "forbidden"


def test_feed_symlink_to_another_profile_is_forbidden(worker_api, alice, bob, write_shard):
    target = write_shard(bob, FEED, [event(1, at=at(1))], area="skill-feed")
    os.symlink(target, profile_subdir(alice, "skill-feed") / FEED)
    status, _ = worker_api.call("read_skill_feed_increment", feedFiles=FEED)
    assert status == 403


@pytest.mark.parametrize("cursor", ["yesterday", '{"recordedAt": "x"}', '{"recordedAt": "2026-01-01T00:00:00Z", "seen": -1}', '{"at": 1}', "{bad"])
def test_bad_feed_cursor_is_invalid_params(worker_api, alice, write_shard, cursor):
    write_shard(alice, FEED, [event(1, at=at(1))], area="skill-feed")
    status, body = worker_api.call("read_skill_feed_increment", feedFiles=FEED, cursor=cursor)
    assert status == 400 and body["error"]["details"][0]["field"] == "cursor"


def test_agent_role_may_not_read_the_feed(agent_api, alice, write_shard):
    write_shard(alice, FEED, [event(1, at=at(1))], area="skill-feed")
    status, _ = agent_api.call("read_skill_feed_increment", feedFiles=FEED)
    assert status == 403


def test_a_database_failure_after_the_feed_write_still_answers_success(agent_api, alice, monkeypatch):
    from django.db import OperationalError

    def fail(**kwargs):
        raise OperationalError("database went away")

    monkeypatch.setattr("apps.conversations.ingest.audit_record", fail)
    status, body = agent_api.post("/api/v1/skill-feed/events", [event(1), event(2)])
    assert status == 200 and body["appended"] == 2 and body["warnings"][0]["code"] == "auditFailed"
    assert len(shard_bytes(alice, services.today_shard_name(), "skill-feed").splitlines()) == 2


def test_a_feed_folder_linked_to_another_profile_is_never_read_or_written(agent_api, worker_api, alice, bob, write_shard):
    target = write_shard(bob, FEED, [event(1, at=at(1))], area="skill-feed")
    before = target.read_bytes()
    alice_root = profile_subdir(alice, "l0").parent
    os.symlink(target.parent, alice_root / "skill-feed")
    status, body = worker_api.call("read_skill_feed_increment", feedFiles=FEED)
    assert status == 403 and "link" in body["error"]["message"]
    status, body = agent_api.post("/api/v1/skill-feed/events", {"events": [event(2)]})
    assert status == 403
    assert target.read_bytes() == before
    assert sorted(p.name for p in target.parent.iterdir() if not p.name.startswith(".")) == [FEED]
