"""The one way an L1 record changes: save the row, append an `L1Change` with the full state
after, point `last_change` at it, and write the audit event — all inside the caller's
`profile_write_lock` transaction."""

from __future__ import annotations

import secrets
import string
import time
from datetime import UTC, datetime
from typing import Any

from apps.accounts.models import Profile
from apps.accounts.services import audit_record
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
    while True:
        candidate = f"l1_{int(time.time() * 1000)}_{''.join(secrets.choice(_ALPHABET) for _ in range(4))}"
        if candidate not in taken and not L1Record.objects.filter(profile=profile, record_id=candidate).exists():
            taken.add(candidate)
            return candidate


def record_state(record: L1Record) -> dict[str, Any]:
    state = record.as_dict()
    state["source"] = record.source
    return state


def record_save_change(
    *,
    record: L1Record,
    action: str,
    actor: str,
    tool: str,
    before: dict[str, Any] | None,
    note: dict[str, Any] | None = None,
) -> L1Change:
    record.content_key = content_key(record.content)
    record.save()
    after = record_state(record)
    change = L1Change.objects.create(
        profile=record.profile, record=record, action=action, actor=actor, state=after, note=note
    )
    L1Record.objects.filter(pk=record.pk).update(last_change=change.id)
    record.last_change = change.id
    audit_record(
        profile=record.profile, actor=actor, tool=tool, action=f"l1_{action}", target_type="l1_record",
        target_id=record.record_id, before=before, after=after, note=note,
    )
    return change
