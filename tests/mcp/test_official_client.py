"""End to end with the official `mcp` client library: streamable HTTP against a live
server, and stdio spawning `manage.py mcp` (which reaches that server over HTTP, as a
process beside an embedded-Qdrant web process must)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from apps.accounts.services import token_create
from apps.tools.registry import all_tools

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db(transaction=True)


def names_for(role: str) -> list[str]:
    return [spec.name for spec in all_tools() if role in spec.roles]


def over_http(url: str, token: str, script, *, headers: dict | None = None):
    async def main():
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}", **(headers or {})}, timeout=120)
        async with http, Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
            return await script(client)

    return anyio.run(main)


def over_stdio(url: str, token: str, script, tmp_path: Path):
    env = {**os.environ, "MEMORYWEB_TOKEN": token, "MEMORYWEB_SERVICE_URL": url,
           "MEMORYWEB_DATA_DIR": str(tmp_path / "stdio-data"), "MEMORYWEB_TOOL_TRANSPORT": ""}
    params = StdioServerParameters(command=sys.executable, args=["manage.py", "mcp", "--session", "stdio-s1"], env=env, cwd=str(REPO))

    async def main():
        async with Client(params) as client:
            return await script(client)

    return anyio.run(main)


def structured(result):
    assert result.content and result.content[0].type == "text"
    return result.structured_content


async def round_trip(client):
    """list → l1_commit → recall_l1_records → an error result → memory_search."""
    listed = [tool.name for tool in (await client.list_tools()).tools]
    committed = await client.call_tool("l1_commit", {"source": "main-agent", "records": [
        {"content": "The team deploys the billing service with Helm charts from the infra repo.", "type": "work_method"}]})
    assert committed.is_error is False, committed.content
    record_id = next(r for r in structured(committed)["stored"] if r)
    recalled = await client.call_tool("recall_l1_records", {"query": "how is billing deployed", "topK": 3})
    ids = [r["recordId"] for r in structured(recalled)["records"]]
    bad = await client.call_tool("l1_fix", {"recordId": "l1_0_none", "action": "tombstone", "evidence": "x"})
    search = await client.call_tool("memory_search", {"query": "How do we deploy billing?"})
    return {"listed": listed, "record": record_id, "recalled": ids, "bad": bad, "search": search.content[0].text,
            "version": client.protocol_version}


def test_streamable_http_initialize_list_call(live_server, make_profile):
    alice = make_profile("alice")
    _, agent = token_create(profile=alice, role="agent")
    _, worker = token_create(profile=alice, role="worker")
    out = over_http(live_server.url, agent, round_trip)
    assert out["version"] == "2025-11-25"  # the SDK fell back from its stateless probe to the handshake
    assert out["listed"] == names_for("agent")
    assert out["record"] in out["recalled"]
    assert out["bad"].is_error is True
    error = json.loads(out["bad"].content[0].text)["error"]
    assert error["code"] == "not_found" and error == out["bad"].structured_content["error"]
    assert "Helm charts" in out["search"] and "[work_method]" in out["search"]

    async def list_only(client):
        return [tool.name for tool in (await client.list_tools()).tools]

    assert over_http(live_server.url, worker, list_only) == names_for("worker")


def test_memory_ingest_wait_then_memory_search_finds_the_fact(live_server, make_profile):
    alice = make_profile("alice")
    _, agent = token_create(profile=alice, role="agent")

    async def script(client):
        ingested = await client.call_tool("memory_ingest", {"sessionKey": "chat-1", "messages": [
            {"id": "m1", "role": "user", "content": "We decided to use PostgreSQL for production. The staging server uses SQLite."},
            {"id": "m2", "role": "assistant", "content": "Noted, PostgreSQL in production and SQLite on staging."},
        ]})
        found = await client.call_tool("memory_search", {"query": "Which database runs in production?"})
        return structured(ingested), found.content[0].text

    ingested, text = over_http(live_server.url, agent, script)
    assert ingested["appended"] == 2 and not ingested.get("pending")
    assert ingested["run"]["status"] == "succeeded" and ingested["run"]["stored"] >= 1, ingested
    assert "PostgreSQL" in text


def test_stdio_server_spawned_by_the_client_reaches_the_service(live_server, make_profile, tmp_path):
    alice = make_profile("alice")
    _, agent = token_create(profile=alice, role="agent")
    out = over_stdio(live_server.url, agent, round_trip, tmp_path)
    assert out["listed"] == names_for("agent")
    assert out["record"] in out["recalled"]
    assert out["bad"].is_error is True and json.loads(out["bad"].content[0].text)["error"]["code"] == "not_found"
    assert "Helm charts" in out["search"]

    async def context(client):
        return structured(await client.call_tool("whoami", {}))

    who = over_stdio(live_server.url, agent, context, tmp_path)
    assert who["role"] == "agent" and who["profile"] == "alice" and who["sessionKey"] == "stdio-s1"
    assert who["cwd"] == str(REPO)


def test_stdio_server_refuses_a_bad_token(live_server, tmp_path):
    import subprocess

    env = {**os.environ, "MEMORYWEB_SERVICE_URL": live_server.url, "MEMORYWEB_DATA_DIR": str(tmp_path / "d")}
    env.pop("MEMORYWEB_TOKEN", None)
    done = subprocess.run([sys.executable, "manage.py", "mcp"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0 and "token" in done.stderr
    done = subprocess.run([sys.executable, "manage.py", "mcp", "--token", "mw_wrong"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, input="", check=False)
    assert done.returncode != 0 and "refused the token" in done.stderr


def test_a_call_asking_for_progress_is_streamed_with_progress_notifications(live_server, make_profile):
    alice = make_profile("alice")
    _, agent = token_create(profile=alice, role="agent")
    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress, total, message):
        seen.append((progress, message))

    async def script(client):
        result = await client.call_tool("memory_ingest", {"messages": [
            {"id": "p1", "role": "user", "content": "From now on always run the linter before committing."}]},
            progress_callback=on_progress)
        return structured(result)

    body = over_http(live_server.url, agent, script)
    assert body["run"]["status"] == "succeeded"
    assert seen, "no progress notification arrived"
    assert [p for p, _ in seen] == sorted({p for p, _ in seen})  # strictly growing
    assert seen[0][1] == "1 rows stored; extracting memories"
    assert all(m.startswith(f"extraction run {body['run']['id']}:") for _, m in seen[1:])
