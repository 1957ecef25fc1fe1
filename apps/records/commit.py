"""`l1_commit` (SPEC §3.2): one transaction stores the batch's records, tombstones and
scene registrations and advances the L0 cursor — or nothing changes.

Phases: (1) validate every item (any invalid input raises before anything is read or
written); (2) resolve provenance and session project candidates from L0 (append-only
files, read outside the lock); (3) under the profile write lock, check against the stored
state, decide drops, attribute scenes and projects, write, and commit the cursor.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone
from pydantic import ValidationError

from apps.accounts.config import profile_setting
from apps.accounts.locks import profile_write_lock
from apps.accounts.models import ROLE_RANK, ROLE_WORKER, Profile
from apps.accounts.services import audit_record
from apps.records.memory_rules import rules_consume_once, rules_loaded
from apps.records.models import CHAT_TYPES, CODE_TYPES, SCOPES, TASK_STATES, L1Record
from apps.records.normalize import (
    MAX_METADATA_DEPTH,
    content_key,
    nesting_depth,
    normalize_path,
    path_key,
    refuse_bad_context,
    refuse_nul,
)
from apps.records.project import (
    evidence_problem,
    known_project_add,
    known_projects,
    project_candidate,
)
from apps.records.schemas import CommitRecordIn
from apps.records.writes import (
    epoch_ms_to_iso,
    iso_ms,
    new_record_id,
    record_save_change,
    record_state,
)
from apps.scenes.models import SCENE_MAIN_AGENT_LIVE, SCENE_UNCLASSIFIED, SceneEntry
from apps.scenes.pool import (
    scene_match_name,
    scene_name_problem,
    scene_name_warning,
    scene_register,
    scene_reserved,
    scene_resolve,
    scene_touch,
)
from apps.tools.errors import Forbidden, InvalidParams, NotFound, invalid_field

TOOL = "l1_commit"
SOURCE_SUBAGENT = "subagent"
SOURCE_MAIN = "main-agent"
DEFAULT_PRIORITY = 60
MIN_CONTENT_CHARS = 6
MAX_RECORDS = 200
RECORD_ID_RE = re.compile(r"^l1_\d{10,}_[a-z0-9]{4}$")
# Types outside the mode's enum that map unambiguously (SPEC §3.2 value check).
RETYPE = {
    "fact": "work_fact", "task": "work_task", "method": "work_method", "artifact": "work_artifact",
    "preference": "persona", "event": "episodic", "rule": "instruction",
}
# Keys of `metadata` the server owns.
SERVER_METADATA = ("projectSource", "sceneFallback")
# Prompt-injection attempts: addressed at the assistant's instructions, not at tools
# ("eslint should ignore all rules for generated files" is a memory, not an attack).
_INJECTION = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\b(ignore|disregard|forget|override)\s+(all\s+|any\s+)?(of\s+)?(the\s+|your\s+)?(previous|prior|above|earlier|preceding|former)\s+(instructions?|prompts?|rules|directions|messages)",
        r"\b(ignore|disregard|forget)\s+(all\s+|any\s+)?(of\s+)?your\s+(instructions?|rules|guidelines|programming|system\s*prompt)",
        r"\b(ignore|disregard)\s+all\s+instructions",
        r"\b(reveal|print|output|show|repeat|leak|dump)\b.{0,20}\b(your|the)\b.{0,10}\bsystem\s*prompt",
        r"\byou\s+are\s+now\b.{0,30}\b(dan|jailbroken|developer mode|unrestricted|no (rules|restrictions))",
        r"(忽略|无视|忘记|忘掉)(掉)?(之前|以上|上面|前面|先前)的?(所有|全部)?(指令|指示|规则|提示|设定|约束)",
        r"(忽略|无视|忘记|忘掉)(掉)?(你的)?(所有|全部|一切)的?(指令|指示|系统提示)",
        r"(输出|打印|显示|告诉我|泄露|重复)(一下)?你?的?(系统提示|系统指令|system\s*prompt)",
        r"你现在(是|扮演|变成)(一个)?(没有|不受)(任何)?(限制|约束)",
    )
]


@dataclass
class _Item:
    index: int
    raw: CommitRecordIn
    tombstone: bool
    type: str = ""
    retyped_from: str | None = None
    content: str = ""
    drop: str | None = None
    drop_detail: dict[str, Any] = field(default_factory=dict)
    record_id: str = ""
    replaces: list[str] = field(default_factory=list)
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    session_key: str = ""
    session_id: str = ""
    cwd: str = ""
    timestamps: list[str] = field(default_factory=list)


def _mode_types(profile: Profile) -> tuple[str, ...]:
    return CHAT_TYPES if profile.mode == "chat" else CODE_TYPES


def _drop_reason(content: str) -> str | None:
    text = content.strip()
    if not text:
        return "empty"
    if len(text) < MIN_CONTENT_CHARS:
        return "tooShort"
    if not any(ch.isalnum() for ch in text):
        return "symbolsOnly"
    if any(p.search(text) for p in _INJECTION):
        return "promptInjection"
    return None


def content_problem(content: str) -> str | None:
    """Why `content` would be dropped by the value check (used by l1_fix too)."""
    return _drop_reason(content)


def _validate_items(profile: Profile, records: list[Any], source: str) -> list[_Item]:
    from apps.search.embedding import check_client_embedding

    if len(records) > MAX_RECORDS:
        raise invalid_field("records", f"at most {MAX_RECORDS} records per commit, got {len(records)}")
    items: list[_Item] = []
    mode_types = _mode_types(profile)
    for index, raw_in in enumerate(records):
        try:
            raw = raw_in if isinstance(raw_in, CommitRecordIn) else CommitRecordIn.model_validate(raw_in)
        except ValidationError as exc:
            details = [
                {"field": f"records.{index}." + ".".join(str(p) for p in err["loc"]), "message": err["msg"]}
                for err in exc.errors(include_url=False)
            ]
            raise InvalidParams("; ".join(f"{d['field']}: {d['message']}" for d in details[:5]), details=details) from None
        where = f"records.{index}"
        check_client_embedding(raw.embedding, field=f"{where}.embedding")
        if raw.metadata is not None and nesting_depth(raw.metadata) > MAX_METADATA_DEPTH:
            raise invalid_field(f"{where}.metadata", f"nests deeper than {MAX_METADATA_DEPTH} levels")
        refuse_nul({where: raw.model_dump(exclude_none=True)})
        if raw.deleted:
            if source == SOURCE_MAIN:
                raise invalid_field(f"{where}.deleted", "main-agent commits only add records; use l1_fix to correct or remove one")
            if not raw.id:
                raise invalid_field(f"{where}.id", "a tombstone item {id, deleted: true} needs the id of the record to tombstone")
            items.append(_Item(index=index, raw=raw, tombstone=True, record_id=raw.id))
            continue
        item = _Item(index=index, raw=raw, tombstone=False, content=(raw.content or "").strip())
        if raw.type is None:
            raise invalid_field(f"{where}.type", f"required (one of {', '.join(mode_types)})")
        given = raw.type.strip()
        folded = given.casefold()
        if given in mode_types:
            item.type = given
        elif folded in mode_types or RETYPE.get(folded) in mode_types:
            item.type = folded if folded in mode_types else RETYPE[folded]
            item.retyped_from = raw.type
        else:
            raise invalid_field(f"{where}.type", f"unknown type {raw.type!r} for a {profile.mode}-mode profile (allowed: {', '.join(mode_types)})")
        if raw.priority is not None:
            if raw.priority == -1:
                if not (profile.mode == "chat" and item.type == "instruction"):
                    raise invalid_field(f"{where}.priority", "-1 (strict global rule) is allowed only for a chat-mode instruction")
            elif not 0 <= raw.priority <= 100:
                raise invalid_field(f"{where}.priority", f"must be 0-100, got {raw.priority}")
        if raw.taskState is not None and raw.taskState not in TASK_STATES:
            raise invalid_field(f"{where}.taskState", f"must be one of {', '.join(TASK_STATES)}")
        if raw.scene_id is not None and (raw.new_scene_name is not None or raw.new_scene_reason is not None):
            raise invalid_field(f"{where}.scene_id", "give exactly one of scene_id or new_scene_name + new_scene_reason")
        if raw.new_scene_name is not None or raw.new_scene_reason is not None:
            if source == SOURCE_SUBAGENT:
                if not (raw.new_scene_name or "").strip():
                    raise invalid_field(f"{where}.new_scene_name", "required with new_scene_reason")
                if not (raw.new_scene_reason or "").strip():
                    raise invalid_field(f"{where}.new_scene_reason", "required with new_scene_name: one sentence on why this is a new scene")
            problem = scene_name_problem(raw.new_scene_name or "x")
            if problem:
                raise invalid_field(f"{where}.new_scene_name", problem)
        if raw.scene_id is not None and not raw.scene_id.strip():
            raise invalid_field(f"{where}.scene_id", "must not be empty")
        if raw.replaces:
            if source == SOURCE_MAIN:
                raise invalid_field(f"{where}.replaces", "main-agent commits only add records; use l1_fix to correct or remove one")
            if any(not r for r in raw.replaces):
                raise invalid_field(f"{where}.replaces", "ids must not be empty")
            item.replaces = list(dict.fromkeys(raw.replaces))
        if raw.source_message_ids is not None and any(not s.strip() for s in raw.source_message_ids):
            raise invalid_field(f"{where}.source_message_ids", "message references must not be empty")
        if source == SOURCE_SUBAGENT and raw.id is not None:
            if not RECORD_ID_RE.match(raw.id):
                raise invalid_field(f"{where}.id", "must look like l1_{epochMs}_{4 [a-z0-9]} (or be omitted: the server assigns one)")
            item.record_id = raw.id
        items.append(item)

    seen_ids: dict[str, str] = {}
    for item in items:
        if not item.record_id:
            continue
        label = "tombstoned" if item.tombstone else "used"
        if item.record_id in seen_ids:
            raise invalid_field(f"records.{item.index}.id", f"{item.record_id!r} is already {seen_ids[item.record_id]} by another item of this batch")
        seen_ids[item.record_id] = label
    replaced_by: dict[str, int] = {}
    for item in items:
        for old in item.replaces:
            if old in replaced_by:
                raise invalid_field(f"records.{item.index}.replaces", f"{old!r} is already replaced by records.{replaced_by[old]}")
            if seen_ids.get(old) == "used":
                raise invalid_field(f"records.{item.index}.replaces", f"{old!r} is a new record of this batch, not a stored one")
            replaced_by[old] = item.index
    return items


def _resolve_provenance(profile: Profile, items: list[_Item], source: str, ctx_session: str) -> None:
    """Find each record's L0 rows; subagent records without them are dropped."""
    from apps.conversations.services import l0_lookup_messages

    refs = sorted({ref for it in items if not it.tombstone for ref in (it.raw.source_message_ids or [])})
    found = l0_lookup_messages(profile=profile, refs=refs) if refs else {}
    for item in items:
        if item.tombstone:
            continue
        ids = list(dict.fromkeys(item.raw.source_message_ids or []))
        wanted_session = item.raw.sessionKey if source == SOURCE_SUBAGENT else ctx_session
        if not ids:
            if source == SOURCE_SUBAGENT:
                item.drop, item.drop_detail = "provenanceMissing", {"message": "source_message_ids is required in subagent mode"}
            continue
        sessions: list[str] = []
        for row in found.get(ids[0], []):
            key = row.get("sessionKey") or ""
            if key not in sessions and (not wanted_session or key == wanted_session):
                sessions.append(key)
        chosen = None
        for key in sessions:
            if all(any((r.get("sessionKey") or "") == key for r in found.get(ref, [])) for ref in ids):
                chosen = key
                break
        if chosen is None:
            if source == SOURCE_SUBAGENT:
                missing = [ref for ref in ids if not found.get(ref)]
                message = (
                    f"not found in L0: {', '.join(missing[:20])}" + (f" and {len(missing) - 20} more" if len(missing) > 20 else "") if missing
                    else "the references do not all belong to one session" + (f" ({wanted_session})" if wanted_session else "")
                )
                item.drop, item.drop_detail = "provenanceMissing", {"message": message}
            continue
        rows = {ref: next(r for r in found[ref] if (r.get("sessionKey") or "") == chosen) for ref in ids}
        item.rows = rows
        if source == SOURCE_SUBAGENT:
            item.session_key = chosen
            item.session_id = next((r.get("sessionId") for r in rows.values() if r.get("sessionId")), "") or ""
            item.cwd = next((r.get("cwd") for r in rows.values() if r.get("cwd")), "") or (item.raw.cwd or "")
            item.timestamps = sorted({t for t in (epoch_ms_to_iso(r.get("timestamp")) for r in rows.values()) if t})


