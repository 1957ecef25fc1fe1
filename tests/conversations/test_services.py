"""Service-level rules of the L0 store: references, safe appends, index lookups, cursors."""

from __future__ import annotations

import json
import multiprocessing
import os

import pytest

from apps.conversations import services, shards
from apps.conversations.models import L0Message

from .conftest import row


def test_message_ref_prefers_id_then_source_line_then_timestamp():
    assert services.message_ref({"id": "abc", "sessionKey": "s", "sourceLine": 3}) == "abc"
    assert services.message_ref({"id": None, "sessionKey": "s", "sourceLine": 3, "timestamp": 9}) == "s#3"
    assert services.message_ref({"id": None, "sessionKey": "s", "timestamp": 9}) == "s#9"
    assert services.message_ref({"sessionKey": "s"}, line=7) == "s#7"
    with pytest.raises(ValueError):
        services.message_ref({"sessionKey": "s"})


def test_append_stamps_recorded_at_and_consecutive_source_lines(alice):
    out = services.l0_append(profile=alice, rows=[row(1), row(2, id=None)])
    assert [o["sourceLine"] for o in out] == [1, 2]
    assert out[0]["offset"] == 0 and out[1]["offset"] > 0
    assert out[1]["messageRef"] == "s1#2"
    path = services.l0_dir(alice) / out[0]["shard"]
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""
    stored = [json.loads(x) for x in lines[:-1]]
    assert stored[0]["sourceLine"] == 1 and stored[0]["recordedAt"].endswith("Z")
    more = services.l0_append(profile=alice, rows=[row(3)])
    assert more[0]["sourceLine"] == 3
    assert more[0]["offset"] == len(path.read_bytes()) - len(shards.dumps_line(json.loads(path.read_bytes().split(b"\n")[2])))


def test_append_recounts_when_an_agent_appended_lines_itself(alice, write_shard):
    out = services.l0_append(profile=alice, rows=[row(1)])
    write_shard(alice, out[0]["shard"], [row(2), "not json"])
    again = services.l0_append(profile=alice, rows=[row(3)])
    assert again[0]["sourceLine"] == 4


def test_append_closes_a_partial_line_before_writing(alice, write_shard):
    shard = services.today_shard_name()
    write_shard(alice, shard, ['{"role": "user", "cont'], newline_at_end=False)
    out = services.l0_append(profile=alice, rows=[row(1)])
    assert out[0]["sourceLine"] == 2
    lines = (services.l0_dir(alice) / shard).read_bytes().split(b"\n")
    assert json.loads(lines[1])["id"] == "m1"


def test_append_recounts_when_shard_shrank(alice):
    out = services.l0_append(profile=alice, rows=[row(1), row(2), row(3)])
    path = services.l0_dir(alice) / out[0]["shard"]
    path.write_bytes(path.read_bytes().split(b"\n", 1)[0] + b"\n")
    assert services.l0_append(profile=alice, rows=[row(4)])[0]["sourceLine"] == 2


def _append_worker(path: str, state_dir: str, worker: int, batches: int, per_batch: int) -> None:
    from pathlib import Path

    def stamp(r, line):
        return {**r, "sourceLine": line}

    for b in range(batches):
        rows = [{"worker": worker, "batch": b, "i": i, "pad": "x" * (i * 37 % 300)} for i in range(per_batch)]
        shards.append_rows(Path(path), Path(state_dir), rows, stamp)
    os._exit(0)


def test_concurrent_processes_write_only_whole_lines_with_distinct_source_lines(tmp_path):
    path, state_dir = tmp_path / "2026-01-01.jsonl", tmp_path / "state"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_append_worker, args=(str(path), str(state_dir), w, 400, 7)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    data = path.read_bytes()
    assert data.endswith(b"\n")
    rows = [json.loads(x) for x in data.split(b"\n")[:-1]]
    assert len(rows) == 3 * 400 * 7
    assert [r["sourceLine"] for r in rows] == list(range(1, len(rows) + 1))
    # each batch is contiguous: no interleaving inside a write
    for k in range(0, len(rows), 7):
        assert len({(r["worker"], r["batch"]) for r in rows[k : k + 7]}) == 1


def test_lookup_finds_rows_by_reference_with_content(alice):
    services.l0_append(profile=alice, rows=[row(1, content="hello /repo/x.py", cwd="/repo"), row(2, id=None)])
    found = services.l0_lookup_messages(profile=alice, refs=["m1", "s1#2", "missing"])
    assert set(found) == {"m1", "s1#2"}
    hit = found["m1"][0]
    assert hit["content"] == "hello /repo/x.py" and hit["cwd"] == "/repo"
    assert hit["sessionKey"] == "s1" and hit["sourceLine"] == 1 and hit["messageRef"] == "m1"
    assert hit["sourceFile"] == services.today_shard_name()


