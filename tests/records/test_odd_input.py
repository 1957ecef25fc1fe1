"""Odd input an agent may send: NUL characters and other strings a database cannot hold."""

from __future__ import annotations

import pytest

from tests.records.conftest import CURSOR, fail, msg, rec, snapshot


@pytest.fixture
def rows(alice, l0):
    return l0(alice, msg(1, "we decided: memoryweb uses pnpm for the web assets"))


@pytest.mark.parametrize(
    "item, field",
    [
        (rec("pnpm \x00 builds the assets"), "records.0.content"),
        (rec("pnpm builds the assets", new_scene_name="a\x00b", new_scene_reason="why"), "records.0.new_scene_name"),
        (rec("pnpm builds the assets", metadata={"scope": "global", "note": ["ok", "x\x00"]}), "records.0.metadata.note.1"),
        (rec("pnpm builds the assets", metadata={"scope": "global", "k\x00": 1}), "records.0.metadata"),
        (rec("pnpm builds the assets", source_message_ids=["m1", "m\x00"]), "records.0.source_message_ids.1"),
    ],
)
def test_nul_characters_in_a_commit_are_invalid_params_naming_the_field(worker_api, alice, rows, item, field):
    before = snapshot(alice)
    error = fail(worker_api, "l1_commit", 400, "invalid_params", records=[rec("a valid first record here"), item], cursor=CURSOR)
    assert field.replace("records.0", "records.1") in [d["field"] for d in error["details"]]
    assert snapshot(alice) == before


def test_nul_characters_in_fix_and_task_state_are_invalid_params(agent_api, worker_api, alice, rows):
    [rid] = worker_api.ok("l1_commit", records=[rec("memoryweb uses pnpm for web assets")], cursor=CURSOR)["stored"]
    before = snapshot(alice)
    error = fail(agent_api, "l1_fix", 400, "invalid_params", recordId=rid, action="rewrite", newContent="pnpm\x00 for web", evidence="the user said so in a later turn clearly")
    assert [d["field"] for d in error["details"]] == ["newContent"]
    error = fail(agent_api, "l1_task_state", 400, "invalid_params", ids=[rid], state="done", reason="x\x00")
    assert [d["field"] for d in error["details"]] == ["reason"]
    assert snapshot(alice) == before


def test_nul_characters_in_the_call_context_are_invalid_params(agent_api, alice):
    before = snapshot(alice)
    for tool, params in (("load_memory_rules", {}), ("l1_commit", {"source": "main-agent", "records": [{"content": "the user prefers dark themes", "type": "work_fact"}]})):
        status, body = agent_api.post(f"/api/v1/tools/{tool}", {**params, "_context": {"sessionKey": "a\x00b"}})
        assert status == 400 and body["error"]["details"][0]["field"] == "_context.sessionKey", body
    assert snapshot(alice) == before


def _today_shard(alice):
    from apps.conversations.services import l0_dir, today_shard_name

    return today_shard_name(), (l0_dir(alice) / today_shard_name()).stat().st_size


@pytest.mark.parametrize("where, fragment", [("mid-line", "not at the start of a line"), ("past-end", "beyond the end")])
def test_a_cursor_offset_no_read_could_resume_from_is_refused_and_the_committed_cursor_stays_readable(worker_api, alice, rows, where, fragment):
    shard, size = _today_shard(alice)
    worker_api.ok("l1_commit", records=[], cursor={"version": 2, "files": {shard: size}})
    before = snapshot(alice)
    bad = 3 if where == "mid-line" else size + 10
    error = fail(worker_api, "l1_commit", 400, "invalid_params", records=[rec("memoryweb uses pnpm for web assets")], cursor={"version": 2, "files": {shard: bad}})
    assert error["details"][0]["field"] == "cursor" and fragment in error["message"] and shard in error["message"]
    assert snapshot(alice) == before
    assert worker_api.ok("read_l0_increment", l0Files=shard)["nextCursor"]["files"][shard] == size


