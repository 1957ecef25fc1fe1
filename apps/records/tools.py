"""L1 tools (SPEC §3.1–3.6): thin shells over `apps.records.services`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from apps.records.schemas import CommitRecordIn
from apps.records.services import (
    project_for_session,
    record_fix,
    record_set_task_state,
    records_commit,
    rules_load,
    scenes_for_session,
)
from apps.tools.registry import ToolContext, ToolParams, tool


class LoadMemoryRulesParams(ToolParams):
    mode: Literal["once", "always"] = Field("once", description="once: cleared after the session's next successful l1_commit; always: kept for the session.")


@tool(
    "load_memory_rules",
    params=LoadMemoryRulesParams,
    min_role="agent",
    description=(
        "Load the L1 record contract (what to record, the type enum of this profile's mode, priority scales, "
        "scope rules, the l1_commit call shape with an example) into context. Call this when you decide to "
        "record something, BEFORE calling l1_commit. mode='once' (default) is cleared after one l1_commit; "
        "mode='always' stays for this session. Returns {rules, mode, expiresAfterCommit}."
    ),
)
def load_memory_rules(ctx: ToolContext, params: LoadMemoryRulesParams) -> dict[str, Any]:
    return rules_load(profile=ctx.profile, session_key=ctx.session_key, mode=params.mode)


class L1CommitParams(ToolParams):
    records: list[CommitRecordIn] = Field(..., description="New records, and tombstone items {id, deleted: true}.")
    cursor: str | dict[str, Any] | None = Field(None, description="Subagent mode (required): the nextCursor of read_l0_increment, JSON-serialized v2 cursor.")
    source: Literal["subagent", "main-agent"] = Field("subagent", description="subagent (worker tokens: the L1 extractor) or main-agent (an agent recording mid-session).")


@tool(
    "l1_commit",
    params=L1CommitParams,
    min_role="agent",
    description=(
        "Commit L1 memory records in one transaction. source='subagent' (worker tokens; the default): the "
        "l1-extractor after extraction/dedup; requires records + cursor (the serialized v2 nextCursor of "
        "read_l0_increment), which advances only if the commit succeeds; each record needs source_message_ids "
        "and attributes its scene by scene_id, or new_scene_name + new_scene_reason, or nothing (unclassified). "
        "source='main-agent': records need only {content, type, priority?}; id, timestamps, sessionKey, "
        "sessionId, cwd come from the call context; scene_id from list_l1_scenes is honoured, scene_name is "
        "matched by name/alias but never registered, else main-agent-live. Replacements: {id, deleted: true} "
        "tombstone items plus a new record with replaces: [old ids]. Project: metadata.scope self|global|unknown; "
        "self with metadata.project needs metadata.projectEvidence [{message_id, path}] verified against L0. "
        "Returns {success, stored (ids in input order; null for a dropped record or a tombstone item), "
        "tombstoned, cursorCommitted, valueCheck, priorityDefaulted, provenanceMissing, overRecallBudget, "
        "taskStateIgnored, taskStateDroppedOnReplace, sceneWarns, projectWarnings, rulesLoaded, warnings}."
    ),
)
def l1_commit(ctx: ToolContext, params: L1CommitParams) -> dict[str, Any]:
    return records_commit(
        profile=ctx.profile, records=params.records, cursor=params.cursor, source=params.source, role=ctx.role,
        actor=ctx.actor, session_key=ctx.session_key, session_id=ctx.session_id, cwd=ctx.cwd,
    )


class ListL1ScenesParams(ToolParams):
    limit: int | None = Field(None, ge=1, le=200, description="At most this many scenes (default: the scenePool.listLimit setting, 50).")


@tool(
    "list_l1_scenes",
    params=ListL1ScenesParams,
    min_role="agent",
    description=(
        "List the L1 scene pool so a record can be attributed to an existing scene by id. Call this BEFORE "
        "l1_commit when recording: pick the scene_id whose topic matches. If nothing fits, omit the id and pass "
        "a stable scene_name of the form {project}｜{topic}. Read-only. Returns {scenes: [{id, name, cwd, "
        "lastUsedAt, useCount}], returned, note}; same-project scenes first, then most recent. Merged-away "
        "scenes and scenes unused for over 60 days are absent. cwd is the session workbench, never the project."
    ),
)
def list_l1_scenes(ctx: ToolContext, params: ListL1ScenesParams) -> dict[str, Any]:
    return scenes_for_session(profile=ctx.profile, limit=params.limit, session_key=ctx.session_key, cwd=ctx.cwd)


class L1ProjectGetParams(ToolParams):
    sessionKey: str = Field(..., min_length=1, max_length=512, description="The L0 sessionKey of the messages (as the L0 ingest accepts it: at most 512 characters).")


@tool(
    "l1_project_get",
    params=L1ProjectGetParams,
    min_role="worker",
    description=(
        "Look up a session's candidate project from its L0 rows. Query once per distinct L0 sessionKey. Returns "
        "{project, flag, confidence, decidedBy (known-projects|path-majority|cwd|none), note?}. Only flag=true "
        "makes the candidate usable; confidence is the share of path mentions under the winning root "
        "(evidence concentration, not a probability)."
    ),
)
def l1_project_get(ctx: ToolContext, params: L1ProjectGetParams) -> dict[str, Any]:
    return project_for_session(profile=ctx.profile, session_key=params.sessionKey)


class L1FixParams(ToolParams):
    recordId: str = Field(..., min_length=1, max_length=64)
    action: Literal["rewrite", "tombstone"] = "rewrite"
    newContent: str | None = Field(None, description="Required for rewrite.")
    evidence: str = Field(..., description="Why the record is wrong (at least l1.fixMinEvidenceChars characters).")
    reason: str | None = None
    priority: int | None = Field(None, ge=-1, le=100, description="Optional reassessment for rewrite.")
    force: bool = Field(False, description="Admin only: override the high-value protection.")


@tool(
    "l1_fix",
    params=L1FixParams,
    min_role="agent",
    description=(
        "Fix or remove an L1 record found to be wrong. rewrite = a new record (new id, version+1, same scene, "
        "sources, timestamps, metadata) and the old one tombstoned; tombstone = mark deleted. Guards in order: "
        "the record exists and is live (not_found); evidence of at least 20 characters; one fix per record per "
        "24 h (conflict); high-value records (hits >= 5 or a scene-block member) are refused (conflict) unless "
        "an admin passes force=true. An audit annotation is appended to the record's history. Returns "
        "{success, action, recordId, newRecordId?, audit}."
    ),
)
def l1_fix(ctx: ToolContext, params: L1FixParams) -> dict[str, Any]:
    return record_fix(
        profile=ctx.profile, record_id=params.recordId, action=params.action, evidence=params.evidence,
        actor=ctx.actor, new_content=params.newContent, reason=params.reason, priority=params.priority,
        force=params.force, is_admin=ctx.is_admin,
    )


class L1TaskStateParams(ToolParams):
    ids: list[str] = Field(..., min_length=1, max_length=200)
    state: Literal["open", "done", "dropped"]
    reason: str | None = Field(None, description="Short note kept in metadata.taskStateChange.")


@tool(
    "l1_task_state",
    params=L1TaskStateParams,
    min_role="agent",
    description=(
        "Set the lifecycle state of work_task records: done (finished), dropped (abandoned), open (reopen). "
        "Edits in place (id, content, vector unchanged); idempotent. Per-id failures (unknown id, tombstoned, "
        "not a work_task) are reported while the others apply: {applied, unchanged, failed: [{id, reason}]}. "
        "The whole call fails only when the profile's write lock stays busy (locked) — retry then."
    ),
)
def l1_task_state(ctx: ToolContext, params: L1TaskStateParams) -> dict[str, Any]:
    return record_set_task_state(
        profile=ctx.profile, ids=params.ids, state=params.state, reason=params.reason, actor=ctx.actor
    )
