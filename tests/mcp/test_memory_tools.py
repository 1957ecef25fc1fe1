"""memory_ingest and memory_search (SPEC §3.20) through the tool API."""

from __future__ import annotations

import pytest

from apps.memory.services import FORGOTTEN, NOTHING_STORED
from apps.pipeline.models import JobRun
from tests.mcp.conftest import forget, remember

pytestmark = pytest.mark.django_db(transaction=True)

ROWS = [
    {"id": "m1", "role": "user", "content": "We decided to use PostgreSQL for production. The staging server uses SQLite."},
    {"id": "m2", "role": "assistant", "content": "Noted: PostgreSQL in production, SQLite on staging."},
]


def test_ingest_without_wait_only_stores_the_rows(agent_api):
    body = agent_api.ok("memory_ingest", messages=ROWS, wait=False, sessionKey="chat-9")
    assert body["appended"] == 2 and body["duplicates"] == [] and body["run"] is None
    from apps.conversations.services import l0_session_rows

    rows = l0_session_rows(profile=agent_api.profile, session_key="chat-9")
    assert [r["content"] for r in rows] == [r["content"] for r in ROWS]


def test_ingest_with_wait_extracts_and_reports_the_run(agent_api):
    body = agent_api.ok("memory_ingest", messages=ROWS, cwd="/home/dev/shop", session="ctx-session")
    run = JobRun.objects.get(pk=body["run"]["id"])
    assert run.kind == "l1_extract" and run.status == "succeeded" == body["run"]["status"]
    assert body["run"]["stored"] >= 1 and "pending" not in body
    from apps.conversations.services import l0_session_rows

    # the call context's sessionKey and the given cwd are the rows'
    assert {r["cwd"] for r in l0_session_rows(profile=agent_api.profile, session_key="ctx-session")} == {"/home/dev/shop"}


def test_ingest_that_outlasts_the_wait_answers_pending_with_the_run(agent_api):
    agent_api.profile.settings = {"mcp.ingestWaitSeconds": 0}
    agent_api.profile.save()
    body = agent_api.ok("memory_ingest", messages=ROWS)
    assert body["pending"] is True and body["run"]["id"]
    assert body["run"]["status"] in ("queued", "running", "succeeded")
    run = JobRun.objects.get(pk=body["run"]["id"])
    import time

    deadline = time.monotonic() + 60
    while run.status in ("queued", "running") and time.monotonic() < deadline:
        time.sleep(0.2)
        run.refresh_from_db()
    assert run.status == "succeeded"  # the run went on after the answer


def test_ingest_validates_every_field(agent_api):
    status, body = agent_api.call("memory_ingest", messages=[{"role": "user"}])
    assert status == 400 and body["error"]["code"] == "invalid_params"
    assert any(d["field"] == "messages.0.content" for d in body["error"]["details"])
    status, body = agent_api.call("memory_ingest", messages=[])
    assert status == 400
    status, body = agent_api.call("memory_ingest", messages=[{"role": "user", "content": "hi", "sessionKey": "x"}])
    assert status == 400 and body["error"]["details"][0]["field"] == "messages.0.sessionKey"
    status, body = agent_api.call("memory_ingest", messages=[{"role": "user", "content": "a", "id": "same"},
                                                            {"role": "user", "content": "b", "id": "same"}], wait=False)
    # SPEC §1.1 [2026-12]: a repeated id is stored once and reported as a duplicate.
    assert status == 200 and body["appended"] == 1
    assert [d["index"] for d in body["duplicates"]] == [1]


def test_search_lists_memories_with_date_and_type(agent_api):
    remember(agent_api, "The payment client retries three times with exponential backoff.", type="work_method")
    body = agent_api.ok("memory_search", query="how does the payment client retry")
    first = body["text"].splitlines()[0]
    assert first.startswith("- 20") and "[work_method]" in first and "exponential backoff" in first
    assert body["noRelevantMemory"] is False and body["forgottenMatch"] is False and len(body["recordIds"]) == 1


def test_search_says_plainly_when_nothing_is_stored(agent_api):
    body = agent_api.ok("memory_search", query="what is my sister's name")
    assert body["text"] == NOTHING_STORED and body["noRelevantMemory"] is True and body["recordIds"] == []


def test_search_says_the_best_match_was_removed_at_the_users_request_never_its_content(agent_api):
    secret = remember(agent_api, "The user's therapist is Dr. Jonas Weber, sessions every other Tuesday.", type="work_fact")
    remember(agent_api, "CI runs on the self-hosted runner in the basement.")
    forget(agent_api, secret)
    body = agent_api.ok("memory_search", query="who is my therapist")
    assert body["text"].splitlines()[0] == FORGOTTEN and body["forgottenMatch"] is True
    assert "Jonas" not in body["text"] and "Weber" not in body["text"] and "Tuesday" not in body["text"]
    assert secret not in body["recordIds"]
    # a question the forgotten record is not about gets no such notice
    other = agent_api.ok("memory_search", query="where does CI run")
    assert FORGOTTEN not in other["text"] and "basement" in other["text"]


def test_only_a_user_forget_tombstone_gives_the_notice(agent_api):
    from apps.records.services import record_fix

    rid = remember(agent_api, "The user's therapist is Dr. Jonas Weber, sessions every other Tuesday.")
    record_fix(profile=agent_api.profile, record_id=rid, action="tombstone", actor="test", evidence="duplicate of a newer record entry",
               force=True, is_admin=True)
    body = agent_api.ok("memory_search", query="who is my therapist")
    assert body["text"] == NOTHING_STORED and body["forgottenMatch"] is False


def test_search_shares_recalls_per_turn_budget(agent_api):
    remember(agent_api, "The payment client retries three times with exponential backoff.")
    for _ in range(3):
        agent_api.ok("memory_search", query="payment retries", turn="t1", session="s1")
    status, body = agent_api.call("memory_search", query="payment retries", turn="t1", session="s1")
    assert status == 429 and body["error"]["code"] == "rate_limited"
    status, body = agent_api.call("recall_l1_records", query="payment retries", turn="t1", session="s1")
    assert status == 429


def test_both_tools_are_in_the_catalog_and_openapi(agent_api):
    catalog = {t["name"]: t for t in agent_api.get("/api/v1/tools")[1]}
    assert catalog["memory_ingest"]["roles"] == ["agent", "worker", "admin"]
    assert "messages" in catalog["memory_ingest"]["parameters"]["required"]
    assert catalog["memory_search"]["parameters"]["properties"]["topK"]["default"] == 5
    doc = agent_api.client.get("/api/v1/openapi.json").json()
    assert "/api/v1/tools/memory_ingest" in doc["paths"] and "/api/v1/tools/memory_search" in doc["paths"]
