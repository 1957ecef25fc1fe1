"""L1 in and out of the SPEC §7 layout: records with their whole change history.

An export row is a record's newest state (`as_dict()` plus `source`); the history is every
`L1Change` of the profile in change order. Change ids are global across profiles in the
database, so the export numbers them 1..N per profile (`seq`); the L2 cursor is written in
the same numbering and mapped back on import. Import writes rows as they are — it is a
restore, not a commit: no value check, no provenance check, no re-attribution.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from django.utils import timezone

from apps.accounts.models import Profile
from apps.accounts.services import audit_record
from apps.records.models import ALL_TYPES, TASK_STATES, L1Change, L1Record
from apps.records.normalize import content_key
from apps.records.writes import record_state
from apps.scenes.blocks import parse_iso
from apps.scenes.models import SceneEntry

RECORD_ID_RE = re.compile(r"^[A-Za-z0-9_\-.:]{1,64}$")
CHANGE_ACTIONS_IMPORTED = "import"


def records_export(*, profile: Profile) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(rows, changes): every record at its newest state in creation order, and every change
    in change order with its per-profile ordinal `seq`."""
    rows = [
        record_state(r)
        for r in L1Record.objects.filter(profile=profile).select_related("scene").order_by("created_at", "record_id")
    ]
    changes = []
    for seq, change in enumerate(
        L1Change.objects.filter(profile=profile).select_related("record").order_by("id").iterator(), start=1
    ):
        changes.append({
            "seq": seq,
            "recordId": change.record.record_id,
            "action": change.action,
            "actor": change.actor,
            "createdAt": _iso(change.created_at),
            "state": change.state,
            "note": change.note,
        })
    return rows, changes


def change_ordinal(*, profile: Profile, change_id: int) -> int:
    """The per-profile ordinal of a change id (how many changes of the profile are ≤ it)."""
    return L1Change.objects.filter(profile=profile, id__lte=change_id).count()


def change_id_at(*, profile: Profile, ordinal: int) -> int:
    """The change id of the ordinal-th change of the profile (0 → 0; past the end → the newest)."""
    if ordinal <= 0:
        return 0
    ids = list(L1Change.objects.filter(profile=profile).order_by("id").values_list("id", flat=True)[ordinal - 1:ordinal])
    if ids:
        return ids[0]
    return L1Change.objects.filter(profile=profile).order_by("-id").values_list("id", flat=True).first() or 0


def newest_change_id(*, profile: Profile) -> int:
    return L1Change.objects.filter(profile=profile).order_by("-id").values_list("id", flat=True).first() or 0


def record_row_problem(row: Any) -> str | None:
    """Why `row` cannot be restored as an L1 record, or None. Types are checked against
    every known type; the caller maps them to the profile's mode first."""
    if not isinstance(row, dict):
        return "an L1 row is a JSON object"
    record_id = row.get("id")
    if not isinstance(record_id, str) or not RECORD_ID_RE.match(record_id):
        return f"id must be a record id of at most 64 letters, digits, '_', '-', got {record_id!r}"
    if not isinstance(row.get("content"), str) or not row["content"].strip():
        return f"{record_id}: content must be non-empty text"
    if "\x00" in row["content"]:
        return f"{record_id}: content holds a NUL character"
    if row.get("type") not in ALL_TYPES:
        return f"{record_id}: type {row.get('type')!r} is not one of {', '.join(ALL_TYPES)}"
    priority = row.get("priority", 60)
    if isinstance(priority, bool) or not isinstance(priority, int) or not -1 <= priority <= 100:
        return f"{record_id}: priority must be an integer from -1 to 100"
    for key in ("createdAt", "updatedAt"):
        if row.get(key) is not None and parse_iso(row.get(key)) is None:
            return f"{record_id}: {key} must be an ISO 8601 time, got {row.get(key)!r}"
    version = row.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        return f"{record_id}: version must be a positive integer"
    for key in ("source_message_ids", "timestamps"):
        if not isinstance(row.get(key, []), list):
            return f"{record_id}: {key} must be a list"
    if not isinstance(row.get("metadata", {}), dict):
        return f"{record_id}: metadata must be an object"
    if not isinstance(row.get("deleted", False), bool):
        return f"{record_id}: deleted must be true or false"
    state = row.get("taskState")
    if state is not None and state not in TASK_STATES:
        return f"{record_id}: taskState must be one of {', '.join(TASK_STATES)}"
    return None


