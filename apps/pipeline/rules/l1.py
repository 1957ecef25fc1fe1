"""Rules driver of l1_extract: L0 → L1 through the same tools the LLM driver calls.

Per batch: read_l0_increment → quality gate → sentence extraction → project scope
(l1_project_get, literal path evidence) → dedup against existing records
(embed_and_search; a 30-day text fallback when the index cannot answer) → scene
attribution (list_l1_scenes) → l1_commit with the batch's nextCursor. Batches repeat
while the shard has more and the run has time.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.utils import timezone

from apps.pipeline.rules.extract import Candidate, extract_from_message
from apps.pipeline.rules.text import (
    absolute_paths,
    dropped_weight,
    lexical_similarity,
    normalize,
    path_within,
    quality_gate,
    sentences,
    tokens,
)
from apps.tools.errors import NotFound, ToolError

# Dedup thresholds: the dense score must be high AND the wording must overlap, so a
# model whose scores run high for unrelated text cannot merge unrelated memories.
# Scores are cosines in the debiased space (docs/retrieval.md): unrelated texts sit near
# 0 there and a reworded update of a memory at about 0.7 (0.93 before debiasing).
SKIP_SCORE, SKIP_LEXICAL = 0.85, 0.8
UPDATE_SCORE, UPDATE_LEXICAL = 0.6, 0.4
UPDATE_MAX_DROPPED = 1.0  # at most one English word (or one Chinese word) of the old record may go
CLOSE_LEXICAL = 0.2  # "finished X" shares fewer words with "need to do X"
SCENE_VOTE_SCORE = 0.6
BATCH_TIME_RESERVE = 20.0  # seconds a batch needs; no new batch starts with less left
EMBED_CHUNK = 50
FALLBACK_DAYS = 30

TOPICS = {
    "work_method": ("工作约定", "conventions"),
    "work_task": ("待办", "tasks"),
    "work_fact": ("决策与事实", "decisions and facts"),
    "work_artifact": ("产物", "artifacts"),
    "persona": ("偏好与个人信息", "profile and preferences"),
    "instruction": ("回复要求", "instructions"),
    "episodic": ("近期经历", "recent events"),
}


@dataclass
class Planned:
    candidate: Candidate
    source_ids: list[str]
    timestamps: list[str]
    action: str = "store"  # store | update | skip
    replaces: list[str] | None = None
    task_state: str | None = None
    scene: dict[str, str] | None = None
    metadata: dict[str, Any] | None = None
    vector: list[float] | None = None  # queryVector of this exact content, reused by l1_commit
    content_override: str | None = None  # an update that keeps the old wording (a task closed)
    project_hint: str = ""  # the session's project when the server will fill it (scene label only)


def message_ref(message: dict) -> str:
    if message.get("messageRef"):
        return str(message["messageRef"])
    if message.get("id"):
        return str(message["id"])
    if message.get("sourceLine") is not None:
        return f"{message.get('sessionKey')}#{message.get('sourceLine')}"
    return f"{message.get('sessionKey')}#{message.get('timestamp')}"


def iso_from_ms(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return datetime.fromtimestamp(value / 1000, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return None


def list_shards(profile, cursor: dict | None = None) -> list[str]:
    """Shards with bytes beyond the cursor (all shards for an empty or legacy cursor).

    Fully consumed shards are left out of l0Files; their offsets stay in the cursor,
    because read_l0_increment carries every offset of the cursor it was given."""
    from apps.accounts.paths import profile_subdir

    l0_dir = profile_subdir(profile, "l0", create=False)
    if not l0_dir.is_dir():
        return []
    offsets = (cursor or {}).get("files")
    shards = sorted(l0_dir.glob("*.jsonl"))
    if not isinstance(offsets, dict):
        return [p.name for p in shards]
    pending = []
    for path in shards:
        try:
            if path.stat().st_size > int(offsets.get(path.name, 0)):
                pending.append(path.name)
        except (OSError, TypeError, ValueError):
            pending.append(path.name)
    return pending


def run(ctx) -> None:
    from apps.conversations.cursors import cursor_get

    profile = ctx.profile
    mode = profile.mode
    cursor_value = cursor_get(profile=profile, kind="l1")
    shards = list_shards(profile, cursor_value)
    if not shards:
        ctx.counts["note"] = "no L0 rows beyond the cursor"
        return
    cursor = json.dumps(cursor_value) if cursor_value else ""
    projects: dict[str, dict] = {}
    batch = 0
    while True:
        batch += 1
        ctx.progress("read", f"batch {batch}: reading L0", force=True)
        increment = ctx.tool("read_l0_increment", {"l0Files": ",".join(shards), "cursor": cursor})
        messages = list(increment.get("messages") or [])
        ctx.add("messagesRead", len(messages))
        next_cursor = json.dumps(increment.get("nextCursor") or {}, ensure_ascii=False)
        if not messages and next_cursor == cursor:
            break
        planned = _plan_batch(ctx, messages, mode, projects)
        records = _records_for_commit(planned, mode)
        ctx.progress("commit", f"batch {batch}: committing {len(records)} items", force=True)
        result = ctx.tool("l1_commit", {"records": records, "cursor": next_cursor, "source": "subagent"})
        _count_commit(ctx, planned, result)
        cursor = next_cursor
        ctx.add("batches")
        if not increment.get("truncated") or ctx.remaining() < BATCH_TIME_RESERVE:
            ctx.counts["backlogRemains"] = bool(increment.get("truncated"))
            break


def _plan_batch(ctx, messages: list[dict], mode: str, projects: dict[str, dict]) -> list[Planned]:
    candidates: list[Candidate] = []
    for message in messages:
        reason = quality_gate(message.get("content"))
        if reason:
            ctx.add("messagesGated")
            ctx.add(f"gated.{reason}")
            continue
        candidates.extend(extract_from_message(message, mode=mode, sentences=sentences(str(message["content"]))))
    ctx.add("candidates", len(candidates))
    planned = _merge_within_batch(candidates)
    for item in planned:
        item.metadata = _scope(ctx, item, mode, projects)
    _dedup(ctx, planned)
    _attribute_scenes(ctx, planned, mode)
    return planned


def _merge_within_batch(candidates: list[Candidate]) -> list[Planned]:
    by_key: dict[tuple[str, str], Planned] = {}
    for cand in candidates:
        key = (normalize(cand.content), str(cand.message.get("sessionKey")))
        ref = message_ref(cand.message)
        stamp = iso_from_ms(cand.message.get("timestamp"))
        if key in by_key:
            item = by_key[key]
            if ref not in item.source_ids:
                item.source_ids.append(ref)
            if stamp and stamp not in item.timestamps:
                item.timestamps.append(stamp)
            continue
        by_key[key] = Planned(candidate=cand, source_ids=[ref], timestamps=[stamp] if stamp else [], task_state=cand.task_state)
    return list(by_key.values())


# --------------------------------------------------------------------------- project scope


def _session_project(ctx, session_key: str, projects: dict[str, dict]) -> dict:
    if session_key not in projects:
        try:
            projects[session_key] = ctx.tool("l1_project_get", {"sessionKey": session_key})
        except ToolError as exc:
            projects[session_key] = {"flag": False, "project": "", "error": exc.message}
            ctx.add("projectLookupFailed")
    return projects[session_key]


def _scope(ctx, item: Planned, mode: str, projects: dict[str, dict]) -> dict[str, Any]:
    cand = item.candidate
    if mode == "chat":
        return {"scope": "global", "project": ""}
    paths = [p for p in absolute_paths(cand.content) if p in str(cand.message.get("content") or "")]
    session_key = str(cand.message.get("sessionKey") or "")
    if paths:
        known = [str(p) for p in (ctx.profile.known_projects or [])]
        session = _session_project(ctx, session_key, projects)
        roots = sorted(known, key=len, reverse=True)
        if session.get("flag") and session.get("project"):
            roots.append(str(session["project"]))
        for root in roots:
            if all(path_within(path, root) for path in paths):
                evidence = [{"message_id": item.source_ids[0], "path": path} for path in paths]
                return {"scope": "self", "project": root, "projectEvidence": evidence}
        return {"scope": "unknown", "project": ""}
    if cand.type == "work_method":
        # Conventions and habits without a path hold in any project.
        return {"scope": "global", "project": ""}
    session = _session_project(ctx, session_key, projects)
    if session.get("flag"):
        item.project_hint = str(session.get("project") or "")
        return {"scope": "self"}  # the server fills the session's project
    return {"scope": "unknown", "project": ""}


# --------------------------------------------------------------------------- dedup


def _dedup(ctx, planned: list[Planned]) -> None:
    if not planned:
        return
    results: dict[int, list[dict]] = {}
    failed: list[int] = []
    for start in range(0, len(planned), EMBED_CHUNK):
        chunk = planned[start : start + EMBED_CHUNK]
        queries = [p.candidate.content for p in chunk]
        try:
            answer = ctx.tool("embed_and_search", {"queries": queries, "topK": 5})
        except ToolError as exc:
            ctx.counts["dedupError"] = exc.message[:300]
            failed.extend(range(start, start + len(chunk)))
            continue
        got = {}
        for entry in answer.get("results") or []:
            idx = entry.get("index")
            if isinstance(idx, int) and 0 <= idx < len(chunk) and entry.get("queryText") == queries[idx] and not entry.get("fallback"):
                got[start + idx] = list(entry.get("candidates") or [])
                if isinstance(entry.get("queryVector"), list):
                    chunk[idx].vector = entry["queryVector"]
        for idx in range(start, start + len(chunk)):
            if idx in got:
                results[idx] = got[idx]
            else:
                failed.append(idx)
    if failed:
        ctx.add("dedupFallback", len(failed))
        fallback = _text_fallback(ctx.profile, [planned[i].candidate.content for i in failed])
        for i, cands in zip(failed, fallback):
            results[i] = cands
    full = _full_records(ctx.profile, {c["record_id"] for cands in results.values() for c in cands if c.get("record_id")})
    claimed: set[str] = set()
    for idx, item in enumerate(planned):
        _decide(item, results.get(idx, []), full, claimed)


def _decide(item: Planned, candidates: list[dict], full: dict[str, Any], claimed: set[str]) -> None:
    cand = item.candidate
    closing = item.task_state in ("done", "dropped")
    for c in sorted(candidates, key=lambda c: c.get("score") or 0, reverse=True):
        record = full.get(str(c.get("record_id")))
        if record is None or record.deleted or record.record_id in claimed:
            continue  # not found, tombstoned or already replaced in this batch: never a target
        score = float(c.get("score") or 0)
        lexical = lexical_similarity(cand.content, record.content)
        if closing and record.type == "work_task" and (record.task_state or "open") == "open":
            # "I finished X" closes the open task X: same task, new state.
            if score >= UPDATE_SCORE and lexical >= CLOSE_LEXICAL:
                _replace(item, record, claimed, content=record.content)
                return
            continue
        adds_nothing = normalize(cand.content) == normalize(record.content) or tokens(cand.content) <= tokens(record.content)
        if adds_nothing and (score >= SKIP_SCORE or lexical >= SKIP_LEXICAL):
            item.action = "skip"
            return
        if (
            score >= UPDATE_SCORE and lexical >= UPDATE_LEXICAL and record.type == cand.type
            and dropped_weight(record.content, cand.content) <= UPDATE_MAX_DROPPED
        ):
            # A refinement or one changed value of the same statement; two changed terms
            # ("PostgreSQL for billing" → "Redis for search") are a different statement.
            _replace(item, record, claimed)
            return
    item.action = "store"


def _replace(item: Planned, record, claimed: set[str], *, content: str | None = None) -> None:
    item.action = "update"
    item.replaces = [record.record_id]
    claimed.add(record.record_id)
    if content is not None:
        item.content_override = content
    old_state = record.task_state or "open"
    if record.type == "work_task" and item.task_state is None and old_state != "open":
        item.task_state = old_state  # a closed task stays closed across an update
    for stamp in record.timestamps or []:
        if stamp not in item.timestamps:
            item.timestamps.append(stamp)


def _full_records(profile, ids: set[str]) -> dict[str, Any]:
    from apps.records.models import L1Record

    if not ids:
        return {}
    return {r.record_id: r for r in L1Record.objects.filter(profile=profile, record_id__in=ids)}


def _text_fallback(profile, queries: list[str]) -> list[list[dict]]:
    """The seed's text fallback: live records of the last 30 days, compared by wording."""
    from apps.records.models import L1Record

    since = timezone.now() - timedelta(days=FALLBACK_DAYS)
    rows = list(
        L1Record.objects.filter(profile=profile, deleted=False, updated_at__gte=since)
        .order_by("-updated_at")
        .values_list("record_id", "content")[:2000]
    )
    row_tokens = [(rid, content, tokens(content)) for rid, content in rows]
    out = []
    for query in queries:
        q = tokens(query)
        scored = sorted(
            ((len(q & t) / len(q | t) if q and t else 0.0, rid, content) for rid, content, t in row_tokens), reverse=True
        )[:5]
        # A lexical score stands in for the dense one: identical wording scores 1.0.
        out.append([{"record_id": rid, "content": content, "score": score} for score, rid, content in scored if score > 0])
    return out


