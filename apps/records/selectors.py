"""Read-only queries over L1 records (dashboard and tools)."""

from __future__ import annotations

from typing import Any

from apps.accounts.models import Profile
from apps.records.models import L1Change, L1Record
from apps.records.writes import iso_ms
from apps.tools.errors import NotFound


def record_get(*, profile: Profile, record_id: str) -> L1Record:
    record = L1Record.objects.select_related("scene").filter(profile=profile, record_id=record_id).first()
    if record is None:
        raise NotFound(f"no record {record_id!r} in this profile")
    return record


def record_history(*, profile: Profile, record_id: str) -> list[dict[str, Any]]:
    """Every change of one record, oldest first: `{changeId, action, actor, at, state, note}`
    (`state` is the full record after the change; `note` holds evidence, reasons, links)."""
    record = record_get(profile=profile, record_id=record_id)
    return [
        {"changeId": c.pk, "action": c.action, "actor": c.actor, "at": iso_ms(c.created_at), "state": c.state, "note": c.note}
        for c in L1Change.objects.filter(profile=profile, record=record).order_by("id")
    ]


def record_lineage(*, profile: Profile, record_id: str) -> dict[str, Any]:
    """The records this one replaced (directly) and the record that replaced it."""
    record = record_get(profile=profile, record_id=record_id)
    replaced = list(
        L1Record.objects.filter(profile=profile, replaced_by=record_id).order_by("created_at").values_list("record_id", flat=True)
    )
    return {"recordId": record_id, "replaces": replaced, "replacedBy": record.replaced_by or None}


def record_ids_existing(*, profile: Profile, ids: list[str]) -> set[str]:
    """Which of `ids` name L1 records of this profile (live or tombstoned)."""
    return set(L1Record.objects.filter(profile=profile, record_id__in=list(ids)).values_list("record_id", flat=True))