def test_a_cursor_entry_for_a_shard_that_does_not_exist_yet_is_accepted(worker_api, alice, rows):
    shard, size = _today_shard(alice)
    body = worker_api.ok("l1_commit", records=[], cursor={"version": 2, "files": {shard: size, "2999-01-01.jsonl": 0}})
    assert body["cursorCommitted"] is True


def test_the_longest_session_keys_and_cwd_the_l0_ingest_accepts_are_stored_whole(worker_api, agent_api, alice, l0):
    from apps.conversations.ingest import MAX_KEY_CHARS
    from apps.records.models import L1Record

    key, sid, cwd = "k" * MAX_KEY_CHARS, "i" * MAX_KEY_CHARS, "/w/" + "d" * 4000
    l0(alice, msg(1, "we decided: memoryweb uses pnpm for the web assets", session=key, sessionId=sid, cwd=cwd))
    body = worker_api.ok("l1_commit", records=[rec("memoryweb uses pnpm for web assets", new_scene_name="memoryweb｜build", new_scene_reason="first")], cursor=CURSOR)
    stored = L1Record.objects.get(profile=alice, record_id=body["stored"][0])
    assert (stored.session_key, stored.session_id, stored.cwd) == (key, sid, cwd)
    context = {"sessionKey": key, "sessionId": sid, "cwd": cwd}
    status, loaded = agent_api.post("/api/v1/tools/load_memory_rules", {"_context": context})
    assert status == 200, loaded
    status, body = agent_api.post("/api/v1/tools/l1_commit", {"source": "main-agent", "records": [{"content": "the user prefers dark themes", "type": "work_fact"}], "_context": context})
    assert status == 200 and body["rulesLoaded"] is True, body
    stored = L1Record.objects.get(profile=alice, record_id=body["stored"][0])
    assert (stored.session_key, stored.session_id, stored.cwd) == (key, sid, cwd)


def test_a_call_context_longer_than_the_l0_limits_is_invalid_params(agent_api, alice):
    before = snapshot(alice)
    status, body = agent_api.post("/api/v1/tools/load_memory_rules", {"_context": {"sessionKey": "k" * 513}})
    assert status == 400 and body["error"]["details"][0]["field"] == "_context.sessionKey"
    status, body = agent_api.post("/api/v1/tools/l1_commit", {"source": "main-agent", "records": [{"content": "the user prefers dark themes", "type": "work_fact"}], "_context": {"cwd": "/" + "c" * 4096}})
    assert status == 400 and body["error"]["details"][0]["field"] == "_context.cwd"
    assert snapshot(alice) == before


def test_metadata_nested_absurdly_deep_is_invalid_params_not_a_server_error(worker_api, alice, rows):
    deep: object = "leaf"
    for _ in range(900):
        deep = [deep]
    before = snapshot(alice)
    error = fail(worker_api, "l1_commit", 400, "invalid_params", records=[rec("memoryweb uses pnpm for web assets", metadata={"scope": "global", "x": deep})], cursor=CURSOR)
    assert error["details"][0]["field"] == "records.0.metadata" and "32 levels" in error["message"]
    assert snapshot(alice) == before
    nested: object = "leaf"
    for _ in range(30):
        nested = {"k": nested}
    body = worker_api.ok("l1_commit", records=[rec("memoryweb uses pnpm for web assets", metadata={"scope": "global", "x": nested})], cursor=CURSOR)
    assert body["stored"][0]


def test_a_provenance_message_names_at_most_twenty_missing_references(worker_api, alice, rows):
    refs = ["m1", *[f"gone{i}" for i in range(30)]]
    body = worker_api.ok("l1_commit", records=[rec("memoryweb uses pnpm for web assets", sources=refs)], cursor=CURSOR)
    [dropped] = body["valueCheck"]["dropped"]
    assert dropped["reason"] == "provenanceMissing" and body["provenanceMissing"] == 1
    assert dropped["message"].startswith("not found in L0: gone0, gone1") and "gone19" in dropped["message"]
    assert "gone20" not in dropped["message"] and dropped["message"].endswith("and 10 more")
