"""Lineage: the chain L0 messages → L1 versions → L2 blocks → USER.md entries around one
record, one scene block or one persona entry. Composed from the owners' reads only."""

from __future__ import annotations

from typing import Any

from apps.accounts.models import Profile
from apps.dashboard.actions import cited_messages
from apps.persona import selectors as persona_selectors
from apps.records import selectors as record_selectors
from apps.scenes import selectors as scene_selectors

MAX_RECORDS = 40


def _chain(profile: Profile, records: list[Any], *, blocks: list[Any] | None = None, entries: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The four steps for a set of L1 records (already expanded to their versions)."""
    records = records[:MAX_RECORDS]
    ids = {r.record_id for r in records}
    refs: list[str] = []
    for r in records:
        refs += [ref for ref in (r.source_message_ids or []) if isinstance(ref, str) and ref not in refs]
    messages = cited_messages(profile, refs[:100])
    if blocks is None:
        by_record = scene_selectors.blocks_for_records(profile, list(ids))
        seen: dict[int, Any] = {}
        for found in by_record.values():
            for block in found:
                seen.setdefault(block.pk, block)
        blocks = sorted(seen.values(), key=lambda b: b.filename)
    if entries is None:
        entries = persona_selectors.entries_citing(profile, ids)
    return {"messages": messages, "records": records, "blocks": blocks, "entries": entries}


def record_lineage(profile: Profile, record: Any) -> dict[str, Any]:
    return {"subject": "record", "record": record, **_chain(profile, record_selectors.record_versions(profile, record))}


def block_lineage(profile: Profile, block: Any) -> dict[str, Any]:
    found = record_selectors.records_by_id(
        profile, scene_selectors.block_member_ids(block)[:MAX_RECORDS],
        fields=("record_id", "content", "type", "deleted", "version", "source_message_ids", "created_at"),
    )
    records = sorted(found.values(), key=lambda r: r.created_at)
    return {"subject": "block", "block": block, **_chain(profile, records, blocks=[block])}


def entry_lineage(profile: Profile, entry: dict[str, Any]) -> dict[str, Any]:
    found = record_selectors.records_by_id(
        profile, entry["sources"][:MAX_RECORDS],
        fields=("record_id", "content", "type", "deleted", "version", "source_message_ids", "created_at"),
    )
    records = [found[i] for i in entry["sources"] if i in found]
    missing = [i for i in entry["sources"] if i not in found]
    return {"subject": "entry", "entry": entry, "missing_sources": missing, **_chain(profile, records, entries=[entry])}
