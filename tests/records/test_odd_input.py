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
