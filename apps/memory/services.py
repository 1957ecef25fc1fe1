"""The two verbs generic memory clients expect (SPEC §3.20): "remember this conversation"
and "what do you know about X".

Nothing here owns data: `memory_ingest` is the L0 ingest of the conversations app plus
an `l1_extract` run of the pipeline, `memory_search` is the search app's recall rendered
as text for a model to read. Same validation, budgets, hits, scope rules and audit as the
specialised tools, because these call the same services.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from apps.accounts.config import profile_setting
from apps.accounts.models import Profile
from apps.conversations.cursors import cursor_get
from apps.conversations.ingest import l0_ingest
from apps.pipeline.models import KIND_L1, STATUS_SUCCEEDED
from apps.pipeline.services import job_run_now
from apps.records.selectors import records_forgotten
from apps.search import matching
from apps.search.services import recall_records

logger = logging.getLogger(__name__)

DEFAULT_SESSION_KEY = "memory-ingest"
NOTHING_STORED = "No information about this is stored in memory."
FORGOTTEN = "A memory about this was removed at the user's request."
# Cosine similarity (query vs. passage, the dense side of recall) from which a forgotten
# record counts as being about the query. Measured with `bench/forget_match.py` on the
# default model: questions to the memory they ask about 0.829–0.905 (median 0.894), to
# other memories 0.704–0.850 (p95 0.815); at 0.84, 1 of 10 related pairs falls below and
# 2 of 110 unrelated ones reach it. A wrong notice only says that something was removed.
FORGET_MATCH_MIN_SIMILARITY = 0.84
FORGOTTEN_CANDIDATES = 200


# ------------------------------------------------------------------ memory_ingest
def memory_ingest(
    *, profile: Profile, actor: str, messages: list[dict[str, Any]], session_key: str, cwd: str, wait: bool,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Append `messages` as L0 rows of `session_key`; with `wait`, run `l1_extract` now
    and wait for it at most `mcp.ingestWaitSeconds`, telling `progress` what the run is
    doing whenever that changes."""
    rows = [
        {key: value for key, value in {**message, "sessionKey": session_key, "cwd": cwd}.items() if value is not None}
        for message in messages
    ]
    ingested = l0_ingest(profile=profile, actor=actor, body={"messages": rows})
    appended = ingested.get("rows") or []
    result: dict[str, Any] = {
        "appended": ingested.get("appended", 0),
        # Idempotent ingest reports rows already stored; a service without it has none.
        "duplicates": ingested.get("duplicates") or [],
        "run": None,
    }
    if ingested.get("warnings"):
        result["warnings"] = ingested["warnings"]
    if not wait:
        return result
    wait_seconds = float(profile_setting(profile, "mcp.ingestWaitSeconds"))
    on_poll = None
    if progress is not None:
        progress(f"{result['appended']} rows stored; extracting memories")
        on_poll = _progress_reporter(progress)
    run, finished = job_run_now(profile=profile, kind=KIND_L1, actor=actor, reason="memory_ingest",
                                wait_seconds=wait_seconds, on_poll=on_poll)
    # A run that was already going when these rows arrived may have read before them:
    # then one more run picks them up, within what is left of the same wait.
    if finished and run.status == STATUS_SUCCEEDED and not _extracted(profile, appended):
        run, finished = job_run_now(profile=profile, kind=KIND_L1, actor=actor, reason="memory_ingest",
                                    wait_seconds=wait_seconds / 2, on_poll=on_poll)
    result["run"] = _run_summary(run)
    if not finished:
        result["pending"] = True
    return result


def _progress_reporter(progress: Callable[[str], None]) -> Callable[[Any], None]:
    last: list[str] = []

    def report(run) -> None:
        step = run.progress or {}
        text = f"extraction run {run.pk}: {run.status}"
        if step.get("step") and step.get("step") != run.status:
            text += f", {step['step']}"
        if step.get("done") is not None and step.get("total"):
            text += f" {step['done']}/{step['total']}"
        if step.get("message"):
            text += f" ({step['message']})"
        if not last or last[-1] != text:
            last.append(text)
            progress(text)

    return report


def _extracted(profile: Profile, appended: list[dict[str, Any]]) -> bool:
    """Whether the L1 cursor has moved past every appended row."""
    offsets = cursor_get(profile=profile, kind="l1").get("files") or {}
    return all(int(offsets.get(row["shard"], 0) or 0) > int(row["offset"]) for row in appended)


def _run_summary(run) -> dict[str, Any]:
    counts = run.counts or {}
    summary: dict[str, Any] = {
        "id": run.pk,
        "status": run.status,
        # The rules driver counts these itself; the LLM driver's commits are counted by
        # its tool calls (l1_commit results) under the same keys.
        "stored": int(counts.get("recordsCommitted", counts.get("recordsStored", 0)) or 0),
        "updated": int(counts.get("recordsUpdated", 0) or 0),
        "tombstoned": int(counts.get("tombstoned", 0) or 0),
    }
    if run.error:
        summary["error"] = run.error[:500]
    return summary


# ------------------------------------------------------------------ memory_search
def memory_search(*, profile: Profile, query: str, top_k: int, session_key: str, turn: str, cwd: str,
                  actor: str = "") -> dict[str, Any]:
    """Recall answered as text: one memory per line with its date and type; a plain
    sentence when recall abstains; a notice (never the content) when the best match is
    a record the user asked to forget."""
    recalled = recall_records(profile=profile, query=query, top_k=top_k, session_key=session_key, turn=turn, cwd=cwd,
                              actor=actor)
    records = [] if recalled.get("noRelevantMemory") else list(recalled.get("records") or [])
    forgotten = _best_match_forgotten(profile, query, records)
    lines = [_line(record) for record in records]
    if forgotten:
        text = "\n".join([FORGOTTEN, *lines])
    elif lines:
        text = "\n".join(lines)
    else:
        text = NOTHING_STORED
    result: dict[str, Any] = {
        "text": text,
        "recordIds": [record["recordId"] for record in records],
        "noRelevantMemory": not records,
        "forgottenMatch": forgotten,
    }
    if recalled.get("degraded"):
        result["degraded"] = True
    return result


def _line(record: dict[str, Any]) -> str:
    date = str(record.get("createdAt") or "")[:10] or "----------"
    tag = f"{record['tag']} " if record.get("tag") else ""
    content = " ".join(str(record.get("content") or "").split())
    return f"- {date} [{record.get('type')}] {tag}{content}"


def _best_match_forgotten(profile: Profile, query: str, records: list[dict[str, Any]]) -> bool:
    """Is the closest memory to `query` one that was tombstoned at the user's request?

    Forgotten records are out of the index, so recall never returns them; they are
    compared to the query on the dense side here, against the best live result scored
    the same way. Only the verdict leaves this function, never their content.
    """
    candidates = records_forgotten(profile=profile, limit=FORGOTTEN_CANDIDATES)
    if not candidates:
        return False
    texts = [record.content for record in candidates]
    if records:
        texts.append(str(records[0].get("content") or ""))
    try:
        sims = matching.similarities(query, texts)
    except matching.EmbeddingUnavailable:
        logger.warning("forget check skipped for %s: embedding model unavailable", profile.slug)
        return False
    best_forgotten = max(sims[: len(candidates)])
    if best_forgotten < FORGET_MATCH_MIN_SIMILARITY:
        return False
    return not records or best_forgotten > sims[-1]