def _attribute_project(
    profile: Profile, item: _Item, session_candidates: dict[str, dict[str, Any]], warnings: list[dict[str, Any]]
) -> tuple[dict[str, Any], str | None]:
    """The record's metadata with scope/project decided; and a confirmed project root."""
    meta = {k: v for k, v in (item.raw.metadata or {}).items() if k not in SERVER_METADATA}
    scope = meta.get("scope")
    project = meta.get("project")
    evidence = meta.pop("projectEvidence", None)

    def warn(message: str) -> None:
        warnings.append({"index": item.index, "message": message})

    if scope not in SCOPES:
        if scope is not None:
            warn(f"metadata.scope {scope!r} is not one of self|global|unknown: stored as unknown")
        scope = "unknown"
    confirmed = None
    if scope == "self":
        blank = project is None or (isinstance(project, str) and not project.strip())
        explicit = evidence is not None or not blank
        if explicit:
            problem = (
                f"metadata.project must be a string, got {type(project).__name__}" if not isinstance(project, str)
                else "metadata.projectEvidence was given without metadata.project" if not project.strip()
                else evidence_problem(project=project, evidence=evidence, source_ids=list(item.rows), rows_by_ref=item.rows)
            )
            if problem:
                warn(f"project evidence rejected, stored as unknown: {problem}")
                scope, project = "unknown", ""
            else:
                project = _project_spelling(profile, project, evidence)
                meta["projectEvidence"] = evidence
                meta["projectSource"] = "l0-evidence"
                confirmed = project
        else:
            candidate = session_candidates.get(item.session_key) if item.session_key else None
            if candidate and candidate.get("flag"):
                project = candidate["project"]
                meta["projectSource"] = "session"
            else:
                warn("scope self without a usable project (no evidence and no flagged session candidate): stored as unknown")
                scope, project = "unknown", ""
    else:
        if isinstance(project, str) and project.strip() or evidence:
            warn(f"scope {scope} always stores an empty project; metadata.project/projectEvidence were cleared")
        project = ""
    meta["scope"] = scope
    meta["project"] = project
    return meta, confirmed


