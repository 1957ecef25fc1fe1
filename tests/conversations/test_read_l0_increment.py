"""read_l0_increment over HTTP (SPEC §3.7)."""

from __future__ import annotations

import json
import os

import pytest

from apps.conversations import services
from apps.conversations.cursors import cursor_get, cursor_set
from apps.conversations.models import L0Message, L0ShardState

from .conftest import post_rows, row

SHARD = "2026-01-05.jsonl"


def stamped(i: int, *, role: str = "user", at: str = "2026-01-05T10:00:00Z", **extra):
    return row(i, role=role, recordedAt=at, sourceLine=i, **extra)


def read(api, cursor="", files=SHARD, **kw):
    if cursor is not None and not isinstance(cursor, str):
        cursor = json.dumps(cursor)
    params = {"l0Files": files, **kw}
    if cursor is not None:
        params["cursor"] = cursor
    return api.ok("read_l0_increment", **params)


def test_first_batch_holds_25_eligible_rows_with_source_fields(worker_api, alice):
    post_rows(worker_api, [row(i) for i in range(1, 31)])
    shard = services.today_shard_name()
    out = read(worker_api, "", files=shard)
    assert [m["id"] for m in out["messages"]] == [f"m{i}" for i in range(1, 26)]
    first = out["messages"][0]
    assert first["sourceFile"] == shard and first["sourceOffset"] == 0 and first["sourceLine"] == 1
    assert first["messageRef"] == "m1" and first["content"] == "message 1" and first["cwd"] == "/w"
    data = (services.l0_dir(alice) / shard).read_bytes()
    assert out["nextCursor"] == {"version": 2, "files": {shard: data.index(b"\n", out["messages"][-1]["sourceOffset"]) + 1}}
    assert out["truncated"] is True and out["skippedLines"] == 0 and out["background"] == []


def test_only_user_and_assistant_rows_are_eligible_but_others_are_covered(worker_api, alice, write_shard):
    path = write_shard(alice, SHARD, [stamped(1, role="system"), stamped(2), stamped(3, role="tool"), stamped(4, role="assistant"), stamped(5, role="tool")])
    out = read(worker_api)
    assert [m["id"] for m in out["messages"]] == ["m2", "m4"]
    assert out["nextCursor"]["files"][SHARD] == path.stat().st_size
    assert out["truncated"] is False


