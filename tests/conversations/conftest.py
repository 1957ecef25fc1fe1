"""Fixtures for L0 and skill-feed tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from apps.accounts.paths import profile_subdir


def row(i: int, *, role: str = "user", session: str = "s1", **extra: Any) -> dict[str, Any]:
    base = {"id": f"m{i}", "role": role, "content": f"message {i}", "timestamp": 1_700_000_000_000 + i, "sessionKey": session, "cwd": "/w"}
    base.update(extra)
    return base


@pytest.fixture
def write_shard():
    """Write raw lines into a profile's l0 shard, as an agent dropping files would."""

    def write(profile, name: str, lines: list[Any], *, area: str = "l0", newline_at_end: bool = True) -> Path:
        path = profile_subdir(profile, area) / name
        text = "\n".join(line if isinstance(line, str) else json.dumps(line, ensure_ascii=False) for line in lines)
        if newline_at_end and lines:
            text += "\n"
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text)
        return path

    return write


def post_rows(api, rows, **kwargs):
    status, body = api.post("/api/v1/l0/messages", {"messages": rows}, **kwargs)
    assert status == 200, (status, body)
    return body


def shard_bytes(profile, name: str, area: str = "l0") -> bytes:
    path = profile_subdir(profile, area) / name
    return path.read_bytes() if path.exists() else b""