def _project_spelling(profile: Profile, project: str, evidence: list[dict[str, str]]) -> str:
    """The verified root as a known project spells it, else as the L0 evidence spells it
    (drive paths compare case-insensitively, so `c:/dev/b` may be `C:/dev/B` in L0)."""
    root = normalize_path(project) or project
    for known in known_projects(profile):
        if path_key(known) == path_key(root):
            return known
    for item in evidence:
        path = normalize_path(item["path"]) or ""
        if path_key(path[: len(root)]) == path_key(root):
            return path[: len(root)]
    return root


def _session_candidates(profile: Profile, items: list[_Item]) -> dict[str, dict[str, Any]]:
    from apps.conversations.services import l0_session_rows

    needed = set()
    for item in items:
        if item.tombstone or item.drop or not item.session_key:
            continue
        meta = item.raw.metadata or {}
        if meta.get("scope") == "self" and meta.get("project") in (None, "") and meta.get("projectEvidence") is None:
            needed.add(item.session_key)
    return {
        key: project_candidate(profile=profile, rows=l0_session_rows(profile=profile, session_key=key))
        for key in sorted(needed)
    }


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
    from apps.search.outbox import enqueue_index_op

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

    items = _validate_items(profile, records, source)
    kept_new = [it for it in items if not it.tombstone]
    for item in kept_new:
        item.drop = _drop_reason(item.content)
    _resolve_provenance(profile, [it for it in items if it.tombstone or not it.drop], source, session_key)
    if source == SOURCE_MAIN:
        for item in kept_new:
            item.session_key, item.session_id, item.cwd = session_key, session_id, cwd
    session_candidates = _session_candidates(profile, items)

    # Implicit linking of tombstone items to the batch's one new record (SPEC §3.2).
    tombstone_ids = [it.record_id for it in items if it.tombstone]
    if tombstone_ids and kept_new and not any(it.replaces for it in kept_new):
        if len(kept_new) == 1:
            kept_new[0].replaces = list(tombstone_ids)
        else:
            warnings.append({
                "code": "unlinkedReplacement",
                "message": f"{len(tombstone_ids)} tombstone item(s) and {len(kept_new)} new records but no 'replaces': nothing was linked and the new records start at version 1",
            })

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
        for item in kept_new:
            if item.raw.scene_id is not None:
                scene = scene_resolve(profile=profile, scene_id=item.raw.scene_id.strip())
                if scene is None:
                    raise invalid_field(f"records.{item.index}.scene_id", f"unknown scene {item.raw.scene_id!r}; pick an id from list_l1_scenes, or give new_scene_name + new_scene_reason")
                scenes_by_item[item.index] = scene

        # --- value check: duplicates ---
        replaced_now = all_old_ids
        batch_keys: dict[str, int] = {}
        for item in kept_new:
            if item.drop:
                continue
            key = content_key(item.content)
            if key in batch_keys:
                item.drop, item.drop_detail = "duplicate", {"duplicateOf": batch_keys[key]}
                continue
            batch_keys[key] = item.index
        live_dupes = {
            key: rid
            for key, rid in L1Record.objects.filter(profile=profile, deleted=False, content_key__in=list(batch_keys))
            .exclude(record_id__in=replaced_now).values_list("content_key", "record_id")
        }
        for item in kept_new:
            if not item.drop and content_key(item.content) in live_dupes:
                item.drop, item.drop_detail = "duplicate", {"existingId": live_dupes[content_key(item.content)]}

        # --- ids for stored records, links for replacements ---
        taken: set[str] = {it.record_id for it in items if it.record_id}
        for item in kept_new:
            if not item.drop and (source == SOURCE_MAIN or not item.record_id):
                item.record_id = new_record_id(profile, taken)
        replaced_by_id = {old: it.record_id for it in kept_new if not it.drop for old in it.replaces}

        counts = Counter()
        scene_warns: list[dict[str, Any]] = []
        project_warnings: list[dict[str, Any]] = []
        stored_ids: list[str | None] = []
        tombstoned: list[str] = []
        scene_uses: dict[int, tuple[SceneEntry, int]] = {}
        confirmed_roots: list[str] = []
        dropped: list[dict[str, Any]] = []
        retyped: list[dict[str, Any]] = []

        def tombstone(old_id: str, replacement: str | None, note: dict[str, Any]) -> None:
            record = existing[old_id]
            before = record_state(record)
            record.deleted = True
            record.updated_at = now
            if replacement:
                record.replaced_by = replacement
            record_save_change(record=record, action="tombstone", actor=actor, tool=TOOL, before=before, note=note)
            enqueue_index_op(profile=profile, record_id=old_id, op="delete")
            tombstoned.append(old_id)

        for item in items:
            if item.tombstone:
                stored_ids.append(None)
                tombstone(item.record_id, replaced_by_id.get(item.record_id), {"replacedBy": replaced_by_id.get(item.record_id)})
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
            metadata, confirmed = _attribute_project(profile, item, session_candidates, project_warnings)
            if confirmed:
                confirmed_roots.append(confirmed)
            # Scene attribution.
            scene = scenes_by_item.get(item.index)
            if scene is None and raw.new_scene_name is not None and source == SOURCE_SUBAGENT:
                scene, _created = scene_register(
                    profile=profile, name=raw.new_scene_name, reason=raw.new_scene_reason or "",
                    project=metadata.get("project", ""), cwd=item.cwd, actor=actor, tool=TOOL,
                )
                hint = scene_name_warning(raw.new_scene_name)
                if hint:
                    scene_warns.append({"index": item.index, "message": hint})
            if scene is None:
                wanted_name = raw.scene_name if raw.scene_name is not None else raw.new_scene_name
                if wanted_name is not None and wanted_name.strip():
                    scene = scene_match_name(profile=profile, name=wanted_name)
                    if scene is None:
                        fallback = SCENE_UNCLASSIFIED if source == SOURCE_SUBAGENT else SCENE_MAIN_AGENT_LIVE
                        scene_warns.append({"index": item.index, "message": f"no scene is named {wanted_name!r} (scene_name never registers a scene): stored under {fallback}"})
                if scene is None:
                    if source == SOURCE_SUBAGENT:
                        scene = scene_reserved(profile=profile, scene_id=SCENE_UNCLASSIFIED)
                        metadata["sceneFallback"] = True
                        if not (wanted_name or "").strip():
                            scene_warns.append({"index": item.index, "message": "no scene_id or new_scene_name: stored under unclassified"})
                    else:
                        scene = scene_reserved(profile=profile, scene_id=SCENE_MAIN_AGENT_LIVE)
            # Replacement.
            replaced = [existing[old] for old in item.replaces]
            version = max((r.version for r in replaced), default=0) + 1
            timestamps = item.timestamps if source == SOURCE_SUBAGENT else [iso_ms(now)]
            timestamps = sorted(set(timestamps).union(*(set(r.timestamps or []) for r in replaced)))
            task_state = None
            if item.type == "work_task":
                task_state = raw.taskState or "open"
                if raw.taskState is None:
                    closed = sorted(
                        (r for r in replaced if r.type == "work_task" and r.task_state in ("done", "dropped")),
                        key=lambda r: r.updated_at,
                    )
                    if closed:
                        task_state = closed[-1].task_state
                        counts["taskStateDroppedOnReplace"] += 1
            elif raw.taskState is not None:
                counts["taskStateIgnored"] += 1
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
            note = {"replaces": item.replaces} if item.replaces else None
            record_save_change(record=record, action="store", actor=actor, tool=TOOL, before=None, note=note)
            vector = raw.embedding if raw.embedding and (raw.content or "") == item.content else None
            enqueue_index_op(profile=profile, record_id=record.record_id, op="upsert", vector=vector)
            stored_ids.append(record.record_id)
            previous = scene_uses.get(scene.pk)
            scene_uses[scene.pk] = (scene, (previous[1] if previous else 0) + 1)
            for old in item.replaces:
                if old not in tombstone_ids:
                    tombstone(old, record.record_id, {"replacedBy": record.record_id})

        for scene, count in scene_uses.values():
            scene_touch(scene=scene, count=count, at=now)
        for root in dict.fromkeys(confirmed_roots):
            known_project_add(profile=profile, root=root, actor=actor, tool=TOOL)
        cursor_committed = False
        if source == SOURCE_SUBAGENT:
            before_cursor = cursor_get(profile=profile, kind="l1")
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
