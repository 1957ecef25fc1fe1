"""L3 tools (SPEC §3.12, §3.13). Thin: each calls one service."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from apps.persona import services
from apps.tools.registry import ToolContext, ToolParams, tool


class L3EditParams(ToolParams):
    action: Literal["add", "update", "delete"]
    content: str | None = Field(None, max_length=5000, description="add/update: the single rule line (no newline, no §, no HTML comment)")
    target: str | None = Field(None, max_length=5000, description="update/delete: a fragment matching exactly one entry")
    sources: list[str] | None = Field(None, max_length=20, description="add/update: ids of the L1 records the entry was drawn from (at most 20)")


@tool(
    "l3_edit",
    params=L3EditParams,
    min_role="worker",
    description=(
        "Change exactly ONE entry of the L3 proposal USER-temp.md (never the live USER.md: a human merges the "
        "proposal). action: add (content), update (target, content) or delete (target). content is a single "
        "line without newline, '§' or HTML comment. target is a fragment that must match exactly one entry; 0 "
        "or several matches are refused (conflict) with the candidate list. The first write of a run seeds the "
        "proposal from USER.md plus what the proposal already held. A change that would push the document "
        "(priced as merged into USER.md) over l3.charLimit is refused. sources (add/update): the ids of the L1 "
        "records the entry is drawn from, kept with the entry. Returns {success, action, position "
        "(1-based), entryCount, usage: {chars, limit}}."
    ),
)
def l3_edit(ctx: ToolContext, params: L3EditParams) -> dict:
    return services.persona_edit(profile=ctx.profile, actor=ctx.actor, action=params.action, content=params.content, target=params.target, sources=params.sources)


class L3CommitParams(ToolParams):
    cursor: str = Field(min_length=1, max_length=100, description="the newest meta.updated (ISO) among the scene blocks processed")


@tool(
    "l3_commit",
    params=L3CommitParams,
    min_role="worker",
    description=(
        "Finish an L3 persona run and advance the L3 cursor to the newest `updated` ISO time among the scene "
        "blocks processed. Call it as the last action of every run, also when nothing changed. It never "
        "writes USER.md. Returns {success, cursor: {updated}, previous, runEdited}."
    ),
)
def l3_commit(ctx: ToolContext, params: L3CommitParams) -> dict:
    return services.persona_cursor_commit(profile=ctx.profile, actor=ctx.actor, cursor=params.cursor)