def test_round_trip_over_many_batches_loses_and_repeats_nothing(worker_api, alice, write_shard):
    lines, expected = [], []
    for i in range(1, 301):
        role = ("user", "assistant", "tool", "system")[i % 4]
        lines.append(stamped(i, role=role))
        if role in ("user", "assistant"):
            expected.append(f"m{i}")
        if i % 37 == 0:
            lines.append("{broken json")
    write_shard(alice, SHARD, lines[:200])
    write_shard(alice, "2026-01-06.jsonl", lines[200:])
    cursor, seen, skipped, calls = "", [], 0, 0
    while True:
        out = read(worker_api, cursor, files="2026-01-06.jsonl,2026-01-05.jsonl")
        calls += 1
        seen += [m["id"] for m in out["messages"]]
        skipped += out["skippedLines"]
        cursor = out["nextCursor"]
        if not out["truncated"]:
            break
        assert len(out["messages"]) == 25
    assert seen == expected
    assert skipped == 300 // 37
    assert calls == -(-len(expected) // 25)
    again = read(worker_api, cursor, files="2026-01-05.jsonl,2026-01-06.jsonl")
    assert again["messages"] == [] and again["nextCursor"] == cursor


def test_partial_last_line_is_not_consumed_until_completed(worker_api, alice, write_shard):
    path = write_shard(alice, SHARD, [stamped(1)])
    complete = path.stat().st_size
    tail = json.dumps(stamped(2))
    with open(path, "a") as fh:
        fh.write(tail[:10])
    out = read(worker_api)
    assert [m["id"] for m in out["messages"]] == ["m1"]
    assert out["nextCursor"]["files"][SHARD] == complete and out["truncated"] is False
    again = read(worker_api, out["nextCursor"])
    assert again["messages"] == [] and again["nextCursor"]["files"][SHARD] == complete
    with open(path, "a") as fh:
        fh.write(tail[10:] + "\n")
    done = read(worker_api, again["nextCursor"])
    assert [m["id"] for m in done["messages"]] == ["m2"]
    assert read(worker_api, done["nextCursor"])["messages"] == []


def test_malformed_lines_are_skipped_counted_and_covered(worker_api, alice, write_shard):
    path = write_shard(alice, SHARD, ["{oops", stamped(1), "[1, 2]", "", stamped(2), "\xff not json"])
    out = read(worker_api)
    assert [m["id"] for m in out["messages"]] == ["m1", "m2"]
    assert out["skippedLines"] == 4
    assert out["nextCursor"]["files"][SHARD] == path.stat().st_size
    assert read(worker_api, out["nextCursor"])["skippedLines"] == 0


def test_legacy_cursor_skips_earlier_rows_and_replays_the_boundary(worker_api, alice, write_shard):
    write_shard(alice, SHARD, [
        stamped(1, at="2026-01-05T09:00:00Z"),
        stamped(2, at="2026-01-05T10:00:00Z"),
        stamped(3, at="2026-01-05T10:00:00.000+00:00"),
        stamped(4, at="2026-01-05T11:00:00Z"),
    ])
    out = read(worker_api, {"lastRecordedAt": "2026-01-05T10:00:00Z"})
    assert [m["id"] for m in out["messages"]] == ["m2", "m3", "m4"]
    assert [b["id"] for b in out["background"]] == ["m1"]
    assert set(out["nextCursor"]) == {"version", "files"}
    assert read(worker_api, out["nextCursor"])["messages"] == []


def test_background_holds_the_most_recent_eligible_rows_before_the_cursor(worker_api, alice, write_shard):
    write_shard(alice, "2026-01-04.jsonl", [stamped(i) for i in range(1, 4)])
    write_shard(alice, SHARD, [stamped(i, role="tool" if i % 2 else "user") for i in range(4, 12)] + [stamped(i) for i in range(12, 20)])
    files = "2026-01-04.jsonl,2026-01-05.jsonl"
    first = read(worker_api, "", files=files)
    assert first["background"] == []
    # position the cursor after m9 (the 6th eligible overall: m1..m3, m4, m6, m8 ... )
    cursor = {"version": 2, "files": dict(first["nextCursor"]["files"])}
    m10 = next(m for m in first["messages"] if m["id"] == "m10")
    cursor["files"][SHARD] = m10["sourceOffset"]
    out = read(worker_api, cursor, files=files)
    assert out["messages"][0]["id"] == "m10"
    assert [b["id"] for b in out["background"]] == ["m2", "m3", "m4", "m6", "m8"]
    assert all(b["sourceFile"] and b["messageRef"] for b in out["background"])


def test_background_size_follows_the_profile_setting(worker_api, alice, write_shard):
    alice.settings = {"l0.backgroundSize": 2, "l0.batchSize": 3}
    alice.save()
    path = write_shard(alice, SHARD, [stamped(i) for i in range(1, 10)])
    mid = next(m for m in read(worker_api)["messages"] if m["id"] == "m3")["sourceOffset"]
    out = read(worker_api, {"version": 2, "files": {SHARD: mid}})
    assert [m["id"] for m in out["messages"]] == ["m3", "m4", "m5"]
    assert [b["id"] for b in out["background"]] == ["m1", "m2"]
    assert path.exists()


def test_truncated_says_whether_complete_lines_remain(worker_api, alice, write_shard):
    path = write_shard(alice, SHARD, [stamped(i) for i in range(1, 26)])
    with open(path, "a") as fh:
        fh.write('{"role": "user"')
    assert read(worker_api)["truncated"] is False
    with open(path, "a") as fh:
        fh.write(', "content": "x", "sessionKey": "s1", "id": "m26"}\n')
    out = read(worker_api)
    assert out["truncated"] is True
    assert [m["id"] for m in read(worker_api, out["nextCursor"])["messages"]] == ["m26"]


def test_later_shards_count_for_truncated(worker_api, alice, write_shard):
    write_shard(alice, SHARD, [stamped(i) for i in range(1, 26)])
    write_shard(alice, "2026-01-06.jsonl", [stamped(26, role="tool")])
    out = read(worker_api, files=f"{SHARD},2026-01-06.jsonl")
    assert out["truncated"] is True and "2026-01-06.jsonl" not in out["nextCursor"]["files"]


def test_rows_without_source_line_get_their_line_and_the_timestamp_reference(worker_api, alice, write_shard):
    write_shard(alice, SHARD, [
        {"id": None, "role": "user", "content": "a", "sessionKey": "k", "timestamp": 111},
        "garbage",
        {"id": None, "role": "assistant", "content": "b", "sessionKey": "k", "timestamp": 222},
    ])
    out = read(worker_api)
    assert [(m["sourceLine"], m["messageRef"]) for m in out["messages"]] == [(1, "k#111"), (3, "k#222")]
    second = read(worker_api, {"version": 2, "files": {SHARD: out["messages"][1]["sourceOffset"]}})
    assert second["messages"][0]["sourceLine"] == 3


def test_scanned_rows_are_indexed_for_reference_lookup(worker_api, alice, write_shard):
    write_shard(alice, SHARD, [stamped(1), stamped(2, role="tool")])
    read(worker_api)
    assert set(L0Message.objects.filter(profile=alice).values_list("ref", flat=True)) == {"m1", "m2"}
    assert L0ShardState.objects.get(profile=alice, shard=SHARD).indexed_lines == 2


def test_paths_inside_the_profile_are_accepted(worker_api, alice, write_shard):
    path = write_shard(alice, SHARD, [stamped(1)])
    assert read(worker_api, files=str(path))["messages"][0]["id"] == "m1"
    assert read(worker_api, files=f"../l0/{SHARD}")["messages"][0]["id"] == "m1"
    assert read(worker_api, files=f" {SHARD} , {SHARD} ")["messages"][0]["id"] == "m1"


@pytest.mark.parametrize("name", ["../../bob/l0/2026-01-05.jsonl", "/etc/passwd", "../../../../../../etc/passwd"])
def test_paths_escaping_the_profile_are_forbidden(worker_api, alice, bob, write_shard, name):
    write_shard(bob, SHARD, [stamped(1)])
    status, body = worker_api.call("read_l0_increment", l0Files=name, cursor="")
    assert status == 403 and body["error"]["code"] == "forbidden"


def test_absolute_path_to_another_profile_is_forbidden(worker_api, alice, bob, write_shard):
    bob_path = write_shard(bob, SHARD, [stamped(1)])
    status, body = worker_api.call("read_l0_increment", l0Files=str(bob_path), cursor="")
    assert status == 403
    status, body = worker_api.call("read_l0_increment", l0Files=SHARD, cursor="")
    assert status == 404 and body["error"]["code"] == "not_found"


def test_symlink_out_of_the_profile_is_forbidden(worker_api, alice, bob, write_shard):
    bob_path = write_shard(bob, SHARD, [stamped(1)])
    os.symlink(bob_path, services.l0_dir(alice) / "2026-01-07.jsonl")
    status, body = worker_api.call("read_l0_increment", l0Files="2026-01-07.jsonl", cursor="")
    assert status == 403 and body["error"]["code"] == "forbidden"


def test_unknown_or_non_shard_files_are_not_found(worker_api, alice, write_shard):
    write_shard(alice, SHARD, [stamped(1)])
    (services.l0_dir(alice) / "notes.txt").write_text("x\n")
    (services.l0_dir(alice) / "sub").mkdir()
    for name in ("2026-02-01.jsonl", "notes.txt", "sub", f"{SHARD},2026-02-01.jsonl"):
        status, _ = worker_api.call("read_l0_increment", l0Files=name, cursor="")
        assert status == 404, name


@pytest.mark.parametrize(
    "params, field",
    [
        ({"cursor": ""}, "l0Files"),
        ({"l0Files": 5, "cursor": ""}, "l0Files"),
        ({"l0Files": " , ", "cursor": ""}, "l0Files"),
        ({"l0Files": SHARD, "cursor": "{bad"}, "cursor"),
        ({"l0Files": SHARD, "cursor": '{"version":2,"files":{"2026-01-05.jsonl":-4}}'}, "cursor"),
        ({"l0Files": SHARD, "cursor": '{"version":2,"files":{"2026-01-05.jsonl":999999}}'}, "cursor"),
        ({"l0Files": SHARD, "cursor": '{"version":2,"files":{"2026-01-05.jsonl":3}}'}, "cursor"),
        ({"l0Files": SHARD, "cursor": 7}, "cursor"),
        ({"l0Files": SHARD, "extra": 1}, "extra"),
    ],
)
def test_bad_parameters_are_invalid_params_naming_the_field_and_change_nothing(worker_api, alice, write_shard, params, field):
    write_shard(alice, SHARD, [stamped(1)])
    status, body = worker_api.call("read_l0_increment", **params)
    assert status == 400 and body["error"]["code"] == "invalid_params", body
    assert any(d["field"].startswith(field) for d in body["error"]["details"]), body
    assert L0Message.objects.count() == 0 and L0ShardState.objects.count() == 0


def test_agent_role_may_not_read_l0(agent_api, alice, write_shard):
    write_shard(alice, SHARD, [stamped(1)])
    status, _ = agent_api.call("read_l0_increment", l0Files=SHARD, cursor="")
    assert status == 403


def test_omitted_cursor_means_the_committed_l1_cursor_and_empty_means_start(worker_api, alice, write_shard):
    write_shard(alice, SHARD, [stamped(1), stamped(2)])
    first = read(worker_api)
    after_m1 = {"version": 2, "files": {SHARD: first["messages"][1]["sourceOffset"]}}
    cursor_set(profile=alice, kind="l1", value=after_m1)
    assert [m["id"] for m in read(worker_api, None)["messages"]] == ["m2"]
    assert [m["id"] for m in read(worker_api, "")["messages"]] == ["m1", "m2"]
    assert cursor_get(profile=alice, kind="l1") == after_m1  # reading never moves the committed cursor


def test_cursor_object_is_accepted_as_well_as_its_json(worker_api, alice, write_shard):
    write_shard(alice, SHARD, [stamped(1), stamped(2)])
    out = read(worker_api)
    obj = worker_api.ok("read_l0_increment", l0Files=SHARD, cursor=out["nextCursor"])
    assert obj["messages"] == [] and obj["nextCursor"] == out["nextCursor"]


def test_cursor_entries_of_unlisted_shards_are_kept(worker_api, alice, write_shard):
    write_shard(alice, SHARD, [stamped(1)])
    out = read(worker_api, {"version": 2, "files": {"2026-01-01.jsonl": 42}})
    assert out["nextCursor"]["files"]["2026-01-01.jsonl"] == 42


def test_alice_cannot_see_rows_from_bob(worker_api, make_api, alice, bob):
    post_rows(make_api(bob, "agent"), [row(1, content="bob secret")])
    post_rows(worker_api, [row(2, content="alice text")])
    out = read(worker_api, files=services.today_shard_name())
    assert [m["content"] for m in out["messages"]] == ["alice text"]


@pytest.mark.parametrize("tool, field", [("read_l0_increment", "l0Files"), ("read_skill_feed_increment", "feedFiles")])
def test_a_shard_name_with_a_nul_character_is_invalid_params_not_a_path_escape(worker_api, alice, tool, field):
    status, body = worker_api.call(tool, **{field: "2026-01-05\x00.jsonl"})
    assert status == 400 and body["error"]["code"] == "invalid_params"
    assert body["error"]["details"][0]["field"] == field and "NUL" in body["error"]["message"]


@pytest.mark.parametrize("depth", [100, 5000])
def test_a_line_nested_absurdly_deep_is_skipped_as_malformed_and_never_blocks_the_cursor(worker_api, alice, write_shard, depth):
    deep = json.dumps(stamped(1))[:-1] + ', "extra": ' + "[" * depth + "]" * depth + "}"
    path = write_shard(alice, SHARD, [deep, stamped(2)])
    out = read(worker_api)
    assert [m["id"] for m in out["messages"]] == ["m2"] and out["skippedLines"] == 1
    assert out["nextCursor"]["files"][SHARD] == path.stat().st_size
    assert services.l0_lookup_messages(profile=alice, refs=["m2"])["m2"][0]["sourceLine"] == 2


@pytest.mark.parametrize("tool, params", [("read_l0_increment", {"l0Files": SHARD}), ("read_skill_feed_increment", {"feedFiles": SHARD})])
def test_a_cursor_string_nested_absurdly_deep_is_invalid_params(worker_api, alice, write_shard, tool, params):
    write_shard(alice, SHARD, [stamped(1)])
    write_shard(alice, SHARD, [stamped(1)], area="skill-feed")
    status, body = worker_api.call(tool, cursor='{"a":' * 100000, **params)
    assert status == 400 and body["error"]["details"][0]["field"] == "cursor", body