def test_lookup_returns_every_session_sharing_an_id_and_filters_by_session(alice):
    services.l0_append(profile=alice, rows=[row(1, session="a"), row(1, session="b")])
    assert len(services.l0_lookup_messages(profile=alice, refs=["m1"])["m1"]) == 2
    only_b = services.l0_lookup_messages(profile=alice, refs=["m1"], session_key="b")["m1"]
    assert [r["sessionKey"] for r in only_b] == ["b"]


def test_lookup_is_confined_to_the_profile(alice, bob):
    services.l0_append(profile=bob, rows=[row(1)])
    assert services.l0_lookup_messages(profile=alice, refs=["m1"]) == {}


def test_lookup_indexes_shards_dropped_into_the_folder(alice, write_shard):
    write_shard(alice, "2026-01-02.jsonl", [row(5), {"id": None, "role": "user", "content": "c", "sessionKey": "s9", "timestamp": 42}])
    assert L0Message.objects.filter(profile=alice).count() == 0
    found = services.l0_lookup_messages(profile=alice, refs=["m5", "s9#42"])
    assert set(found) == {"m5", "s9#42"}
    assert found["s9#42"][0]["sourceLine"] == 2


def test_session_rows_returns_one_session_in_order(alice):
    services.l0_append(profile=alice, rows=[row(1, session="a"), row(2, session="b"), row(3, session="a")])
    rows = services.l0_session_rows(profile=alice, session_key="a")
    assert [r["id"] for r in rows] == ["m1", "m3"]
    assert rows[0]["content"] == "message 1"


@pytest.mark.parametrize("raw", [None, "", "  ", "{}", "null"])
def test_cursor_parse_empty_means_from_the_start(raw):
    assert services.l0_cursor_parse(raw) == {}


def test_cursor_parse_normalises_v2_and_legacy():
    assert services.l0_cursor_parse('{"version":2,"files":{"2026-01-02.jsonl":5,"2026-01-01.jsonl":0}}') == {
        "version": 2,
        "files": {"2026-01-01.jsonl": 0, "2026-01-02.jsonl": 5},
    }
    assert services.l0_cursor_parse('{"lastRecordedAt":"2026-01-01T00:00:00Z"}') == {"lastRecordedAt": "2026-01-01T00:00:00Z"}


@pytest.mark.parametrize(
    "raw, fragment",
    [
        ("{not json", "not valid JSON"),
        ("[1]", "must be a JSON object"),
        ('{"version":1,"files":{}}', "version must be 2"),
        ('{"version":2}', "files is required"),
        ('{"version":2,"files":[]}', "files must be an object"),
        ('{"version":2,"files":{"2026-01-01.jsonl":-1}}', "must not be negative"),
        ('{"version":2,"files":{"2026-01-01.jsonl":1.5}}', "must be an integer"),
        ('{"version":2,"files":{"2026-01-01.jsonl":true}}', "must be an integer"),
        ('{"version":2,"files":{"../x.jsonl":0}}', "not a shard file name"),
        ('{"version":2,"files":{"/etc/2026-01-01.jsonl":0}}', "not a shard file name"),
        ('{"version":2,"files":{},"extra":1}', "unknown keys: extra"),
        ('{"lastRecordedAt":"yesterday"}', "not an ISO 8601"),
        ('{"lastRecordedAt":"2026-01-01T00:00:00Z","files":{}}', "unknown keys: files"),
    ],
)
def test_cursor_parse_rejects_bad_cursors_with_a_precise_message(raw, fragment):
    with pytest.raises(ValueError, match=fragment):
        services.l0_cursor_parse(raw)


def test_append_does_not_recount_a_shard_whose_size_matches_the_sidecar(alice, monkeypatch):
    services.l0_append(profile=alice, rows=[row(1), row(2)])
    counted = []
    real = shards._count_newlines
    monkeypatch.setattr(shards, "_count_newlines", lambda fd, a, b: counted.append((a, b)) or real(fd, a, b))
    assert services.l0_append(profile=alice, rows=[row(3)])[0]["sourceLine"] == 3
    assert counted == []


def test_append_counts_only_the_bytes_an_agent_added(alice, write_shard, monkeypatch):
    first = services.l0_append(profile=alice, rows=[row(1), row(2)])
    size_before = (services.l0_dir(alice) / first[0]["shard"]).stat().st_size
    write_shard(alice, first[0]["shard"], [row(3)])
    counted = []
    real = shards._count_newlines
    monkeypatch.setattr(shards, "_count_newlines", lambda fd, a, b: counted.append((a, b)) or real(fd, a, b))
    assert services.l0_append(profile=alice, rows=[row(4)])[0]["sourceLine"] == 4
    assert counted and counted[0][0] == size_before


