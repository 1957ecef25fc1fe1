"""The stdio framing and how `manage.py mcp` chooses where tool calls go."""

from __future__ import annotations

import io
import json

import pytest

from apps.mcp.backends import LocalBackend, RemoteBackend
from apps.mcp.management.commands.mcp import Command
from apps.mcp.stdio import serve_stdio
from apps.tools.http import token_context


def _serve(backend, *messages: bytes) -> list[dict]:
    out = io.BytesIO()
    serve_stdio(backend, stdin=io.BytesIO(b"".join(messages)), stdout=out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_one_message_per_line_and_notifications_get_no_answer(agent_api):
    from apps.accounts.services import token_authenticate

    backend = LocalBackend(token_context(token_authenticate(plain=agent_api.token), session_key="s-std"))
    answers = _serve(
        backend,
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n',
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
        b"\n",
        b"{broken\n",
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"我的猫叫什么"}}}\n'.encode(),
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"whoami","arguments":{"_context":{"turn":"t-5"}}}}\n',
        b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"whoami","arguments":{}}}\n',
    )
    assert [a.get("id") for a in answers] == [1, None, 2, 3, 4]
    assert answers[0]["result"]["protocolVersion"] == "2025-06-18"
    assert answers[1]["error"]["code"] == -32700
    assert answers[2]["result"]["content"][0]["text"] == "No information about this is stored in memory."
    assert answers[3]["result"]["structuredContent"]["turn"] == "t-5"
    assert answers[4]["result"]["structuredContent"]["turn"] == ""  # one call's _context does not stick
    assert answers[4]["result"]["structuredContent"]["sessionKey"] == "s-std"


@pytest.mark.django_db(transaction=True)
def test_auto_transport_is_http_to_a_running_service_else_in_process(live_server, make_profile, monkeypatch, settings):
    from apps.accounts.services import token_create

    monkeypatch.delenv("MEMORYWEB_TOOL_TRANSPORT", raising=False)
    monkeypatch.setenv("MEMORYWEB_PROCESS_ROLE", "cli")
    settings.QDRANT_URL = ""
    _, plain = token_create(profile=make_profile("alice"), role="agent")
    remote = Command()._backend(plain, live_server.url, "s", "/w", "auto")
    assert isinstance(remote, RemoteBackend) and remote.role == "agent"
    assert remote.call("whoami", {})["cwd"] == "/w"
    local = Command()._backend(plain, "http://127.0.0.1:9", "s", "/w", "auto")  # nothing listens there
    assert isinstance(local, LocalBackend) and local.ctx.profile.slug == "alice"
    settings.QDRANT_URL = "http://127.0.0.1:6333"  # a Qdrant server: every process may call in process
    assert isinstance(Command()._backend(plain, live_server.url, "s", "/w", "auto"), LocalBackend)


@pytest.mark.django_db(transaction=True)
def test_a_bare_curl_post_gets_plain_json(live_server, make_profile):
    import shutil
    import subprocess

    from apps.accounts.services import token_create

    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed")
    _, plain = token_create(profile=make_profile("alice"), role="agent")
    for message in ('{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
                    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}'):
        done = subprocess.run([curl, "-s", "-i", f"{live_server.url}/mcp", "-H", f"Authorization: Bearer {plain}", "-d", message],
                              capture_output=True, text=True, timeout=60, check=True)
        head, _, body = done.stdout.partition("\n\n")  # text mode turned CRLF into LF
        assert " 200 " in head.splitlines()[0] and "content-type: application/json" in head.lower()
        assert "mcp-session-id" not in head.lower()
        answer = json.loads(body)
        assert answer["jsonrpc"] == "2.0" and "result" in answer


@pytest.mark.django_db(transaction=True)
def test_progress_notifications_come_before_the_answer_on_stdio(make_profile):
    from apps.accounts.services import token_create

    token, _ = token_create(profile=make_profile("alice"), role="agent")
    call = {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "memory_ingest", "_meta": {"progressToken": "tk"},
            "arguments": {"messages": [{"role": "user", "content": "We decided to use PostgreSQL for production."}]}}}
    answers = _serve(LocalBackend(token_context(token)), json.dumps(call).encode() + b"\n")
    *notes, answer = answers
    assert notes and all(n["method"] == "notifications/progress" and n["params"]["progressToken"] == "tk" for n in notes)
    assert answer["id"] == 9 and answer["result"]["structuredContent"]["run"]["status"] == "succeeded"