# --------------------------------------------------------------------------- scenes


def scene_label(item: Planned, mode: str) -> str:
    cand = item.candidate
    zh = cand.language == "zh"
    topic = TOPICS.get(cand.type, ("其他", "other"))[0 if zh else 1]
    if mode == "chat":
        owner = "用户" if zh else "user"
    else:
        project = (item.metadata or {}).get("project") or item.project_hint
        owner = os.path.basename(project.replace("\\", "/").rstrip("/")) if project else ("通用" if zh else "general")
    return f"{owner}｜{topic}"


def _attribute_scenes(ctx, planned: list[Planned], mode: str) -> None:
    live = [p for p in planned if p.action != "skip"]
    if not live:
        return
    try:
        pool = ctx.tool("list_l1_scenes", {"limit": 50}).get("scenes") or []
    except ToolError as exc:
        ctx.counts["scenePoolError"] = exc.message[:300]
        pool = []
    by_name = {str(s.get("name")): str(s.get("id")) for s in pool}
    for item in live:
        label = scene_label(item, mode)
        if label in by_name:
            item.scene = {"scene_id": by_name[label]}
        else:
            item.scene = {
                "new_scene_name": label,
                "new_scene_reason": f"no pool scene covers {item.candidate.type} memories of this owner yet",
            }


