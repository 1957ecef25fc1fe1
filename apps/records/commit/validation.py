"""`l1_commit` phase 1: validate every item before anything is read or written, and the
value check's content rules (also used by `l1_fix`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from apps.accounts.models import Profile
from apps.records.models import CHAT_TYPES, CODE_TYPES, TASK_STATES
from apps.records.normalize import MAX_METADATA_DEPTH, nesting_depth, refuse_nul
from apps.records.schemas import CommitRecordIn
from apps.scenes.pool import scene_name_problem
from apps.tools.errors import InvalidParams, invalid_field

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
class Item:
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
    reason: str | None = None  # tombstone items: why, kept as metadata.tombstoneReason


def mode_types(profile: Profile) -> tuple[str, ...]:
    return CHAT_TYPES if profile.mode == "chat" else CODE_TYPES


def drop_reason(content: str) -> str | None:
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
    return drop_reason(content)


def validate_items(profile: Profile, records: list[Any], source: str) -> list[Item]:
    from apps.search.embedding import check_client_embedding

    if len(records) > MAX_RECORDS:
        raise invalid_field("records", f"at most {MAX_RECORDS} records per commit, got {len(records)}")
    items: list[Item] = []
    allowed = mode_types(profile)
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
            reason = (raw.reason or "").strip() or None
            items.append(Item(index=index, raw=raw, tombstone=True, record_id=raw.id, reason=reason))
            continue
        if raw.reason is not None:
            raise invalid_field(f"{where}.reason", "only a tombstone item {id, deleted: true} takes a reason")
        item = Item(index=index, raw=raw, tombstone=False, content=(raw.content or "").strip())
        if raw.type is None:
            raise invalid_field(f"{where}.type", f"required (one of {', '.join(allowed)})")
        given = raw.type.strip()
        folded = given.casefold()
        if given in allowed:
            item.type = given
        elif folded in allowed or RETYPE.get(folded) in allowed:
            item.type = folded if folded in allowed else RETYPE[folded]
            item.retyped_from = raw.type
        else:
            raise invalid_field(f"{where}.type", f"unknown type {raw.type!r} for a {profile.mode}-mode profile (allowed: {', '.join(allowed)})")
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
