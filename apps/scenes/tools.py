"""L2 tools (SPEC §3.8–§3.11). Thin: each calls one service."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from apps.records import selectors as records
from apps.scenes import services
from apps.tools.registry import MAX_BIGINT, NonBlank, ToolContext, ToolParams, tool


class ReadL1IncrementParams(ToolParams):
    cursor: str | Annotated[int, Field(ge=0, le=MAX_BIGINT)] | dict[str, Any] | None = Field(
        None, description="L2 cursor (lastRecordId: a change id, or its JSON object); default the stored L2 cursor"
    )
    maxRecords: int = Field(50, ge=1, le=records.MAX_INCREMENT)

    @field_validator("cursor")
    @classmethod
    def _cursor_in_range(cls, value: Any) -> Any:
        # A change id is a bigint: 10**30 would overflow the query (SQLite) or the column.
        if isinstance(value, str) and value.strip().startswith("{"):
            try:
                value_obj = json.loads(value)
            except (ValueError, RecursionError):
                return value  # the service names the JSON error
            raw = value_obj.get("lastRecordId") if isinstance(value_obj, dict) else None
        else:
            raw = value.get("lastRecordId") if isinstance(value, dict) else value
        if isinstance(raw, str) and raw.strip().isascii() and raw.strip().isdigit():
            raw = int(raw.strip())
        if isinstance(raw, int) and not isinstance(raw, bool) and raw > MAX_BIGINT:
            raise ValueError(f"a change id is at most {MAX_BIGINT}")
        return value
    l1Dir: str | None = Field(None, description="accepted for compatibility; must lie inside the profile; records come from the database")


@tool(
    "read_l1_increment",
    params=ReadL1IncrementParams,
    min_role="worker",
    description=(
        "Read the L1 records changed after the L2 cursor in one call (the scene organizer's input). "
        "Each record appears once, at its newest state, in the order of its newest change; tombstoned "
        "records are included (deleted=true) so deletions reach the scene blocks. Params: cursor (optional "
        "lastRecordId, default the stored L2 cursor), maxRecords (default 50, at most 200). Returns {records, "
        "nextCursor (pass it to l2_commit), totalNew, returned, truncated}."
    ),
)
def read_l1_increment(ctx: ToolContext, params: ReadL1IncrementParams) -> dict:
    return records.l1_increment_read(profile=ctx.profile, cursor=params.cursor, max_records=params.maxRecords, l1_dir=params.l1Dir)


class SceneMeta(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    created: str
    updated: str
    summary: str
    heat: int


class SceneWrite(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    action: Literal["create", "update", "merge", "delete", "consolidate", "archive", "restore"]
    filename: str
    sources: list[str] | None = None
    reason: str | None = Field(None, max_length=2000)
    meta: SceneMeta | None = None
    content: str | None = None
    members: list[str] | None = None


class L2CommitParams(ToolParams):
    sceneWrites: list[SceneWrite] = Field(max_length=100)
    cursor: str | int | dict[str, Any] = Field(
        description="the nextCursor of read_l1_increment (lastRecordId: a change id, or {\"lastRecordId\": n})"
    )
    personaSignal: bool = False
    personaReason: str | None = Field(None, max_length=2000)


@tool(
    "l2_commit",
    params=L2CommitParams,
    min_role="worker",
    description=(
        "Commit scene block writes and advance the L2 cursor, all or nothing. sceneWrites: [{action: "
        "create|update|merge|delete|consolidate|archive|restore, filename (bare name ending in .md), sources "
        "(merge/consolidate: at least 2 live blocks), reason (required for archive), meta {created, updated, "
        "summary, heat} and content (create/update/merge/consolidate), members (optional; default: previous "
        "members plus L1 ids cited in the content as (l1_...) references)}]. CONSOLIDATE is preferred for "
        "merging: it is rejected when the merged body is under half of the sources' body or an explicit "
        "members list drops a source member. ARCHIVE (one per batch, reason required) frees a slot, RESTORE "
        "brings a block back. A batch that would leave more live blocks than l2.maxScenes is rejected: "
        "consolidate or archive first (see l2_archive_guide). personaSignal asks for an L3 persona run. "
        "Returns {success, applied, liveCount, maxScenes, sceneCountWarning}."
    ),
)
def l2_commit(ctx: ToolContext, params: L2CommitParams) -> dict:
    writes: list[dict[str, Any]] = [w.model_dump() for w in params.sceneWrites]
    for w in writes:
        if w["meta"] is None:
            del w["meta"]
    return services.scene_commit(
        profile=ctx.profile, actor=ctx.actor, scene_writes=writes, cursor=params.cursor,
        persona_signal=params.personaSignal, persona_reason=params.personaReason or "",
    )


class ArchiveGuideParams(ToolParams):
    filename: NonBlank | None = None


@tool(
    "l2_archive_guide",
    params=ArchiveGuideParams,
    min_role="worker",
    description=(
        "The L2 archive rules and a fact table of every scene block (heat, memberCount, recalledMembers, "
        "lastRecallAt, activeDaysSinceWrite, summary, archived), with liveCount and maxScenes. With filename, "
        "also {archivable, why}: the host only hard-blocks blocks younger than l2.archiveMinAgeDays and name "
        "conflicts with an archived block; it computes no coldness score, you decide with a written reason."
    ),
)
def l2_archive_guide(ctx: ToolContext, params: ArchiveGuideParams) -> dict:
    return services.scene_archive_guide(profile=ctx.profile, filename=params.filename)


class ReadSceneBlocksParams(ToolParams):
    filenames: list[str] = Field(min_length=1, max_length=200)


@tool(
    "read_scene_blocks",
    params=ReadSceneBlocksParams,
    min_role="agent",
    description=(
        "Read several scene blocks in one call. filenames: bare .md names from the scene index. Returns "
        "{blocks: [{filename, ok, meta, content, members, truncated?, omitted?, error?}], returned, omitted, "
        "truncated, totalChars}. One block is cut at 24000 characters (truncated); one call returns at most "
        "96000 characters and marks later blocks omitted (read them in another call)."
    ),
)
def read_scene_blocks(ctx: ToolContext, params: ReadSceneBlocksParams) -> dict:
    return services.scene_blocks_read(profile=ctx.profile, filenames=params.filenames)
