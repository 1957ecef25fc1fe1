"""L1 record services: commit, fix, task state, restore, scene listing, project lookup.

Tools (`apps/records/tools.py`) and the dashboard call these; every write holds the
profile write lock and leaves an `L1Change` and an `AuditEvent` per changed record.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db.models import Max
from django.utils import timezone

from apps.accounts.config import profile_setting
from apps.accounts.locks import profile_write_lock
from apps.accounts.models import Profile
from apps.hitstats.models import RecordHits
from apps.records.commit import content_problem, records_commit
from apps.records.memory_rules import rules_load
from apps.records.models import L1Change, L1Record
from apps.records.normalize import content_key, normalize_path, refuse_nul
from apps.records.project import known_project_root, session_project
from apps.records.writes import iso_ms, new_record_id, record_save_change, record_state
from apps.scenes.models import SceneBlockMember
from apps.scenes.pool import scene_list, scene_resolve
from apps.tools.errors import Conflict, Forbidden, NotFound, invalid_field

__all__ = [
    "fix_guard_status",
    "project_for_session",
    "record_fix",
    "record_restore_version",
    "record_set_task_state",
    "records_commit",
    "rules_load",
    "scenes_for_session",
]

FIX_ACTIONS = ("rewrite", "tombstone")
MAX_REASON_CHARS = 2000
MAX_TASK_IDS = 200


def _live_record(profile: Profile, record_id: str) -> L1Record:
    record = L1Record.objects.select_for_update(of=("self",)).select_related("scene").filter(profile=profile, record_id=record_id).first()
    if record is None:
        raise NotFound(f"no record {record_id!r} in this profile", details={"recordId": record_id})
    if record.deleted:
        raise NotFound(f"record {record_id!r} is tombstoned", details={"recordId": record_id, "deleted": True})
    return record


def _last_fix_at(profile: Profile, record_id: str) -> datetime | None:
    """When this record id was last fixed. The change that created a rewrite's new record
    (note `rewrittenFrom`) is not a fix of that id: the debounce counts one record id only
    (SPEC §3.5), so a second correction of the same fact in a day applies to the new record."""
    # By the record's key, then its own changes (the change table's record index): ordering
    # the profile's changes by id made SQLite walk the whole (profile, id) index instead.
    record_pk = L1Record.objects.filter(profile=profile, record_id=record_id).values_list("pk", flat=True).first()
    if record_pk is None:
        return None
    fixes = L1Change.objects.filter(record_id=record_pk, action="fix").exclude(note__has_key="rewrittenFrom")
    last: datetime | None = fixes.aggregate(last=Max("created_at"))["last"]
    return last


def _is_scene_member(profile: Profile, record_id: str) -> bool:
    return SceneBlockMember.objects.filter(profile=profile, record_id=record_id, block__removed=False).exists()


def _hit_count(profile: Profile, record_id: str) -> int:
    return RecordHits.objects.filter(profile=profile, record_id=record_id).values_list("hits", flat=True).first() or 0


def fix_guard_status(*, profile: Profile, record_id: str, is_admin: bool) -> dict[str, Any]:
    """Which `record_fix` guard would refuse a fix of this record now, before anything is
    typed (SPEC §3.5: the record page shows it), and whether `force` lifts it.

    Reads the same helpers and settings `record_fix` checks, in its order: live, debounce,
    high value. The evidence length depends on what will be typed and is only named.
    `{guard: None | "tombstoned" | "debounce" | "high_value", forceLifts, canForce,
    hits, highValueHits, sceneBlocks, lastFixAt, fixableAt, minEvidence}`."""
    from apps.scenes.models import SceneBlock

    record = L1Record.objects.filter(profile=profile, record_id=record_id).only("deleted").first()
    if record is None:
        raise NotFound(f"no record {record_id!r} in this profile", details={"recordId": record_id})
    debounce_hours = float(profile_setting(profile, "l1.fixDebounceHours"))
    high_value_hits = int(profile_setting(profile, "l1.fixHighValueHits"))
    hits = _hit_count(profile, record_id)
    blocks = list(
        SceneBlock.objects.filter(profile=profile, removed=False, member_rows__record_id=record_id)
        .order_by("filename").values_list("filename", flat=True).distinct()
    ) if _is_scene_member(profile, record_id) else []
    last_fix = _last_fix_at(profile, record_id)
    fixable_at = last_fix + timedelta(hours=debounce_hours) if last_fix is not None else None
    if record.deleted:
        guard = "tombstoned"
    elif fixable_at is not None and timezone.now() < fixable_at:
        guard = "debounce"
    elif hits >= high_value_hits or blocks:
        guard = "high_value"
    else:
        guard = None
    force_lifts = guard == "high_value"
    return {
        "guard": guard, "forceLifts": force_lifts, "canForce": force_lifts and is_admin,
        "hits": hits, "highValueHits": high_value_hits, "sceneBlocks": blocks,
        "lastFixAt": iso_ms(last_fix) if last_fix else None,
        "fixableAt": iso_ms(fixable_at) if fixable_at and guard == "debounce" else None,
        "minEvidence": int(profile_setting(profile, "l1.fixMinEvidenceChars")),
    }


def record_fix(
    *,
    profile: Profile,
    record_id: str,
    action: str,
    evidence: str,
    actor: str,
    new_content: str | None = None,
    reason: str | None = None,
    priority: int | None = None,
    force: bool = False,
    is_admin: bool = False,
    tool: str = "l1_fix",
) -> dict[str, Any]:
    """SPEC §3.5. Guards in order: exists and live; evidence length; debounce; high value
    (unless an admin forces)."""
    if action not in FIX_ACTIONS:
        raise invalid_field("action", "must be 'rewrite' or 'tombstone'")
    refuse_nul({"recordId": record_id, "newContent": new_content, "evidence": evidence, "reason": reason})
    if force and not is_admin:
        raise Forbidden("force is only for an admin (the dashboard's force action)")
    if action == "rewrite":
        if new_content is None or not new_content.strip():
            raise invalid_field("newContent", "required for action 'rewrite'")
        problem = content_problem(new_content)
        if problem:
            raise invalid_field("newContent", f"would be dropped by the value check ({problem})")
    elif new_content is not None:
        raise invalid_field("newContent", "only with action 'rewrite'")
    elif priority is not None:
        raise invalid_field("priority", "only with action 'rewrite'")
    if reason is not None and len(reason) > MAX_REASON_CHARS:
        raise invalid_field("reason", f"at most {MAX_REASON_CHARS} characters")
    min_evidence = int(profile_setting(profile, "l1.fixMinEvidenceChars"))
    debounce_hours = float(profile_setting(profile, "l1.fixDebounceHours"))
    high_value_hits = int(profile_setting(profile, "l1.fixHighValueHits"))

    from apps.search.outbox import enqueue_index_op

    with profile_write_lock(profile):
        record = _live_record(profile, record_id)
        if len((evidence or "").strip()) < min_evidence:
            raise invalid_field("evidence", f"at least {min_evidence} characters of evidence are required")
        now = timezone.now()
        last_fix = _last_fix_at(profile, record_id)
        if last_fix is not None and now - last_fix < timedelta(hours=debounce_hours):
            raise Conflict(
                f"record {record_id!r} was fixed at {iso_ms(last_fix)}; one fix per {debounce_hours:g} h",
                details={"recordId": record_id, "lastFixAt": iso_ms(last_fix), "debounceHours": debounce_hours},
            )
        hits = _hit_count(profile, record_id)
        member = _is_scene_member(profile, record_id)
        if (hits >= high_value_hits or member) and not force:
            why = f"{hits} hits (≥{high_value_hits})" if hits >= high_value_hits else "a member of a scene block"
            raise Conflict(
                f"record {record_id!r} is high-value ({why}); only an admin can force this fix",
                details={"recordId": record_id, "hits": hits, "sceneMember": member},
            )
        if priority is not None:
            allowed_minus_one = profile.mode == "chat" and record.type == "instruction"
            if not (0 <= priority <= 100 or (priority == -1 and allowed_minus_one)):
                raise invalid_field("priority", "must be 0-100 (-1 only for a chat instruction)")
        audit = {
            "by": actor, "at": iso_ms(now), "action": action, "evidence": evidence.strip(),
            "reason": (reason or "").strip() or None, "forced": bool(force),
        }
        new_id = None
        before = record_state(record)
        if action == "rewrite":
            assert new_content is not None  # a rewrite without new content was refused above
            if content_key(new_content) == record.content_key:
                raise invalid_field("newContent", "is the same as the current content")
            duplicate = (
                L1Record.objects.filter(profile=profile, deleted=False, content_key=content_key(new_content))
                .exclude(pk=record.pk).values_list("record_id", flat=True).first()
            )
            if duplicate:
                raise Conflict(f"newContent duplicates live record {duplicate!r}; tombstone this record instead", details={"duplicateOf": duplicate})
            new_id = new_record_id(profile, set())
            # "Same scene": the one the old record's scene answers to now (a merged-away
            # scene answers with its survivor, SPEC §1.3).
            scene = scene_resolve(profile=profile, scene_id=record.scene.scene_id) if record.scene else None
            replacement = L1Record(
                profile=profile, record_id=new_id, content=new_content.strip(), type=record.type,
                priority=priority if priority is not None else record.priority,
                scene=scene, scene_name=scene.name if scene else record.scene_name,
                source_message_ids=list(record.source_message_ids or []), metadata=dict(record.metadata or {}),
                timestamps=list(record.timestamps or []), created_at=now, updated_at=now, version=record.version + 1,
                session_key=record.session_key, session_id=record.session_id, cwd=record.cwd,
                deleted=False, task_state=record.task_state, source=record.source,
            )
            # Recorded as a fix (the audit belongs to it) but not counted by the debounce of the new id.
            record_save_change(record=replacement, action="fix", actor=actor, tool=tool, before=None,
                               note={"audit": audit, "rewrittenFrom": record_id})
            enqueue_index_op(profile=profile, record_id=new_id, op="upsert")
            record.replaced_by = new_id
            audit["newRecordId"] = new_id
        record.deleted = True
        record.updated_at = now
        record_save_change(record=record, action="fix", actor=actor, tool=tool, before=before, note={"audit": audit})
        enqueue_index_op(profile=profile, record_id=record_id, op="delete")
    result: dict[str, Any] = {"success": True, "action": action, "recordId": record_id, "audit": audit}
    if new_id:
        result["newRecordId"] = new_id
    return result


def record_set_task_state(
    *, profile: Profile, ids: list[str], state: str, actor: str, reason: str | None = None, tool: str = "l1_task_state"
) -> dict[str, Any]:
    """SPEC §3.6: in place, idempotent, per-id failures reported while the others apply."""
    if state not in ("open", "done", "dropped"):
        raise invalid_field("state", "must be open, done or dropped")
    refuse_nul({"ids": list(ids), "reason": reason})
    if not ids:
        raise invalid_field("ids", "at least one record id")
    if len(ids) > MAX_TASK_IDS:
        raise invalid_field("ids", f"at most {MAX_TASK_IDS} ids per call")
    if reason is not None and len(reason) > MAX_REASON_CHARS:
        raise invalid_field("reason", f"at most {MAX_REASON_CHARS} characters")
    from apps.search.outbox import enqueue_index_op

    applied: list[str] = []
    unchanged: list[str] = []
    failed: list[dict[str, str]] = []
    with profile_write_lock(profile):
        now = timezone.now()
        records = {
            r.record_id: r
            for r in L1Record.objects.select_for_update(of=("self",)).select_related("scene").filter(profile=profile, record_id__in=set(ids))
        }
        for record_id in dict.fromkeys(ids):
            record = records.get(record_id)
            if record is None:
                failed.append({"id": record_id, "reason": "not_found"})
            elif record.deleted:
                failed.append({"id": record_id, "reason": "tombstoned"})
            elif record.type != "work_task":
                failed.append({"id": record_id, "reason": f"not a work_task (type {record.type})"})
            elif (record.task_state or "open") == state:
                unchanged.append(record_id)
            else:
                before = record_state(record)
                entry = {"from": record.task_state or "open", "to": state, "reason": (reason or "").strip() or None,
                         "at": iso_ms(now), "by": actor}
                metadata = dict(record.metadata or {})
                history = metadata.get("taskStateChange")
                history = list(history) if isinstance(history, list) else ([history] if isinstance(history, dict) else [])
                metadata["taskStateChange"] = [*history, entry]
                record.metadata = metadata
                record.task_state = state
                record.updated_at = now
                record_save_change(record=record, action="task_state", actor=actor, tool=tool, before=before, note=entry)
                enqueue_index_op(profile=profile, record_id=record_id, op="payload")
                applied.append(record_id)
    return {"applied": applied, "unchanged": unchanged, "failed": failed}


def record_restore_version(*, profile: Profile, record_id: str, change_id: int, actor: str, tool: str = "dashboard") -> dict[str, Any]:
    """Make the state recorded by `change_id` the record's newest state (a new change).

    Everything but `updatedAt` comes from that state; restoring a live state of a
    tombstoned record brings it back (its replacement, if any, stays as it is)."""
    from apps.search.outbox import enqueue_index_op

    with profile_write_lock(profile):
        record = L1Record.objects.select_for_update(of=("self",)).select_related("scene").filter(profile=profile, record_id=record_id).first()
        if record is None:
            raise NotFound(f"no record {record_id!r} in this profile")
        change = L1Change.objects.filter(profile=profile, record=record, pk=change_id).first()
        if change is None:
            raise NotFound(f"record {record_id!r} has no change {change_id}")
        state = change.state or {}
        before = record_state(record)
        now = timezone.now()
        record.content = state.get("content", record.content)
        record.type = state.get("type", record.type)
        record.priority = state.get("priority", record.priority)
        scene_id = state.get("scene_id")
        scene = scene_resolve(profile=profile, scene_id=scene_id) if scene_id else None
        if scene is not None:
            record.scene, record.scene_name = scene, scene.name
        record.source_message_ids = list(state.get("source_message_ids") or [])
        record.metadata = dict(state.get("metadata") or {})
        record.timestamps = list(state.get("timestamps") or [])
        record.version = state.get("version", record.version)
        record.deleted = bool(state.get("deleted", False))
        record.replaced_by = state.get("replacedBy") or ""
        record.task_state = state.get("taskState") if record.type == "work_task" else None
        record.updated_at = now
        record_save_change(record=record, action="restore", actor=actor, tool=tool, before=before,
                           note={"restoredChange": change.pk})
        enqueue_index_op(profile=profile, record_id=record_id, op="delete" if record.deleted else "upsert")
    return {"success": True, "recordId": record_id, "restoredChange": change_id, "record": record.as_dict()}


def project_for_session(*, profile: Profile, session_key: str) -> dict[str, Any]:
    """SPEC §3.4 `l1_project_get`."""
    return session_project(profile=profile, session_key=session_key)


def scenes_for_session(*, profile: Profile, limit: int | None = None, session_key: str = "", cwd: str = "") -> dict[str, Any]:
    """SPEC §3.3 `list_l1_scenes`: the calling session's project is its flagged candidate,
    else the known project holding the caller's cwd. `limit` defaults to the profile's
    `scenePool.listLimit` (SPEC §6)."""
    if limit is None:
        limit = int(profile_setting(profile, "scenePool.listLimit"))
    project = ""
    if session_key:
        candidate = session_project(profile=profile, session_key=session_key)
        if candidate.get("flag"):
            project = candidate["project"]
    if not project and cwd:
        normalized = normalize_path(cwd)
        project = (known_project_root(profile, normalized) if normalized else None) or ""
    entries = scene_list(profile=profile, limit=limit, project=project)
    stale_days = profile_setting(profile, "scenePool.staleDays")
    scenes = [
        {"id": e.scene_id, "name": e.name, "cwd": e.cwd,
         "lastUsedAt": iso_ms(e.last_used_at) if e.last_used_at else None, "useCount": e.use_count}
        for e in entries
    ]
    note = (
        f"{len(scenes)} scene(s); "
        + (f"same-project ({project}) first, then " if project else "")
        + f"most recently used first. Merged-away scenes and scenes unused for over {stale_days} days are not listed. "
        "Pass scene_id to l1_commit; if nothing fits, pass a stable scene_name of the form {project}｜{topic} "
        "(main-agent: matched, never registered). cwd is the session workbench, not the project."
    )
    return {"scenes": scenes, "returned": len(scenes), "note": note}