def records_import(
    *,
    profile: Profile,
    actor: str,
    rows: list[dict[str, Any]],
    changes: list[dict[str, Any]] | None,
    scenes: dict[str, SceneEntry],
) -> dict[str, Any]:
    """Restore rows (already checked with `record_row_problem`) inside the caller's
    transaction. Ids already in the profile are skipped. With `changes`, each new record
    gets its history back in the original order; without, one `import` change holds the
    row. Returns counts and `seqMap` (exported seq → new change id) for cursor mapping."""
    from apps.search.outbox import enqueue_index_op

    present = set(L1Record.objects.filter(profile=profile).values_list("record_id", flat=True))
    now = timezone.now()
    fresh = [r for r in rows if r["id"] not in present]
    fresh_ids = {r["id"] for r in fresh}
    by_name = {e.name: e for e in scenes.values()}
    objects = []
    for row in fresh:
        scene = scenes.get(row.get("scene_id") or "") or by_name.get(row.get("scene_name") or "")
        created = parse_iso(row.get("createdAt")) or now
        objects.append(L1Record(
            profile=profile,
            record_id=row["id"],
            content=row["content"],
            type=row["type"],
            priority=row.get("priority", 60),
            scene=scene,
            scene_name=row.get("scene_name") or (scene.name if scene else ""),
            source_message_ids=list(row.get("source_message_ids") or []),
            metadata=dict(row.get("metadata") or {}),
            timestamps=list(row.get("timestamps") or []),
            created_at=created,
            updated_at=parse_iso(row.get("updatedAt")) or created,
            version=row.get("version", 1),
            session_key=row.get("sessionKey") or "",
            session_id=row.get("sessionId") or "",
            cwd=row.get("cwd") or "",
            deleted=bool(row.get("deleted", False)),
            task_state=(row.get("taskState") or "open") if row["type"] == "work_task" else None,
            replaced_by=row.get("replacedBy") or "",
            source=row.get("source") or "import",
            content_key=content_key(row["content"]),
        ))
    L1Record.objects.bulk_create(objects, batch_size=500)
    pk_of = dict(L1Record.objects.filter(profile=profile, record_id__in=fresh_ids).values_list("record_id", "pk"))
    history = [c for c in (changes or []) if c.get("recordId") in fresh_ids]
    covered = {c["recordId"] for c in history}
    pending: list[tuple[int | None, datetime, L1Change]] = []
    for change in history:
        pending.append((change.get("seq"), parse_iso(change.get("createdAt")) or now, L1Change(
            profile=profile, record_id=pk_of[change["recordId"]], action=str(change.get("action") or "import")[:32],
            actor=str(change.get("actor") or actor)[:200], state=change.get("state") or {}, note=change.get("note"),
        )))
    by_id = {o.record_id: o for o in objects}
    for record in objects:
        record.pk = pk_of[record.record_id]
    for record_id in sorted(fresh_ids - covered, key=lambda i: (by_id[i].created_at, i)):
        record = by_id[record_id]
        pending.append((None, record.updated_at, L1Change(
            profile=profile, record_id=record.pk, action=CHANGE_ACTIONS_IMPORTED, actor=actor, state=record_state(record),
        )))
    new_changes = L1Change.objects.bulk_create([p[2] for p in pending], batch_size=500)
    if new_changes and new_changes[0].pk is None:  # a backend that does not return ids from bulk inserts
        new_changes = list(L1Change.objects.filter(profile=profile, record_id__in=pk_of.values()).order_by("id"))
    seq_map: dict[int, int] = {}
    last: dict[int, int] = {}
    for (seq, at, _), stored_change in zip(pending, new_changes, strict=True):
        stored_change.created_at = at  # auto_now_add set it to now; the history keeps its own times
        if seq is not None:
            seq_map[int(seq)] = stored_change.pk
        last[stored_change.record_id] = max(last.get(stored_change.record_id, 0), stored_change.pk)
    L1Change.objects.bulk_update(new_changes, ["created_at"], batch_size=500)
    for record in objects:
        record.last_change = last.get(record.pk, 0)
    L1Record.objects.bulk_update(objects, ["last_change"], batch_size=500)
    for record in objects:
        if not record.deleted:
            enqueue_index_op(profile=profile, record_id=record.record_id, op="upsert")
    if objects:
        audit_record(profile=profile, actor=actor, tool="import", action="l1_import", target_type="l1_record", target_id="*",
                     before=None, after=None, note={"records": len(objects), "changes": len(new_changes), "skipped": len(rows) - len(fresh)})
    return {
        "records": len(objects),
        "tombstones": sum(1 for o in objects if o.deleted),
        "changes": len(new_changes),
        "skipped": len(rows) - len(fresh),
        "seqMap": seq_map,
    }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None
