"""Fixtures for L1 record tests: L0 rows, commits, and a snapshot of everything a commit
may change (to assert that a failed call changed nothing)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from apps.accounts.models import AuditEvent, Profile
from apps.conversations.models import Cursor
from apps.conversations.services import l0_append
from apps.records.models import L1Change, L1Record, RulesLoad
from apps.scenes.models import SceneEntry
from apps.search.models import IndexOp

CURSOR = json.dumps({"version": 2, "files": {"2026-11-29.jsonl": 100}})
T0 = 1_767_000_000_000  # epoch ms of the first test message


def msg(i: int, content: str, *, session: str = "s1", cwd: str = "/work/bench", role: str = "user", **extra: Any) -> dict[str, Any]:
    row = {"id": f"m{i}", "role": role, "content": content, "timestamp": T0 + i * 1000, "sessionKey": session,
           "sessionId": f"{session}-id", "cwd": cwd}
    row.update(extra)
    return row


@pytest.fixture
def l0():
    """Append rows to a profile's L0 and return their message references."""

    def append(profile: Profile, *rows: dict[str, Any]) -> list[str]:
        return [r["messageRef"] for r in l0_append(profile=profile, rows=list(rows))]

    return append


def rec(content: str, *, type: str = "work_fact", sources: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    """A subagent record citing `sources` (default m1), scene left for the caller."""
    record = {"content": content, "type": type, "priority": 70, "source_message_ids": sources or ["m1"],
              "metadata": {"scope": "global", "project": ""}}
    record.update(extra)
    return record


def snapshot(profile: Profile) -> dict[str, Any]:
    profile.refresh_from_db()
    return {
        "records": sorted((r.record_id, r.content, r.deleted, r.version, r.replaced_by, r.task_state, r.last_change, json.dumps(r.metadata, sort_keys=True))
                          for r in L1Record.objects.filter(profile=profile)),
        "changes": L1Change.objects.filter(profile=profile).count(),
        "scenes": sorted((s.scene_id, s.name, s.use_count, str(s.last_used_at), json.dumps(s.aliases)) for s in SceneEntry.objects.filter(profile=profile)),
        "cursor": [c.value for c in Cursor.objects.filter(profile=profile)],
        "audit": AuditEvent.objects.filter(profile=profile).count(),
        "index_ops": IndexOp.objects.filter(profile=profile).count(),
        "known_projects": list(profile.known_projects or []),
        "rules": sorted((r.session_key, r.mode) for r in RulesLoad.objects.filter(profile=profile)),
    }


def record(profile: Profile, record_id: str) -> L1Record:
    return L1Record.objects.select_related("scene").get(profile=profile, record_id=record_id)


def fail(api, tool: str, status: int, code: str, **kwargs: Any) -> dict[str, Any]:
    got_status, body = api.call(tool, **kwargs)
    assert got_status == status, (got_status, body)
    assert body["error"]["code"] == code, body
    return body["error"]
