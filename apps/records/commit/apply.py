"""`l1_commit` phase 3: under the profile write lock, check against the stored state,
decide drops, attribute scenes and projects, write, and commit the cursor — one
transaction, or nothing changes."""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.accounts.config import profile_setting
from apps.accounts.locks import profile_write_lock
from apps.accounts.models import ROLE_RANK, ROLE_WORKER, Profile
from apps.accounts.services import audit_record
from apps.records.commit.plan import (
    link_implicit,
    mark_batch_duplicates,
    mark_live_duplicates,
    plan_commit,
)
from apps.records.commit.provenance import (
    attribute_project,
    resolve_provenance,
    session_candidates,
)
from apps.records.commit.validation import (
    DEFAULT_PRIORITY,
    SOURCE_MAIN,
    SOURCE_SUBAGENT,
    TOOL,
    drop_reason,
    validate_items,
)
from apps.records.memory_rules import rules_consume_once, rules_loaded
from apps.records.models import L1Record
from apps.records.normalize import content_key, refuse_bad_context
from apps.records.project import known_project_add
from apps.records.writes import RecordChange, iso_ms, new_record_ids, record_save_changes, record_state
from apps.scenes.models import SCENE_MAIN_AGENT_LIVE, SCENE_UNCLASSIFIED, SceneEntry
from apps.scenes.pool import (
    scene_match_name,
    scene_name_key,
    scene_name_warning,
    scene_register,
    scene_reserved,
    scene_resolve,
    scene_touch,
)
from apps.tools.errors import Forbidden, NotFound, invalid_field


