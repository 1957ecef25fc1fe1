"""Idempotent L0 ingest (SPEC §1.1 [2026-12]): a row whose (sessionKey, id) is stored, in
any shard, is not appended again and is listed under `duplicates`; concurrent senders of
one batch store every row once."""

from __future__ import annotations

import json
import time

import pytest

from apps.accounts.models import AuditEvent
from apps.conversations import services
from apps.conversations.models import L0Message
from tests.proc_env import proc_backend

from .conftest import post_rows, row, shard_bytes


def test_a_resent_batch_stores_nothing_and_points_at_the_stored_rows(agent_api, alice, monkeypatch, django_capture_on_commit_callbacks):
    first = post_rows(agent_api, [row(1), row(2)])
    before, audits = shard_bytes(alice, services.today_shard_name()), AuditEvent.objects.count()
    woken = []
    monkeypatch.setattr("apps.pipeline.triggers.l0_appended", lambda **kw: woken.append(kw))
    with django_capture_on_commit_callbacks(execute=True):
        again = post_rows(agent_api, [row(1), row(2)])
    assert again["appended"] == 0 and again["rows"] == []
    assert again["duplicates"] == [
        {"index": i, **{k: first["rows"][i][k] for k in ("shard", "offset", "sourceLine", "messageRef")}} for i in (0, 1)
    ]
    assert shard_bytes(alice, services.today_shard_name()) == before
    assert AuditEvent.objects.count() == audits and woken == []
    assert L0Message.objects.filter(profile=alice).count() == 2


def test_a_partly_new_batch_appends_only_the_new_rows_and_triggers_for_them(agent_api, alice, monkeypatch, django_capture_on_commit_callbacks):
    post_rows(agent_api, [row(1)])
    woken = []
    monkeypatch.setattr("apps.pipeline.triggers.l0_appended", lambda **kw: woken.append(kw))
    with django_capture_on_commit_callbacks(execute=True):
        body = post_rows(agent_api, [row(1), row(2, role="tool"), row(3)])
    assert body["appended"] == 2 and [r["index"] for r in body["rows"]] == [1, 2]
    assert [d["index"] for d in body["duplicates"]] == [0]
    assert [r["sourceLine"] for r in body["rows"]] == [2, 3]
    assert woken == [{"profile_id": alice.pk, "eligible": 1}]


def test_a_row_stored_in_an_older_shard_is_recognised(agent_api, alice, write_shard):
    # An earlier day's shard the index has never seen (dropped into the folder).
    write_shard(alice, "2026-01-05.jsonl", [
        {**row(7, session="s1"), "recordedAt": "2026-01-05T10:00:00Z", "sourceLine": 1},
    ])
    body = post_rows(agent_api, [row(7, session="s1"), row(8, session="s1")])
    assert body["appended"] == 1
    assert body["duplicates"] == [{"index": 0, "shard": "2026-01-05.jsonl", "offset": 0, "sourceLine": 1, "messageRef": "m7"}]


def test_rows_without_id_are_always_appended_and_ids_are_per_session(agent_api, alice):
    post_rows(agent_api, [row(1, id=None), row(1, session="a")])
    body = post_rows(agent_api, [row(1, id=None), row(1, session="b"), row(1, session="a")])
    assert body["appended"] == 2 and [d["index"] for d in body["duplicates"]] == [2]


def test_an_id_matching_another_rows_line_reference_is_not_a_duplicate(agent_api, alice):
    # A null-id row is referenced as "s1#1"; a new row whose id is that text is another row.
    post_rows(agent_api, [row(1, id=None)])
    body = post_rows(agent_api, [row(2, id="s1#1")])
    assert body["appended"] == 1 and body["duplicates"] == []


def test_a_stale_index_entry_is_not_taken_for_a_stored_row(agent_api, alice):
    post_rows(agent_api, [row(1)])
    path = services.l0_dir(alice) / services.today_shard_name()
    path.write_bytes(b"")  # the shard was emptied by hand; the index still names m1
    body = post_rows(agent_api, [row(1)])
    assert body["appended"] == 1 and body["duplicates"] == []


# ---------------------------------------------------------------- two OS processes


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request, tmp_path):
    with proc_backend(request.param, "tests.conversations.proc_ingest", tmp_path, "mw_l0_conc") as env:
        yield env


@pytest.mark.integration
@pytest.mark.slow
def test_two_processes_sending_the_same_batch_at_once_store_every_row_once(backend):
    size, rounds = 150, 3
    start_at = str(time.time() + 4)  # both are importing Django meanwhile
    procs = [backend.start("send", str(size), str(rounds), start_at) for _ in range(2)]
    results = [backend.finish(p) for p in procs]
    assert sum(r["appended"] for r in results) == size
    assert sum(r["appended"] + r["duplicates"] for r in results) == 2 * rounds * size
    shards = list((backend.data_dir / "profiles" / "conc" / "l0").glob("*.jsonl"))
    lines = [json.loads(line) for shard in shards for line in shard.read_text().splitlines()]
    assert sorted(r["id"] for r in lines) == sorted(f"msg-{i}" for i in range(size))
