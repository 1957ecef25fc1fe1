"""The one way an L1 record changes: save the row, append an `L1Change` with the full state
after, point `last_change` at it, and write the audit event — all inside the caller's
`profile_write_lock` transaction. `record_save_changes` does it for several records at
once (a commit's batch) in a fixed number of statements, the changes in the given order."""

from __future__ import annotations

import secrets
import string
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import connection

from apps.accounts.models import Profile
from apps.accounts.services import audit_records
from apps.records.models import L1Change, L1Record
from apps.records.normalize import content_key

_ALPHABET = string.ascii_lowercase + string.digits


def iso_ms(value: datetime) -> str:
    """ISO 8601 in UTC with milliseconds and `Z` (the form of L1 `timestamps`)."""
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def epoch_ms_to_iso(value: Any) -> str | None:
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    try:
        return iso_ms(datetime.fromtimestamp(value / 1000, tz=UTC))
    except (OverflowError, OSError, ValueError):
        return None


def new_record_id(profile: Profile, taken: set[str]) -> str:
    """`l1_{epochMs}_{4 random [a-z0-9]}`, unique within the profile and `taken`."""
    return new_record_ids(profile, taken, 1)[0]


def new_record_ids(profile: Profile, taken: set[str], count: int) -> list[str]:
    """`count` new ids (as `new_record_id`), checked against the profile in one query."""
    out: list[str] = []
    while len(out) < count:
        now = int(time.time() * 1000)
        batch: list[str] = []
        while len(out) + len(batch) < count:
            candidate = f"l1_{now}_{''.join(secrets.choice(_ALPHABET) for _ in range(4))}"
            if candidate not in taken and candidate not in batch:
                batch.append(candidate)
        clash = set(L1Record.objects.filter(profile=profile, record_id__in=batch).values_list("record_id", flat=True))
        for candidate in batch:
            if candidate not in clash:
                taken.add(candidate)
                out.append(candidate)
    return out


def record_state(record: L1Record) -> dict[str, Any]:
    state = record.as_dict()
    state["source"] = record.source
    return state


@dataclass
class RecordChange:
    record: L1Record
    action: str
    before: dict[str, Any] | None = None
    note: dict[str, Any] | None = None


def record_save_change(
    *,
    record: L1Record,
    action: str,
    actor: str,
    tool: str,
    before: dict[str, Any] | None,
    note: dict[str, Any] | None = None,
) -> L1Change:
    return record_save_changes(changes=[RecordChange(record, action, before, note)], actor=actor, tool=tool)[0]


def record_save_changes(*, changes: list[RecordChange], actor: str, tool: str) -> list[L1Change]:
    """Save each record (new ones in one insert), append their changes in the given order
    (one insert: the change ids follow that order), point each record's `last_change` at
    its change and write the audit events (one insert each). A record appears once."""
    if not changes:
        return []
    for c in changes:
        c.record.content_key = content_key(c.record.content)
    bulk = len(changes) > 1 and connection.features.can_return_rows_from_bulk_insert  # ids come back
    fresh = [c.record for c in changes if c.record.pk is None]
    if bulk and fresh:
        L1Record.objects.bulk_create(fresh)
    inserted = {id(r) for r in fresh} if bulk else set()
    for c in changes:
        if id(c.record) not in inserted:
            c.record.save()
    states = [record_state(c.record) for c in changes]
    made = [L1Change(profile_id=c.record.profile_id, record=c.record, action=c.action, actor=actor, state=after, note=c.note)
            for c, after in zip(changes, states)]
    if bulk:
        rows = L1Change.objects.bulk_create(made)
    else:
        for row in made:
            row.save()
        rows = made
    for c, row in zip(changes, rows):
        c.record.last_change = row.id
    if len(changes) == 1:
        L1Record.objects.filter(pk=changes[0].record.pk).update(last_change=rows[0].id)
    else:
        L1Record.objects.bulk_update([c.record for c in changes], ["last_change"])
    audit_records(profile=changes[0].record.profile, actor=actor, tool=tool, events=[
        {"action": f"l1_{c.action}", "target_type": "l1_record", "target_id": c.record.record_id, "before": c.before,
         "after": after, "note": c.note}
        for c, after in zip(changes, states)
    ])
    return rows
