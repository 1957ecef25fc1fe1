"""`memory_ingest` and `memory_search` (SPEC §3.20): thin shells over `apps.memory.services`."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from apps.conversations.ingest import MAX_KEY_CHARS, MAX_ROWS_PER_CALL
from apps.memory import services
from apps.tools.registry import IntBetween, NonBlank, ToolContext, ToolParams, tool


class IngestMessage(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    role: str = Field(min_length=1, max_length=64, description="user, assistant, tool or system (only user and assistant rows are extracted).")
    content: str = Field(description="The message text.")
    id: str | None = Field(None, min_length=1, max_length=MAX_KEY_CHARS, description="Message id, unique within the session; a row whose id is already stored is not stored again.")
    timestamp: int | None = Field(None, ge=0, lt=2**53, description="Event time, epoch milliseconds.")


class MemoryIngestParams(ToolParams):
    messages: list[IngestMessage] = Field(min_length=1, max_length=MAX_ROWS_PER_CALL, description=f"The conversation rows to remember (1..{MAX_ROWS_PER_CALL}).")
    sessionKey: str | None = Field(None, min_length=1, max_length=MAX_KEY_CHARS, description=f"Conversation key; default: the call context's sessionKey, else {services.DEFAULT_SESSION_KEY!r}.")
    cwd: str | None = Field(None, max_length=4096, description="The agent's working directory; default: the call context's cwd.")
    wait: bool = Field(True, description="Run extraction now and wait for it (at most mcp.ingestWaitSeconds); false: only store the rows, the pipeline extracts them later.")


@tool(
    "memory_ingest",
    params=MemoryIngestParams,
    min_role="agent",
    description=(
        "Remember a conversation: appends the messages to the raw conversation log (L0) and, with wait (the "
        "default), extracts memories from them now and waits for it, so a memory_search right after finds them. "
        "Returns {appended, duplicates, run: {id, status, stored, updated, tombstoned}}, and pending: true with "
        "the run id when extraction took longer than the wait."
    ),
)
def memory_ingest(ctx: ToolContext, params: MemoryIngestParams) -> dict:
    return services.memory_ingest(
        profile=ctx.profile, actor=ctx.actor, messages=[m.model_dump(exclude_none=True) for m in params.messages],
        session_key=params.sessionKey or ctx.session_key or services.DEFAULT_SESSION_KEY,
        cwd=params.cwd if params.cwd is not None else ctx.cwd, wait=params.wait,
        # A transport that can stream (MCP with a progressToken) passes a callback.
        progress=ctx.extra.get("progress"),
    )


class MemorySearchParams(ToolParams):
    query: NonBlank = Field(description="What to look for, in any language (Chinese and English both work).")
    topK: IntBetween(1, 20) = Field(5, description="How many memories at most, 1..recall.maxTopK (20).")  # type: ignore[valid-type]


@tool(
    "memory_search",
    params=MemorySearchParams,
    min_role="agent",
    text_result="text",
    description=(
        "What do you know about X: searches the stored memories and answers in plain text, one memory per line "
        "with its date and type. Says 'No information about this is stored in memory.' when nothing relevant is "
        "stored, and 'A memory about this was removed at the user's request.' when the best match was deleted "
        "because the user asked to forget it. Same budget as recall_l1_records (3 per turn). Returns {text, "
        "recordIds, noRelevantMemory, forgottenMatch}."
    ),
)
def memory_search(ctx: ToolContext, params: MemorySearchParams) -> dict:
    return services.memory_search(
        profile=ctx.profile, query=params.query, top_k=params.topK, session_key=ctx.session_key, turn=ctx.turn, cwd=ctx.cwd,
        actor=ctx.actor,
    )
