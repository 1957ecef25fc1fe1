"""Rules driver of l3_persona: propose USER.md entries from the strongest persona records.

Reads the scene blocks updated after the L3 cursor (read_scene_blocks), takes their
member records of the persona kinds (chat: persona, instruction; code: work_method with
global scope — the user's conventions that hold in every project), ranks them (strict
rules first, then priority, effective hits, recency) and adds each one that the proposal
does not already say, one l3_edit per entry naming the record as its source, until the
budget refuses. Only durable traits (SPEC §5 [2026-12]): a record that reads as a task, a
reminder or a one-off event is left out even when it was typed persona/instruction.
l3_commit is always the last call, with the newest `updated` of the blocks it read.
"""

from __future__ import annotations

from datetime import UTC
from typing import Any

from apps.pipeline.rules.extract import PATTERNS, TODAY_REMINDER_RE
from apps.pipeline.rules.text import lexical_similarity, normalize, one_line
from apps.tools.errors import Conflict, ToolError

ENTRY_MAX_CHARS = 200
MAX_NEW_ENTRIES = 12
SAME_ENTRY_LEXICAL = 0.6


def run(ctx) -> None:
    from apps.conversations.cursors import cursor_get
    from apps.scenes.selectors import live_blocks

    profile = ctx.profile
    cursor = str(cursor_get(profile=profile, kind="l3").get("updated") or "")
    after = _parse(cursor)
    blocks = [b for b in live_blocks(profile=profile) if after is None or b.meta_updated > after]
    ctx.add("blocksConsidered", len(blocks))
    member_ids: list[str] = []
    newest, newest_at = cursor, after
    for start in range(0, len(blocks), 20):
        names = [b.filename for b in blocks[start : start + 20]]
        ctx.progress("read", f"reading {len(names)} scene blocks", force=True)
        answer = ctx.tool("read_scene_blocks", {"filenames": names})
        for block in answer.get("blocks") or []:
            if not block.get("ok"):
                continue
            ctx.add("blocksRead")
            updated = str((block.get("meta") or {}).get("updated") or "")
            updated_at = _parse(updated)
            if updated_at is not None and (newest_at is None or updated_at > newest_at):
                newest, newest_at = updated, updated_at
            member_ids.extend(str(m) for m in block.get("members") or [])
    candidates = _ranked_candidates(profile, member_ids)
    ctx.add("candidates", len(candidates))
    existing = _existing_entries(profile)
    added = 0
    for content, record_id in candidates:
        if added >= MAX_NEW_ENTRIES:
            break
        entry = one_line(content, ENTRY_MAX_CHARS)
        if any(normalize(entry) == normalize(e) or lexical_similarity(entry, e) >= SAME_ENTRY_LEXICAL for e in existing):
            ctx.add("entriesAlreadyPresent")
            continue
        try:
            ctx.tool("l3_edit", {"action": "add", "content": entry, "sources": [record_id]})
        except Conflict as exc:
            ctx.counts["budgetStop"] = exc.message[:300]
            break
        except ToolError as exc:
            ctx.add("entriesRejected")
            ctx.counts["lastRejection"] = exc.message[:300]
            continue
        existing.append(entry)
        added += 1
    ctx.add("entriesAdded", added)
    if newest:
        ctx.progress("commit", "committing the L3 cursor", force=True)
        ctx.tool("l3_commit", {"cursor": newest})
        ctx.counts["cursor"] = newest
    else:
        ctx.counts["note"] = "no scene blocks yet: nothing to commit"


_NOT_DURABLE = [pattern for category, pattern in PATTERNS if category in ("task", "task_done", "episode")] + [TODAY_REMINDER_RE]


def durable(content: str) -> bool:
    """A trait or a standing rule, not a task, a reminder or something that happened once."""
    return not any(p.search(content) for p in _NOT_DURABLE)


def _ranked_candidates(profile, member_ids: list[str]) -> list[tuple[str, str]]:
    from apps.hitstats.selectors import effective_hit_counts
    from apps.records.selectors import live_records_of_types

    if not member_ids:
        return []
    types = ("persona", "instruction") if profile.mode == "chat" else ("work_method",)
    found = live_records_of_types(profile=profile, record_ids=member_ids, types=types)
    rows = [r for r in found if (profile.mode == "chat" or r.scope == "global") and durable(r.content)]
    hits = effective_hit_counts(profile=profile, record_ids=[r.record_id for r in rows])

    def key(r) -> tuple[Any, ...]:
        strict = 1 if r.priority == -1 else 0
        return (strict, r.priority, hits.get(r.record_id, 0), r.updated_at)

    return [(r.content, r.record_id) for r in sorted(rows, key=key, reverse=True)]


def _existing_entries(profile) -> list[str]:
    from apps.persona.selectors import live_entry_texts, proposal_entry_texts

    return live_entry_texts(profile) + proposal_entry_texts(profile)


def _parse(value: str):

    from django.utils.dateparse import parse_datetime

    try:
        parsed = parse_datetime(value.replace("Z", "+00:00")) if value else None
    except ValueError:
        return None
    if parsed is not None and parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed
