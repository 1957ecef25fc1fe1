"""L0 and skill-feed tools (SPEC §3.7, §3.18). Thin: parse, call one service."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from apps.conversations.cursors import cursor_get
from apps.conversations.feed import skill_feed_cursor_parse, skill_feed_read_increment
from apps.conversations.models import CURSOR_L1
from apps.conversations.services import l0_cursor_parse, l0_read_increment
from apps.tools.errors import invalid_field
from apps.tools.registry import PY_SPACE, ToolContext, ToolParams, tool

# At least one character that is neither a separator nor a space: a list naming a shard.
NAMES_A_SHARD = f"[^,{PY_SPACE}]"


class ReadL0IncrementParams(ToolParams):
    l0Files: str = Field(pattern=NAMES_A_SHARD, description="Comma-separated L0 shard names (YYYY-MM-DD.jsonl) or paths inside the profile's l0 folder.")
    cursor: str | dict[str, Any] | None = Field(
        None,
        description=(
            'The cursor to read after: JSON of {"version":2,"files":{"YYYY-MM-DD.jsonl":byteOffset}}, the legacy '
            '{"lastRecordedAt":ISO}, or "" to read from the start. Omitted: the profile\'s committed L1 cursor.'
        ),
    )


@tool(
    "read_l0_increment",
    params=ReadL0IncrementParams,
    min_role="worker",
    description=(
        "Read the next batch of eligible (user/assistant) L0 conversation rows after a cursor: "
        "{messages, background, nextCursor, truncated, skippedLines}. Pass nextCursor, JSON-serialized, "
        "to l1_commit; it advances only when that commit succeeds."
    ),
)
def read_l0_increment(ctx: ToolContext, params: ReadL0IncrementParams) -> dict:
    raw = params.cursor if params.cursor is not None else cursor_get(profile=ctx.profile, kind=CURSOR_L1)
    try:
        cursor = l0_cursor_parse(raw)
    except ValueError as exc:
        raise invalid_field("cursor", str(exc)) from None
    return l0_read_increment(profile=ctx.profile, l0_files=params.l0Files, cursor=cursor)


class ReadSkillFeedIncrementParams(ToolParams):
    feedFiles: str = Field(pattern=NAMES_A_SHARD, description="Comma-separated skill-feed shard names (YYYY-MM-DD.jsonl) or paths inside the profile's skill-feed folder.")
    cursor: str | dict[str, Any] | None = Field(
        None,
        description=(
            "ISO recordedAt to read after (rows stamped exactly at it are replayed), or the exact "
            '{"recordedAt":ISO,"seen":n} from nextCursorState (no replay). Omitted or "": from the start.'
        ),
    )


@tool(
    "read_skill_feed_increment",
    params=ReadSkillFeedIncrementParams,
    min_role="worker",
    description=(
        "Read up to 50 skill-feed rows after a cursor, time ascending, with 5 background rows before it: "
        "{messages, background, nextCursor, nextCursorState, truncated, skippedLines}."
    ),
)
def read_skill_feed_increment(ctx: ToolContext, params: ReadSkillFeedIncrementParams) -> dict:
    try:
        cursor = skill_feed_cursor_parse(params.cursor)
    except ValueError as exc:
        raise invalid_field("cursor", str(exc)) from None
    return skill_feed_read_increment(profile=ctx.profile, feed_files=params.feedFiles, cursor=cursor)