def test_session_rows_include_shards_dropped_into_the_folder(alice, write_shard):
    write_shard(alice, "2026-01-02.jsonl", [row(1, session="k"), row(2, session="other")])
    assert [r["id"] for r in services.l0_session_rows(profile=alice, session_key="k")] == ["m1"]


def test_reindex_only_touches_shards_that_grew(alice, write_shard):
    write_shard(alice, "2026-01-02.jsonl", [row(1)])
    write_shard(alice, "2026-01-03.jsonl", [row(2)])
    assert services.l0_reindex(profile=alice) == 2
    assert services.l0_reindex(profile=alice) == 0
    write_shard(alice, "2026-01-03.jsonl", [row(3)])
    assert services.l0_reindex(profile=alice) == 1
    assert set(services.l0_lookup_messages(profile=alice, refs=["m1", "m2", "m3"])) == {"m1", "m2", "m3"}


def test_lookup_skips_entries_whose_shard_was_rewritten(alice):
    out = services.l0_append(profile=alice, rows=[row(1), row(2)])
    path = services.l0_dir(alice) / out[0]["shard"]
    path.write_bytes(b"")
    assert services.l0_lookup_messages(profile=alice, refs=["m1"]) == {}


def test_backward_reader_yields_complete_lines_newest_first(tmp_path):
    path = tmp_path / "x.jsonl"
    lines = [json.dumps({"i": i, "pad": "y" * (i * 1013 % 5000)}) for i in range(300)]
    path.write_text("\n".join(lines) + "\n")
    end = path.stat().st_size
    got = [item.row["i"] for item in shards.iter_backward(path, end, 10**9)]
    assert got == list(range(299, -1, -1))
    offsets = [item.offset for item in shards.iter_forward(path, 0)]
    assert [item.row["i"] for item in shards.iter_backward(path, offsets[120], 10**9)] == list(range(119, -1, -1))
    assert len(list(shards.iter_backward(path, end, 70_000))) < 300


def _l0_append_worker(profile_id: int, worker: int, batches: int) -> None:
    from django.db import connections

    from apps.accounts.models import Profile

    connections.close_all()  # never share the parent's connection across fork
    try:
        profile = Profile.objects.get(pk=profile_id)
        for b in range(batches):
            services.l0_append(profile=profile, rows=[row(i, id=f"w{worker}-b{b}-{i}") for i in range(5)])
    except BaseException:  # noqa: BLE001 (a forked child must report any failure through its exit code)
        os._exit(1)
    os._exit(0)


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_concurrent_l0_append_processes_keep_lines_and_index_consistent(make_profile):
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("child processes need a database they can connect to (PostgreSQL)")
    profile = make_profile("carol")
    connection.close()
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_l0_append_worker, args=(profile.pk, w, 150)) for w in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    path = services.l0_dir(profile) / services.today_shard_name()
    stored = [json.loads(x) for x in path.read_bytes().split(b"\n")[:-1]]
    assert len(stored) == 2 * 150 * 5
    assert [r["sourceLine"] for r in stored] == list(range(1, len(stored) + 1))
    assert L0Message.objects.filter(profile=profile).count() == len(stored)
    found = services.l0_lookup_messages(profile=profile, refs=["w0-b149-4", "w1-b0-0"])
    assert {k: len(v) for k, v in found.items()} == {"w0-b149-4": 1, "w1-b0-0": 1}


def test_readers_agree_on_lines_longer_than_a_chunk_and_empty_lines(tmp_path):
    import random

    rng = random.Random(7)
    path = tmp_path / "x.jsonl"
    lines = []
    for i in range(120):
        kind = rng.random()
        if kind < 0.1:
            lines.append("")
        elif kind < 0.2:
            lines.append(json.dumps({"i": i, "big": "z" * rng.randint(shards.CHUNK, 3 * shards.CHUNK)}))
        else:
            lines.append(json.dumps({"i": i, "pad": "p" * rng.randint(0, 900)}))
    path.write_text("\n".join(lines) + "\n" + '{"partial": ')
    forward = list(shards.iter_forward(path, 0))
    assert [item.raw.decode() for item in forward] == lines
    assert forward[-1].end == len(path.read_bytes()) - len('{"partial": ')
    for k in (0, 1, 17, 60, 119, 120):
        end = forward[k].offset if k < len(forward) else forward[-1].end
        back = list(shards.iter_backward(path, end, 10**9))
        assert [(b.offset, b.end, b.raw) for b in back] == [(f.offset, f.end, f.raw) for f in reversed(forward[:k])]
