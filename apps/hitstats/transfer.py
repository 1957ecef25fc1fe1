"""Hit statistics back from a `hit-stats.json` (the export of `RecordHits`, SPEC §1.6)."""

from __future__ import annotations

from typing import Any

from apps.accounts.models import Profile
from apps.hitstats.models import RecordHits
from apps.hitstats.services import _export_after_commit
from apps.scenes.blocks import parse_iso


def hit_stats_problem(record_id: Any, stats: Any) -> str | None:
    if not isinstance(record_id, str) or not record_id or len(record_id) > 64:
        return f"record id {record_id!r} is not an id"
    if not isinstance(stats, dict):
        return f"{record_id}: stats must be an object"
    for key in ("hits", "invalid_hits"):
        value = stats.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            return f"{record_id}: {key} must be a non-negative integer"
    if stats.get("lastHitAt") is not None and parse_iso(stats.get("lastHitAt")) is None:
        return f"{record_id}: lastHitAt must be an ISO 8601 time"
    return None


def hit_stats_restore(*, profile: Profile, records: dict[str, dict[str, Any]]) -> dict[str, int]:
    """Create the per-record statistics the profile lacks (inside the caller's transaction);
    a record that already has statistics keeps them."""
    present = set(RecordHits.objects.filter(profile=profile, record_id__in=list(records)).values_list("record_id", flat=True))
    rows = [
        RecordHits(profile=profile, record_id=record_id, hits=stats.get("hits", 0), invalid_hits=stats.get("invalid_hits", 0),
                   last_hit_at=parse_iso(stats.get("lastHitAt")))
        for record_id, stats in records.items() if record_id not in present
    ]
    RecordHits.objects.bulk_create(rows, batch_size=500)
    if rows:
        _export_after_commit(profile)
    return {"records": len(rows), "skipped": len(records) - len(rows)}
