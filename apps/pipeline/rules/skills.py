"""Rules driver of skill_review: draft a skill from a tool sequence that keeps succeeding.

Reads the feed increment (read_skill_feed_increment), rebuilds each session's sequence
of successful tool calls (a tool_call whose tool_result is not an error), and looks for
a sequence of 3–5 tools that succeeded in at least two sessions. Each such sequence not
yet covered becomes a draft skill in the `drafts` category (skill_view to check,
skill_manage create), written so a human or the LLM reviewer can refine it. It never
edits or deletes existing skills: judging those needs a model.

The feed has no commit tool, so the run itself stores the feed cursor
(`nextCursorState` of the last batch) when it succeeds; a failed run leaves it.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from typing import Any

from apps.pipeline.rules.text import one_line
from apps.tools.errors import NotFound, ToolError

MIN_SESSIONS = 2
MIN_LEN, MAX_LEN = 3, 5
MAX_DRAFTS_PER_RUN = 2
DRAFT_CATEGORY = "drafts"


def run(ctx) -> None:
    from apps.conversations.cursors import cursor_get

    profile = ctx.profile
    shards = _feed_shards(profile)
    if not shards:
        ctx.counts["note"] = "no skill-feed shards"
        return
    cursor: Any = cursor_get(profile=profile, kind="skill_feed") or ""
    rows: list[dict] = []
    state = None
    while True:
        ctx.progress("read", f"reading the skill feed ({len(rows)} rows so far)", force=True)
        answer = ctx.tool("read_skill_feed_increment", {"feedFiles": ",".join(shards), "cursor": cursor})
        batch = answer.get("messages") or []
        rows.extend(batch)
        state = answer.get("nextCursorState") or state
        if state:
            cursor = dict(state)
        if not answer.get("truncated") or not batch or ctx.remaining() < 20:
            break
    ctx.add("feedRowsRead", len(rows))
    sequences, requests, errors = _session_sequences(rows)
    ctx.add("toolCallsSeen", sum(len(s) for s in sequences.values()))
    drafts = 0
    for seq, sessions in _repeated(sequences):
        if drafts >= MAX_DRAFTS_PER_RUN:
            break
        name = _skill_name(seq)
        try:
            ctx.tool("skill_view", {"name": name})
            ctx.add("draftsAlreadyPresent")
            continue
        except NotFound:
            pass
        content = _draft(name, seq, sessions, requests, errors)
        try:
            ctx.tool("skill_manage", {"action": "create", "name": name, "category": DRAFT_CATEGORY, "content": content})
        except ToolError as exc:
            ctx.add("draftsRejected")
            ctx.counts["lastRejection"] = exc.message[:300]
            continue
        drafts += 1
        ctx.counts.setdefault("skillsCreated", []).append(name)
    ctx.add("drafts", drafts)
    if state:
        _commit_cursor(ctx, state)


def _feed_shards(profile) -> list[str]:
    from apps.accounts.paths import profile_subdir

    feed_dir = profile_subdir(profile, "skill-feed", create=False)
    return sorted(p.name for p in feed_dir.glob("*.jsonl")) if feed_dir.is_dir() else []


def _session_sequences(rows: list[dict]) -> tuple[dict[str, list[str]], dict[str, str], dict[tuple[str, ...], int]]:
    calls: dict[str, list[tuple[str, str]]] = defaultdict(list)
    outcome: dict[str, bool] = {}
    requests: dict[str, str] = {}
    for row in rows:
        session = str(row.get("sessionKey") or "")
        role = row.get("role")
        if role == "user" and session not in requests and str(row.get("content") or "").strip():
            requests[session] = str(row["content"])
        elif role == "tool_call" and row.get("tool_name"):
            calls[session].append((str(row.get("tool_call_id") or ""), str(row["tool_name"])))
        elif role == "tool_result" and row.get("tool_call_id"):
            outcome[str(row["tool_call_id"])] = not bool(row.get("is_error"))
    sequences: dict[str, list[str]] = {}
    failures: dict[tuple[str, ...], int] = defaultdict(int)
    for session, items in calls.items():
        seq: list[str] = []
        for call_id, tool_name in items:
            if outcome.get(call_id) is False:
                failures[(tool_name,)] += 1
                continue
            if outcome.get(call_id) and (not seq or seq[-1] != tool_name):
                seq.append(tool_name)
        sequences[session] = seq
    return sequences, requests, failures


def _repeated(sequences: dict[str, list[str]]) -> list[tuple[tuple[str, ...], list[str]]]:
    seen: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for session, seq in sequences.items():
        for n in range(MIN_LEN, MAX_LEN + 1):
            for i in range(len(seq) - n + 1):
                gram = tuple(seq[i : i + n])
                if len(set(gram)) >= 2:
                    seen[gram].add(session)
    found = [(gram, sorted(s)) for gram, s in seen.items() if len(s) >= MIN_SESSIONS]
    # Longest first, then the most sessions; drop sequences contained in a longer pick.
    found.sort(key=lambda item: (-len(item[0]), -len(item[1]), item[0]))
    picked: list[tuple[tuple[str, ...], list[str]]] = []
    for gram, sessions in found:
        if any(_contains(p, gram) for p, _ in picked):
            continue
        picked.append((gram, sessions))
    return picked


def _contains(longer: tuple[str, ...], shorter: tuple[str, ...]) -> bool:
    n = len(shorter)
    return any(longer[i : i + n] == shorter for i in range(len(longer) - n + 1))


def _skill_name(seq: tuple[str, ...]) -> str:
    parts = [re.sub(r"[^a-z0-9]+", "-", t.lower()).strip("-") or "tool" for t in seq]
    name = "workflow-" + "-".join(parts)
    return name[:64].rstrip("-")


def _draft(name: str, seq: tuple[str, ...], sessions: list[str], requests: dict[str, str], errors: dict) -> str:
    chain = " → ".join(seq)
    description = one_line(
        f"Draft from the skill feed: the tool sequence {chain} succeeded in {len(sessions)} sessions. Review before relying on it.", 1000
    )
    examples = [one_line(requests[s], 160) for s in sessions if s in requests][:3]
    lines = [
        "---",
        f"name: {name}",
        f"description: {json.dumps(description, ensure_ascii=False)}",  # a JSON string is valid YAML
        "version: 0.1.0",
        "tags: [draft, generated-from-feed]",
        "---",
        f"# {chain}",
        "",
        "## When to Use",
        "A request like one of these, which this sequence completed:",
        *[f"- {e}" for e in examples],
        *([] if examples else ["- (no user request was recorded before the calls)"]),
        "",
        "## Steps",
        *[f"{i}. Call `{tool_name}`." for i, tool_name in enumerate(seq, 1)],
        "",
        "## Pitfalls",
        *[f"- `{t[0]}` failed {n} time(s) in the reviewed feed; check its arguments." for t, n in errors.items() if t[0] in seq],
        "- Generated without a model: the steps name the tools, not their arguments.",
        "",
        "## Verification",
        f"- The last call (`{seq[-1]}`) returns without an error.",
        "",
    ]
    return "\n".join(lines)


def _commit_cursor(ctx, state: dict) -> None:
    from django.db import transaction

    from apps.accounts.services import audit_record
    from apps.conversations.cursors import cursor_get, cursor_set

    with transaction.atomic():
        before = cursor_get(profile=ctx.profile, kind="skill_feed")
        cursor_set(profile=ctx.profile, kind="skill_feed", value=dict(state))
        audit_record(
            profile=ctx.profile, actor=f"job:{ctx.kind}:{ctx.run.pk}", tool="skill_review", action="cursor",
            target_type="cursor", target_id="skill_feed", before=before, after=dict(state),
        )
    ctx.counts["cursor"] = state
