"""Input shapes of the L1 tools (strict: wrong types and unknown fields are invalid_params)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class CommitRecordIn(BaseModel):
    """One item of `l1_commit.records`: a new record, or a tombstone item `{id, deleted: true}`.

    Server-managed fields (`createdAt`, `updatedAt`, `version`, `replacedBy`, `scene_name`
    with a scene_id, `timestamps` in subagent mode) are accepted so a full record can be
    sent back, and recomputed by the server."""

    model_config = ConfigDict(extra="forbid", strict=True)

    id: str | None = Field(None, description="l1_{epochMs}_{4 [a-z0-9]}; server-generated when absent (always in main-agent mode). With deleted=true: the record to tombstone.")
    content: str | None = Field(None, description="The memory, in the dominant language of its source messages.")
    type: str | None = Field(None, description="code: work_fact|work_task|work_method|work_artifact; chat: persona|episodic|instruction.")
    priority: int | None = Field(None, description="0-100 (default 60); -1 only for a chat instruction (strict global rule).")
    scene_id: str | None = Field(None, description="An existing scene-pool id (sc0001…).")
    scene_name: str | None = Field(None, description="Matched against pool names and aliases; never registers a scene.")
    new_scene_name: str | None = Field(None, description="Subagent: register (or reuse by name/alias) a scene; needs new_scene_reason.")
    new_scene_reason: str | None = Field(None, description="One sentence: why this is not the continuation of an existing scene.")
    source_message_ids: list[str] | None = Field(None, description="Message references of the L0 rows that support the record (required in subagent mode).")
    metadata: dict[str, Any] | None = Field(None, description="scope (self|global|unknown), project, projectEvidence [{message_id, path}], mode-specific fields.")
    timestamps: list[str] | None = None
    createdAt: str | None = None
    updatedAt: str | None = None
    version: int | None = None
    sessionKey: str | None = Field(None, description="Subagent: the source session of source_message_ids.")
    sessionId: str | None = None
    cwd: str | None = None
    deleted: bool | None = Field(None, description="true: tombstone the record `id` (a tombstone item).")
    reason: str | None = Field(None, max_length=200, description="Tombstone items only: why (e.g. 'user-forget' for a user's request to forget); kept as metadata.tombstoneReason.")
    taskState: str | None = Field(None, description="work_task only: open|done|dropped.")
    replaces: list[str] | None = Field(None, description="Ids of the records this new record updates or merges.")
    replacedBy: str | None = None
    embedding: list[float] | None = Field(None, description="A queryVector of embed_and_search whose queryText equals content exactly.")
