"""The read-only `read` tool the LLM driver gives the model (SPEC §5).

It answers exactly three kinds of path, all named in the task message:
* files in PromptDir — the prompt files as shipped in `apps/pipeline/prompts/`;
* CursorPath — the committed L1 cursor, as JSON;
* RecordsDir and its `YYYY-MM-DD.jsonl` shards — L1 records rendered from the database
  in the §7 layout (a record lives in the shard of the day it was created, at its newest
  state; a tombstone keeps its line with `deleted: true`).
Anything else is refused with `forbidden`; nothing is ever written.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

from apps.accounts.models import Profile
from apps.accounts.paths import profile_dir
from apps.tools.errors import Forbidden, InvalidParams, NotFound

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
SHARD_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.jsonl$")
MAX_LINES = 2000
MAX_CHARS = 60000

READ_TOOL_DEFINITION = {
    "type": "function",
    "function": {
        "name": "read",
        "description": (
            "Read-only file access for this task: the rule files in PromptDir, the committed cursor at CursorPath "
            "(JSON), and the L1 record shards in RecordsDir (pass the directory itself to list its shards). "
            "offset/limit page through long files by line. Any other path is refused."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "an absolute path from the task message"},
                "offset": {"type": "integer", "minimum": 0, "description": "first line to return (0-based)"},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LINES, "description": "lines to return"},
            },
            "required": ["path"],
            "additionalProperties": False,
        },
    },
}


def memory_root(profile: Profile) -> Path:
    return profile_dir(profile) / "memoryDB"


def cursor_path(profile: Profile) -> Path:
    return memory_root(profile) / "l1" / "cursor.json"


def records_dir(profile: Profile) -> Path:
    return memory_root(profile) / "l1" / "records"


def read_path(profile: Profile, args: Any) -> dict[str, Any]:
    if not isinstance(args, dict) or not isinstance(args.get("path"), str) or not args["path"].strip():
        raise InvalidParams("read needs {path: string}", details=[{"field": "path", "message": "required string"}])
    unknown = set(args) - {"path", "offset", "limit"}
    if unknown:
        raise InvalidParams(f"read: unknown fields {', '.join(sorted(unknown))}")
    offset, limit = args.get("offset", 0), args.get("limit", MAX_LINES)
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise InvalidParams("read: offset must be a non-negative integer")
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LINES:
        raise InvalidParams(f"read: limit must be an integer from 1 to {MAX_LINES}")
    raw = args["path"].strip()
    if "\x00" in raw or ".." in Path(raw).parts:
        raise Forbidden(f"read: path {raw!r} is not readable in this task")
    path = Path(raw)
    if path.parent == PROMPTS_DIR and path.suffix == ".md":
        if not path.is_file():
            raise NotFound(f"read: no prompt file {path.name!r} in PromptDir")
        return _page(path.read_text(encoding="utf-8"), offset, limit, str(path))
    if path == cursor_path(profile):
        from apps.conversations.cursors import cursor_get

        value = cursor_get(profile=profile, kind="l1")
        if not value:
            raise NotFound("read: no cursor has been committed yet (use an empty cursor)")
        return _page(json.dumps(value, ensure_ascii=False), offset, limit, str(path))
    rdir = records_dir(profile)
    if path == rdir:
        return {"path": str(path), "entries": list_record_shards(profile)}
    if path.parent == rdir and SHARD_RE.match(path.name):
        lines = render_record_shard(profile, path.name)
        if lines is None:
            raise NotFound(f"read: no L1 shard {path.name!r}")
        return _page("\n".join(lines), offset, limit, str(path))
    raise Forbidden(f"read: path {raw!r} is not readable in this task (only PromptDir files, CursorPath and RecordsDir shards)")


def _page(text: str, offset: int, limit: int, path: str) -> dict[str, Any]:
    lines = text.split("\n")
    chunk = lines[offset : offset + limit]
    body = "\n".join(chunk)
    truncated = offset + limit < len(lines)
    if len(body) > MAX_CHARS:
        body, truncated = body[:MAX_CHARS], True
    return {"path": path, "offset": offset, "lines": len(chunk), "totalLines": len(lines), "truncated": truncated, "content": body}


def list_record_shards(profile: Profile) -> list[str]:
    from django.db.models.functions import TruncDate

    from apps.records.models import L1Record

    days = (
        L1Record.objects.filter(profile=profile)
        .annotate(day=TruncDate("created_at", tzinfo=UTC))
        .values_list("day", flat=True)
        .distinct()
    )
    return sorted(f"{d.isoformat()}.jsonl" for d in days if d)


def render_record_shard(profile: Profile, name: str) -> list[str] | None:
    from apps.records.models import L1Record

    match = SHARD_RE.match(name)
    if not match:
        return None
    day = datetime.strptime(match.group(1), "%Y-%m-%d").date()
    start = datetime.combine(day, time.min, tzinfo=UTC)
    rows = L1Record.objects.filter(profile=profile, created_at__gte=start, created_at__lt=start + timedelta(days=1)).select_related("scene").order_by("created_at", "id")
    lines = [json.dumps(r.as_dict(), ensure_ascii=False) for r in rows]
    return lines or None
