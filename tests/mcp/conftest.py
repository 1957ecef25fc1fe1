"""MCP fixtures: a private embedded index, captured job messages (runs execute in the
requesting process), and helpers that store and forget records through the tools."""

from __future__ import annotations

import json

import pytest

from apps.pipeline import tasks
from tests.pipeline.conftest import _private_index  # noqa: F401  (autouse: a private index, no LLM)


@pytest.fixture(autouse=True)
def _no_broker(monkeypatch):
    """Job messages are not sent to a broker: memory_ingest runs the run itself."""
    sent: list = []

    def capture(args=None, kwargs=None, **options):
        sent.append(list(args or []))

        class _Result:
            id = f"task-{len(sent)}"

        return _Result()

    monkeypatch.setattr(tasks.run_job, "apply_async", capture)
    monkeypatch.setattr(tasks.check_trigger, "apply_async", capture)
    return sent


def rpc(method: str, params: dict | None = None, id: int = 1) -> dict:
    message: dict = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def post_mcp(client, token: str, message, **headers):
    extra = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in headers.items()}
    body = message if isinstance(message, (bytes, str)) else json.dumps(message)
    return client.post("/mcp", data=body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}", **extra)


def remember(api, content: str, *, type: str = "work_fact") -> str:
    """Store one main-agent record through l1_commit; returns its id."""
    body = api.ok("l1_commit", source="main-agent", records=[{"content": content, "type": type, "priority": 70}])
    return next(rid for rid in body["stored"] if rid)


def forget(api, record_id: str) -> None:
    """Tombstone a record because the user asked to forget it: the records service
    tombstones it, and the record keeps the reason `user-forget` in
    metadata["tombstoneReason"] (where a forget request's tombstone keeps it)."""
    from apps.records.models import L1Record
    from apps.records.services import record_fix

    record_fix(profile=api.profile, record_id=record_id, action="tombstone", actor="test:user",
               evidence="the user asked to forget this memory", reason="user-forget", force=True, is_admin=True)
    record = L1Record.objects.get(profile=api.profile, record_id=record_id)
    if record.metadata.get("tombstoneReason") != "user-forget":
        L1Record.objects.filter(pk=record.pk).update(metadata={**record.metadata, "tombstoneReason": "user-forget"})