def _merged_cursor(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Per-shard maximum: a late or replayed commit never moves the cursor backwards."""
    files = dict(old.get("files") or {}) if old.get("version") == 2 else {}
    for name, offset in new["files"].items():
        files[name] = max(int(files.get(name, 0)), offset)
    return {"version": 2, "files": dict(sorted(files.items()))}


def records_commit(
    *,
    profile: Profile,
    records: list[Any],
    cursor: str | dict[str, Any] | None = None,
    source: str = SOURCE_SUBAGENT,
    role: str,
    actor: str,
    session_key: str = "",
    session_id: str = "",
    cwd: str = "",
) -> dict[str, Any]:
    """SPEC §3.2. `session_key`/`session_id`/`cwd` are the caller's context."""
    from apps.conversations.cursors import cursor_get, cursor_set
    from apps.conversations.services import l0_cursor_check, l0_cursor_parse
    from apps.search.outbox import PendingOp, embed_ahead, enqueue_index_ops

    if source not in (SOURCE_SUBAGENT, SOURCE_MAIN):
        raise invalid_field("source", "must be 'subagent' or 'main-agent'")
    refuse_bad_context(session_key=session_key, session_id=session_id, cwd=cwd)
    if source == SOURCE_SUBAGENT and ROLE_RANK.get(role, -1) < ROLE_RANK[ROLE_WORKER]:
        raise Forbidden("l1_commit in subagent mode needs a worker token; agents commit with source='main-agent'")
    warnings: list[dict[str, Any]] = []
    parsed_cursor = None
    if source == SOURCE_SUBAGENT:
        if cursor is None or (isinstance(cursor, str) and not cursor.strip()):
            raise invalid_field("cursor", "required in subagent mode: the nextCursor of read_l0_increment, JSON-serialized")
        try:
            parsed_cursor = l0_cursor_parse(cursor)
        except ValueError as exc:
            raise invalid_field("cursor", str(exc)) from None
        if parsed_cursor.get("version") != 2:
            raise invalid_field("cursor", "must be a v2 cursor {version: 2, files: {...}} (the nextCursor of read_l0_increment)")
        try:
            l0_cursor_check(profile=profile, cursor=parsed_cursor)
        except ValueError as exc:
            raise invalid_field("cursor", f"{exc}; pass the nextCursor of read_l0_increment") from None
    elif cursor not in (None, ""):
        warnings.append({"code": "cursorIgnored", "message": "main-agent commits never touch the L0 cursor; the cursor was ignored"})

    items = validate_items(profile, records, source)
    kept_new = [it for it in items if not it.tombstone]
    for item in kept_new:
        item.drop = drop_reason(item.content)
    # The drain after commit embeds what is stored: start the model on it now, while the
    # checks and writes below run (a record dropped there only cost a background run).
    embed_ahead([it.content for it in kept_new if not it.drop])
    resolve_provenance(profile, [it for it in items if it.tombstone or not it.drop], source, session_key)
    if source == SOURCE_MAIN:
        for item in kept_new:
            item.session_key, item.session_id, item.cwd = session_key, session_id, cwd
    candidates_by_session = session_candidates(profile, items)

    tombstone_ids = [it.record_id for it in items if it.tombstone]
    warnings.extend(link_implicit(items))

    max_chars = int(profile_setting(profile, "recall.maxCharsPerMemory"))
    with profile_write_lock(profile):
        now = timezone.now()
        was_loaded = rules_loaded(profile=profile, session_key=session_key)
        # --- checks against stored state (errors roll everything back) ---
        all_old_ids = set(tombstone_ids) | {old for it in kept_new for old in it.replaces}
        existing = {
            r.record_id: r
            for r in L1Record.objects.select_for_update(of=("self",)).filter(profile=profile, record_id__in=all_old_ids | {it.record_id for it in kept_new if it.record_id})
            .select_related("scene")
        }
        for item in items:
            targets = [item.record_id] if item.tombstone else item.replaces
            field_name = "id" if item.tombstone else "replaces"
            for old in targets:
                record = existing.get(old)
                if record is None:
                    raise NotFound(f"records.{item.index}.{field_name}: no record {old!r} in this profile", details=[{"field": f"records.{item.index}.{field_name}", "message": f"unknown record {old!r}"}])
                if record.deleted:
                    raise NotFound(f"records.{item.index}.{field_name}: record {old!r} is already tombstoned", details=[{"field": f"records.{item.index}.{field_name}", "message": f"record {old!r} is tombstoned"}])
        for item in kept_new:
            if item.record_id and item.record_id in existing:
                stored = existing[item.record_id]
                if stored.content_key == content_key(item.content) and not item.drop:
                    item.drop, item.drop_detail = "duplicate", {"existingId": stored.record_id}
                elif not item.drop:
                    raise invalid_field(f"records.{item.index}.id", f"{item.record_id!r} already exists with other content; omit id for a new record, or tombstone it and commit a replacement")
        scenes_by_item: dict[int, SceneEntry] = {}
        # A batch names a handful of scenes many times; under the write lock nothing but this
        # commit changes them, so each id and each name is looked up once.
        resolved: dict[str, SceneEntry | None] = {}
        by_name: dict[str, SceneEntry | None] = {}
        for item in kept_new:
            if item.raw.scene_id is not None:
                wanted_id = item.raw.scene_id.strip()
                if wanted_id not in resolved:
                    resolved[wanted_id] = scene_resolve(profile=profile, scene_id=wanted_id)
                scene = resolved[wanted_id]
                if scene is None:
                    raise invalid_field(f"records.{item.index}.scene_id", f"unknown scene {item.raw.scene_id!r}; pick an id from list_l1_scenes, or give new_scene_name + new_scene_reason")
                scenes_by_item[item.index] = scene

        # --- value check: duplicates (a record being replaced is no duplicate of its replacement) ---
        batch_keys = mark_batch_duplicates(kept_new)
        mark_live_duplicates(kept_new, {
            key: rid
            for key, rid in L1Record.objects.filter(profile=profile, deleted=False, content_key__in=list(batch_keys))
            .exclude(record_id__in=all_old_ids).values_list("content_key", "record_id")
        })

        # --- ids for stored records, links for replacements ---
        taken: set[str] = {it.record_id for it in items if it.record_id}
        needing = [it for it in kept_new if not it.drop and (source == SOURCE_MAIN or not it.record_id)]
        for item, new_id in zip(needing, new_record_ids(profile, taken, len(needing))):
            item.record_id = new_id
        plan = plan_commit(items, existing, source=source, now_iso=iso_ms(now), warnings=warnings)
        replaced_by_id = plan.replaced_by

        counts: Counter[str] = Counter()
        scene_warns: list[dict[str, Any]] = []
        project_warnings: list[dict[str, Any]] = []
        stored_ids: list[str | None] = []
        tombstoned: list[str] = []
        scene_uses: dict[int, tuple[SceneEntry, int]] = {}
        confirmed_roots: list[str] = []
        dropped: list[dict[str, Any]] = []
        retyped: list[dict[str, Any]] = []
        # The batch's row writes and index ops, in item order, written after the loop in a
        # fixed number of statements (record_save_changes, enqueue_index_ops).
        changes: list[RecordChange] = []
        index_ops: list[PendingOp] = []
        reserved: dict[str, SceneEntry] = {}

        def reserved_scene(scene_id: str) -> SceneEntry:
            if scene_id not in reserved:
                reserved[scene_id] = scene_reserved(profile=profile, scene_id=scene_id)
            return reserved[scene_id]

        def tombstone(old_id: str, replacement: str | None, note: dict[str, Any]) -> None:
            record = existing[old_id]
            before = record_state(record)
            record.deleted = True
            record.updated_at = now
            if replacement:
                record.replaced_by = replacement
            if note.get("reason"):
                record.metadata = {**(record.metadata or {}), "tombstoneReason": note["reason"]}
            changes.append(RecordChange(record, "tombstone", before, note))
            index_ops.append((old_id, "delete", None))
            tombstoned.append(old_id)

        for item in items:
            if item.tombstone:
                stored_ids.append(None)
                note = {"replacedBy": replaced_by_id.get(item.record_id)}
                if item.reason:
                    note["reason"] = item.reason
                tombstone(item.record_id, replaced_by_id.get(item.record_id), note)
                continue
            if item.drop:
                stored_ids.append(None)
                if item.drop == "provenanceMissing":
                    counts["provenanceMissing"] += 1
                dropped.append({"index": item.index, "reason": item.drop, **item.drop_detail})
                continue
            raw = item.raw
            if item.retyped_from is not None:
                retyped.append({"index": item.index, "from": item.retyped_from, "to": item.type})
            metadata, confirmed = attribute_project(profile, item, candidates_by_session, project_warnings)
            if confirmed:
                confirmed_roots.append(confirmed)
            # Scene attribution.
            scene = scenes_by_item.get(item.index)
            if scene is None and raw.new_scene_name is not None and source == SOURCE_SUBAGENT:
                name_key = scene_name_key(raw.new_scene_name)
                scene = by_name.get(name_key)
                if scene is None:
                    scene, _created = scene_register(
                        profile=profile, name=raw.new_scene_name, reason=raw.new_scene_reason or "",
                        project=metadata.get("project", ""), cwd=item.cwd, actor=actor, tool=TOOL,
                    )
                    by_name[name_key] = scene
                hint = scene_name_warning(raw.new_scene_name)
                if hint:
                    scene_warns.append({"index": item.index, "message": hint})
            if scene is None:
                wanted_name = raw.scene_name if raw.scene_name is not None else raw.new_scene_name
                if wanted_name is not None and wanted_name.strip():
                    name_key = scene_name_key(wanted_name)
                    if name_key not in by_name:
                        by_name[name_key] = scene_match_name(profile=profile, name=wanted_name)
                    scene = by_name[name_key]
                    if scene is None:
                        fallback = SCENE_UNCLASSIFIED if source == SOURCE_SUBAGENT else SCENE_MAIN_AGENT_LIVE
                        scene_warns.append({"index": item.index, "message": f"no scene is named {wanted_name!r} (scene_name never registers a scene): stored under {fallback}"})
                if scene is None:
                    if source == SOURCE_SUBAGENT:
                        scene = reserved_scene(SCENE_UNCLASSIFIED)
                        metadata["sceneFallback"] = True
                        if not (wanted_name or "").strip():
                            scene_warns.append({"index": item.index, "message": "no scene_id or new_scene_name: stored under unclassified"})
                    else:
                        scene = reserved_scene(SCENE_MAIN_AGENT_LIVE)
            # Replacement: what the plan says the record inherits.
            inherited = plan.inherited[item.index]
            version, timestamps, task_state = inherited.version, inherited.timestamps, inherited.task_state
            counts["taskStateDroppedOnReplace"] += int(inherited.closed_state_kept)
            counts["taskStateIgnored"] += int(inherited.task_state_ignored)
            if raw.priority is None:
                counts["priorityDefaulted"] += 1
            if len(item.content) > max_chars:
                counts["overRecallBudget"] += 1
            record = L1Record(
                profile=profile, record_id=item.record_id, content=item.content, type=item.type,
                priority=raw.priority if raw.priority is not None else DEFAULT_PRIORITY,
                scene=scene, scene_name=scene.name,
                source_message_ids=list(dict.fromkeys(raw.source_message_ids or [])),
                metadata=metadata, timestamps=timestamps, created_at=now, updated_at=now, version=version,
                session_key=item.session_key or "", session_id=item.session_id or "", cwd=item.cwd or "",
                deleted=False, task_state=task_state, source=source,
            )
            store_note = {"replaces": item.replaces} if item.replaces else None
            changes.append(RecordChange(record, "store", None, store_note))
            vector = raw.embedding if raw.embedding and (raw.content or "") == item.content else None
            index_ops.append((record.record_id, "upsert", vector))
            stored_ids.append(record.record_id)
            previous = scene_uses.get(scene.pk)
            scene_uses[scene.pk] = (scene, (previous[1] if previous else 0) + 1)
            for old in item.replaces:
                if old not in tombstone_ids:
                    tombstone(old, record.record_id, {"replacedBy": record.record_id})

        record_save_changes(changes=changes, actor=actor, tool=TOOL)
        enqueue_index_ops(profile=profile, ops=index_ops)  # one drain after commit embeds the batch
        for scene, count in scene_uses.values():
            scene_touch(scene=scene, count=count, at=now)
        for root in dict.fromkeys(confirmed_roots):
            known_project_add(profile=profile, root=root, actor=actor, tool=TOOL)
        cursor_committed = False
        if source == SOURCE_SUBAGENT:
            before_cursor = cursor_get(profile=profile, kind="l1")
            assert parsed_cursor is not None  # parsed (or refused) above for every subagent commit
            after_cursor = _merged_cursor(before_cursor, parsed_cursor)
            cursor_set(profile=profile, kind="l1", value=after_cursor)
            audit_record(
                profile=profile, actor=actor, tool=TOOL, action="cursor_commit", target_type="cursor",
                target_id="l1", before=before_cursor or None, after=after_cursor,
            )
            cursor_committed = True
        if source == SOURCE_MAIN and not was_loaded:
            warnings.append({"code": "rulesNotLoaded", "message": "no load_memory_rules in this session: call it before recording so records follow the contract"})
        rules_consume_once(profile=profile, session_key=session_key)
        stored_count = sum(1 for s in stored_ids if s)
        if source == SOURCE_SUBAGENT and stored_count:
            from apps.pipeline import triggers

            profile_id = profile.pk
            transaction.on_commit(lambda: triggers.l1_committed(profile_id=profile_id, stored=stored_count, source=SOURCE_SUBAGENT))

    return {
        "success": True,
        "stored": stored_ids,
        "tombstoned": tombstoned,
        "cursorCommitted": cursor_committed,
        "valueCheck": {"dropped": dropped, "retyped": retyped, "skipped": False},
        "priorityDefaulted": counts["priorityDefaulted"],
        "provenanceMissing": counts["provenanceMissing"],
        "overRecallBudget": counts["overRecallBudget"],
        "taskStateIgnored": counts["taskStateIgnored"],
        "taskStateDroppedOnReplace": counts["taskStateDroppedOnReplace"],
        "sceneWarns": scene_warns,
        "projectWarnings": project_warnings,
        "rulesLoaded": was_loaded,
        "warnings": warnings,
    }