# --------------------------------------------------------------------------- commit


def _records_for_commit(planned: list[Planned], mode: str) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for item in planned:
        if item.action == "skip":
            continue
        cand = item.candidate
        msg = cand.message
        record: dict[str, Any] = {
            "content": item.content_override or cand.content,
            "type": cand.type,
            "priority": cand.priority,
            "source_message_ids": list(item.source_ids),
            "metadata": dict(item.metadata or {"scope": "unknown", "project": ""}),
            "timestamps": sorted(set(item.timestamps)),
            "sessionKey": str(msg.get("sessionKey") or ""),
            "sessionId": msg.get("sessionId"),
            "cwd": str(msg.get("cwd") or ""),
            **(item.scene or {}),
        }
        if cand.type == "work_task" and item.task_state:
            record["taskState"] = item.task_state
        if item.vector and not item.content_override:
            record["embedding"] = item.vector  # the server reuses it only for identical content
        if item.action == "update" and item.replaces:
            for old in item.replaces:
                records.append({"id": old, "deleted": True})
            record["replaces"] = list(item.replaces)
        records.append(record)
    return records


def _count_commit(ctx, planned: list[Planned], result: dict) -> None:
    ctx.add("recordsStored", sum(1 for p in planned if p.action == "store"))
    ctx.add("recordsUpdated", sum(1 for p in planned if p.action == "update"))
    ctx.add("recordsSkipped", sum(1 for p in planned if p.action == "skip"))
    ctx.add("recordsCommitted", sum(1 for s in result.get("stored") or [] if s))
    ctx.add("tombstoned", len(result.get("tombstoned") or []))
    dropped = (result.get("valueCheck") or {}).get("dropped") or []
    ctx.add("valueCheckDropped", len(dropped))
    for key in ("provenanceMissing", "taskStateDroppedOnReplace", "priorityDefaulted"):
        if result.get(key):
            ctx.add(key, int(result[key]))
    if result.get("sceneWarns"):
        ctx.add("sceneWarns", len(result["sceneWarns"]))
    if result.get("projectWarnings"):
        ctx.add("projectWarnings", len(result["projectWarnings"]))


__all__ = ["NotFound", "message_ref", "run"]
