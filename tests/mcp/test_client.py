"""memoryweb_client: every typed method against a live server, typed errors, context
headers, and retries on locked/unavailable."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from memoryweb_client import (
    Conflict,
    Forbidden,
    InvalidParams,
    Locked,
    MemoryWebClient,
    NotFound,
    RateLimited,
    Unauthorized,
    Unavailable,
)

from apps.accounts.services import token_create
from apps.tools.registry import all_tools


@pytest.mark.django_db(transaction=True)
def test_every_method_against_a_live_server(live_server, make_profile, monkeypatch):
    alice = make_profile("alice")
    _, admin = token_create(profile=alice, role="admin")
    called: set[str] = set()
    original = MemoryWebClient.call

    def spy(self, name, params=None):
        called.add(name)
        return original(self, name, params)

    monkeypatch.setattr(MemoryWebClient, "call", spy)
    with MemoryWebClient(live_server.url, admin, session_key="cl-1", cwd="/home/dev/shop") as mw:
        assert mw.whoami()["sessionKey"] == "cl-1"
        assert mw.turn("t-9").whoami()["turn"] == "t-9"
        assert mw.health()["checks"]["database"]["ok"] is True
        assert {t["name"] for t in mw.catalog()} == {s.name for s in all_tools()}
        ingested = mw.memory_ingest([{"id": "c1", "role": "user", "content": "We decided to use PostgreSQL for production."}], sessionKey="cl-1")
        assert ingested["appended"] == 1 and ingested["run"]["status"] == "succeeded"
        assert "PostgreSQL" in mw.memory_search("production database", topK=3)["text"]
        appended = mw.append_messages([{"id": "c2", "role": "user", "content": "The staging box is called kiwi.", "sessionKey": "cl-1"}])
        assert appended["appended"] == 1
        assert mw.append_feed_events([{"role": "tool_call", "content": "ls", "sessionKey": "cl-1", "tool_name": "bash"}])["appended"] == 1
        assert "timedOut" in mw.recall_context("production database")
        assert "rules" in mw.load_memory_rules(mode="once")
        stored = mw.l1_commit([{"content": "The billing service is deployed with Helm.", "type": "work_method"}], source="main-agent")
        rid = next(r for r in stored["stored"] if r)
        assert "scenes" in mw.list_l1_scenes(limit=5)
        assert "flag" in mw.l1_project_get("cl-1")
        task = next(r for r in mw.l1_commit([{"content": "Add retry logic to the payment client.", "type": "work_task"}],
                                             source="main-agent")["stored"] if r)
        assert mw.l1_task_state([task], "done", reason="merged")["applied"] == [task]
        assert mw.recall_l1_records("billing deployment", topK=3, trace=True)["records"]
        assert "updated" in mw.clear_invalid_l1_records([rid])
        assert mw.embed_and_search(queryText="billing deployment", topK=2)["results"][0]["candidates"]
        assert "messages" in mw.read_l0_increment(appended["rows"][0]["shard"], cursor="")
        assert "records" in mw.read_l1_increment(maxRecords=10)
        assert "blocks" in mw.l2_archive_guide()
        assert mw.read_scene_blocks(["none.md"])["blocks"][0]["ok"] is False
        with pytest.raises(NotFound):  # the fields reached the service's own checks
            mw.l2_commit([{"action": "update", "filename": "none.md", "content": "x",
                           "meta": {"created": "2026-01-01T00:00:00Z", "updated": "2026-01-01T00:00:00Z", "summary": "s", "heat": 1}}],
                         cursor={"lastRecordId": 0})
        assert mw.l3_edit("add", content="Prefers short answers.")["success"] is True
        assert "success" in mw.l3_commit("2026-01-01T00:00:00Z")
        assert "skills" in mw.skill_manage("list")
        with pytest.raises(NotFound):
            mw.skill_view("no-such-skill")
        shard = mw.append_feed_events([{"role": "user", "content": "hi", "sessionKey": "cl-1"}])["rows"][0]["shard"]
        assert "messages" in mw.read_skill_feed_increment(shard)
        assert mw.l1_fix(rid, action="rewrite", newContent="The billing service is deployed with Helm 3.",
                         evidence="the team upgraded to Helm 3 last sprint")["newRecordId"]
    tool_methods = {s.name for s in all_tools() if s.func.__module__.startswith("apps.")}  # not tests' own tools
    assert called >= tool_methods, f"methods not exercised: {sorted(tool_methods - called)}"


@pytest.mark.django_db(transaction=True)
def test_typed_errors_and_no_retry_on_them(live_server, make_profile):
    alice = make_profile("alice")
    _, agent = token_create(profile=alice, role="agent")
    sleeps: list[float] = []
    mw = MemoryWebClient(live_server.url, agent, sleep=sleeps.append)
    with pytest.raises(InvalidParams) as err:
        mw.list_l1_scenes(limit=0)
    assert err.value.status == 400 and err.value.details[0]["field"] == "limit"
    with pytest.raises(Forbidden):
        mw.read_l1_increment()
    with pytest.raises(NotFound):
        mw.call("no_such_tool")
    turn = mw.turn()
    for _ in range(3):
        turn.recall_l1_records("anything")
    with pytest.raises(RateLimited):
        turn.recall_l1_records("anything")
    mw.turn().recall_l1_records("anything")  # a new turn has its own budget
    with pytest.raises(Unauthorized):
        MemoryWebClient(live_server.url, "mw_wrong").whoami()
    assert sleeps == []  # none of these is retried


class _Scripted(BaseHTTPRequestHandler):
    """A loopback stand-in for the service that answers from a script of (status, body)."""

    script: ClassVar[list[tuple[int, dict]]] = []
    seen: ClassVar[list[dict]] = []

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        type(self).seen.append({"path": self.path, "headers": dict(self.headers), "body": json.loads(self.rfile.read(length) or b"{}")})
        status, body = type(self).script.pop(0)
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args):
        pass


@pytest.fixture
def scripted():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    _Scripted.script, _Scripted.seen = [], []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", _Scripted
    server.shutdown()
    server.server_close()


def _err(code):
    return {"error": {"code": code, "message": code, "details": None}}


def test_locked_and_unavailable_are_retried_with_growing_backoff(scripted):
    url, handler = scripted
    handler.script = [(423, _err("locked")), (423, _err("locked")), (503, _err("unavailable")), (200, {"success": True})]
    sleeps: list[float] = []
    mw = MemoryWebClient(url, "mw_x", session_key="s", cwd="/w", sleep=sleeps.append, backoff=0.5)
    assert mw.turn("t3").l1_commit([{"content": "A fact worth keeping.", "type": "work_fact"}], source="main-agent") == {"success": True}
    assert len(handler.seen) == 4 and len(sleeps) == 3
    assert 0.25 <= sleeps[0] <= 0.5 and 0.5 <= sleeps[1] <= 1.0 and 1.0 <= sleeps[2] <= 2.0
    headers = handler.seen[0]["headers"]
    assert headers["Authorization"] == "Bearer mw_x" and headers["X-Memory-Session"] == "s"
    assert headers["X-Memory-Turn"] == "t3" and headers["X-Memory-Cwd"] == "/w"
    assert handler.seen[0]["path"] == "/api/v1/tools/l1_commit"
    assert handler.seen[0]["body"] == {"records": [{"content": "A fact worth keeping.", "type": "work_fact"}], "source": "main-agent"}


def test_retries_stop_after_the_limit_and_conflicts_are_not_retried(scripted):
    url, handler = scripted
    handler.script = [(423, _err("locked"))] * 3
    sleeps: list[float] = []
    with pytest.raises(Locked) as err:
        MemoryWebClient(url, "mw_x", retries=2, sleep=sleeps.append).l1_task_state(["l1_1_a"], "done")
    assert err.value.status == 423 and len(sleeps) == 2 and len(handler.seen) == 3
    handler.script = [(409, _err("conflict"))]
    with pytest.raises(Conflict):
        MemoryWebClient(url, "mw_x", sleep=sleeps.append).l1_fix("l1_1_a", evidence="e" * 30)
    assert len(sleeps) == 2


def test_an_unreachable_service_is_unavailable_after_retries():
    sleeps: list[float] = []
    with pytest.raises(Unavailable) as err:
        MemoryWebClient("http://127.0.0.1:9", "mw_x", retries=2, sleep=sleeps.append).whoami()
    assert "unreachable" in err.value.message and len(sleeps) == 2
