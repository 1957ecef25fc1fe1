"""Retrieval tools (SPEC §3.14, §3.16): thin shells over `apps.search.services`."""

from __future__ import annotations

import time
from typing import Annotated, Any

from pydantic import ConfigDict, Field

from apps.metrics.instruments import observe_recall
from apps.records.models import ALL_TYPES
from apps.search import embedding, index, services
from apps.tools.registry import (
    IntBetween,
    NonBlank,
    ToolContext,
    ToolParams,
    register_health_check,
    tool,
)

# The schema states the enum and the non-empty list; the service checks both in its words.
RecordType = Annotated[str, Field(json_schema_extra={"enum": list(ALL_TYPES)})]


class RecallParams(ToolParams):
    query: NonBlank = Field(description="What to look for, in any language (Chinese and English both work).")
    topK: IntBetween(1, 20) = Field(5, description="How many records to return, 1..recall.maxTopK (20).")  # type: ignore[valid-type]
    types: Annotated[list[RecordType], Field(json_schema_extra={"minItems": 1})] | None = Field(None, description="Only these record types (e.g. ['work_task']).")
    sceneId: NonBlank | None = Field(None, description="Only records of this scene-pool id (sc0001…).")
    includeClosedTasks: bool | None = Field(
        None, description="Include done/dropped tasks (tagged [已完成]/[已废弃]); default: not recall.hideClosedTasks."
    )
    trace: bool = Field(False, description="Also return per-record dense/sparse ranks, fused score, boosts, relevance "
                                           "and heldBelow (records a boost could not pass).")


@tool(
    "recall_l1_records",
    params=RecallParams,
    min_role="agent",
    description=(
        "Search your L1 memories (facts, methods, tasks, artifacts, persona traits, episodes, instructions) by "
        "meaning and by exact words (hybrid dense + BM25, fused by reciprocal rank). Use when no recall block is "
        "present this turn or it does not cover what you need, or the user refers to earlier sessions. At most 3 "
        "calls per turn; if 3 attempts find nothing relevant, the memory is not stored. Returns {records: "
        "[{recordId, score, relevance (0..1), content, type, priority, scene_name, createdAt, taskState?, tag?}], "
        "trace?, degraded?, noRelevantMemory?}; noRelevantMemory: true (and no records) means nothing stored is "
        "relevant to the query — do not retry with the same meaning. Open tasks carry tag [待办], closed ones "
        "[已完成]/[已废弃] — record finished tasks with l1_task_state."
    ),
)
def recall_l1_records(ctx: ToolContext, params: RecallParams) -> dict[str, Any]:
    started = time.monotonic()
    result = services.recall_records(
        profile=ctx.profile, query=params.query, top_k=params.topK, types=params.types, scene_id=params.sceneId,
        include_closed_tasks=params.includeClosedTasks, trace=params.trace, session_key=ctx.session_key,
        turn=ctx.turn, cwd=ctx.cwd, actor=ctx.actor,
    )
    observe_recall(seconds=time.monotonic() - started, records=len(result.get("records") or []),
                   abstained=result.get("noRelevantMemory") is True)
    return result


class EmbedAndSearchParams(ToolParams):
    # Exactly one of the two is given (not null): stated for the schema, checked by the service.
    model_config = ConfigDict(json_schema_extra={"oneOf": [
        {"properties": {"queries": {"type": "array"}}, "required": ["queries"]},
        {"properties": {"queryText": {"type": "string"}}, "required": ["queryText"]},
    ]})

    queries: Annotated[list[NonBlank], Field(json_schema_extra={"minItems": 1, "maxItems": 50})] | None = Field(
        None, description="Up to 50 query texts (split larger batches into chunks)."
    )
    queryText: NonBlank | None = Field(None, description="One query text (instead of queries).")
    topK: IntBetween(1, 20) = Field(5, description="Candidates per query, 1..20.")  # type: ignore[valid-type]


@tool(
    "embed_and_search",
    params=EmbedAndSearchParams,
    min_role="worker",
    description=(
        "Embed query texts and cosine-search the live L1 records (dedup candidates for the extractor). Returns "
        "{results: [{index, queryText, queryVector, candidates: [{record_id, content (≤200 chars), "
        "contentTruncated, type, priority, score}], fallback?}]}. Copy queryVector into l1_commit's `embedding` "
        "only when the final content equals queryText exactly. A query with fallback:true could not be served: "
        "use the text fallback for it."
    ),
)
def embed_and_search(ctx: ToolContext, params: EmbedAndSearchParams) -> dict[str, Any]:
    return services.embed_and_search(profile=ctx.profile, queries=params.queries, query_text=params.queryText, top_k=params.topK)


register_health_check("index", index.health)
register_health_check("embedding_model", embedding.health)
