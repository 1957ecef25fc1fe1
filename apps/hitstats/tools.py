"""Hit-statistics tools (SPEC §3.15)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from apps.hitstats.services import hits_mark_invalid
from apps.tools.errors import invalid_field
from apps.tools.registry import NonBlank, ToolContext, ToolParams, tool

MAX_IDS = 200


class ClearInvalidParams(ToolParams):
    recordIds: Annotated[list[NonBlank], Field(min_length=1, max_length=MAX_IDS)] = Field(
        description=f"Ids of recalled records judged useless (1..{MAX_IDS})."
    )


@tool(
    "clear_invalid_l1_records",
    params=ClearInvalidParams,
    min_role="agent",
    description=(
        "Mark recalled L1 memories as useless for this task: invalid_hits += 1 and effective_hits = hits - "
        "invalid_hits for each id that was recalled before (never-recalled ids are skipped). Feedback only: "
        "nothing is deleted. Returns {updated: [ids], skipped: [ids]}."
    ),
)
def clear_invalid_l1_records(ctx: ToolContext, params: ClearInvalidParams) -> dict:
    if not params.recordIds:
        raise invalid_field("recordIds", "must hold at least one record id")
    if len(params.recordIds) > MAX_IDS:
        raise invalid_field("recordIds", f"at most {MAX_IDS} ids per call, got {len(params.recordIds)}")
    for i, rid in enumerate(params.recordIds):
        if not rid.strip():
            raise invalid_field(f"recordIds.{i}", "must not be empty")
    return hits_mark_invalid(profile=ctx.profile, record_ids=params.recordIds, actor=ctx.actor)
