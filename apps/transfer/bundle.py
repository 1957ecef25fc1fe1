"""What an import directory holds, read and checked before anything is written.

`read_export` reads this project's layout (SPEC §7 plus the files of `layout`);
`apps.transfer.tdai.read_tdai` reads a TencentDB-Agent-Memory data directory into the
same `Bundle`. `check_bundle` then maps types to the target profile's mode and checks
every row, so that a bad file stops the import before its first write.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apps.conversations.transfer import shard_name_problem
from apps.hitstats.transfer import hit_stats_problem
from apps.persona.transfer import persona_version_problem
from apps.records.models import CHAT_TYPES, CODE_TYPES
from apps.records.transfer import record_row_problem
from apps.scenes.services import scene_file_problem, scene_pool_entry_problem
from apps.skills.transfer import SkillFolder, skill_problem
from apps.transfer import layout as L
from apps.transfer.source import ImportFileError, SourceDir, check_complete, decode_utf8

# SPEC §3.2: generic type names that map unambiguously into a mode.
TYPE_ALIASES = {"fact": "work_fact", "task": "work_task", "method": "work_method", "artifact": "work_artifact",
                "preference": "persona", "event": "episodic", "rule": "instruction"}
# `--mode default`: how a record of the other mode is re-typed (documented in docs/transfer.md).
DEFAULT_MODE_MAP = {
    "code": {"persona": "work_fact", "episodic": "work_fact", "instruction": "work_method"},
    "chat": {"work_fact": "episodic", "work_task": "episodic", "work_method": "instruction", "work_artifact": "episodic"},
}


@dataclass
class Row:
    """A value read from a file, with where it came from (for error messages)."""

    where: str
    line: int
    value: Any


@dataclass
class Bundle:
    kind: str  # "memoryweb" | "tdai"
    source_mode: str | None = None
    profile_meta: dict[str, Any] = field(default_factory=dict)
    l0: list[tuple[str, bytes]] = field(default_factory=list)
    feed: list[tuple[str, bytes]] = field(default_factory=list)
    records: list[Row] = field(default_factory=list)
    changes: list[Row] | None = None
    hits: dict[str, Any] = field(default_factory=dict)
    scenes: list[Row] | None = None
    blocks: list[tuple[str, bool, str]] = field(default_factory=list)
    cursors: dict[str, dict[str, Any]] = field(default_factory=dict)
    user_md: str | None = None
    user_temp_md: str | None = None
    persona_versions: list[Row] = field(default_factory=list)
    persona_proposal: dict[str, Any] | None = None
    skills: list[SkillFolder] = field(default_factory=list)
    pins: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was left out, and why


def is_export(src: SourceDir) -> bool:
    return src.has_dir(L.DB)


def read_export(src: SourceDir) -> Bundle:
    bundle = Bundle(kind="memoryweb")
    if src.has_file(L.PROFILE_JSON):
        meta = src.read_json(L.PROFILE_JSON)
        if not isinstance(meta, dict):
            raise ImportFileError(L.PROFILE_JSON, 1, "must be a JSON object")
        bundle.profile_meta = meta
        bundle.source_mode = meta.get("mode") if meta.get("mode") in ("code", "chat") else None
    for folder, target in ((L.L0, bundle.l0), (L.FEED, bundle.feed)):
        for relative in src.files_under(folder, ".jsonl"):
            data = src.read_bytes(relative)
            decode_utf8(relative, data)
            check_complete(relative, data)
            target.append((relative.rsplit("/", 1)[1], data))
    for relative in src.files_under(L.L1_RECORDS, ".jsonl"):
        bundle.records.extend(Row(relative, n, v) for n, v in src.read_jsonl(relative))
    if src.has_file(L.L1_CHANGES):
        bundle.changes = [Row(L.L1_CHANGES, n, v) for n, v in src.read_jsonl(L.L1_CHANGES)]
    if src.has_file(L.HIT_STATS):
        hits = src.read_json(L.HIT_STATS)
        records = hits.get("records") if isinstance(hits, dict) else None
        if not isinstance(records, dict):
            raise ImportFileError(L.HIT_STATS, 1, "must be {records: {id: stats}}")
        bundle.hits = records
    if src.has_file(L.SCENES_JSON):
        pool = src.read_json(L.SCENES_JSON)
        entries = pool.get("scenes") if isinstance(pool, dict) else pool
        if not isinstance(entries, list):
            raise ImportFileError(L.SCENES_JSON, 1, "must be {scenes: [...]} or a list of scene entries")
        bundle.scenes = [Row(L.SCENES_JSON, 0, e) for e in entries]
    for folder, archived in ((L.L2_SCENES, False), (L.L2_ARCHIVE, True)):
        for relative in src.files_under(folder):
            bundle.blocks.append((relative.rsplit("/", 1)[1], archived, src.read_text(relative)))
    for kind, relative in (("l1", L.L1_CURSOR), ("l2", L.L2_CURSOR), ("l3", L.L3_CURSOR), ("skill_feed", L.FEED_CURSOR)):
        if src.has_file(relative):
            value = src.read_json(relative)
            if not isinstance(value, dict):
                raise ImportFileError(relative, 1, "a cursor is a JSON object")
            bundle.cursors[kind] = value
    if src.has_file(L.USER_MD):
        bundle.user_md = src.read_text(L.USER_MD)
    if src.has_file(L.USER_TEMP_MD):
        bundle.user_temp_md = src.read_text(L.USER_TEMP_MD)
    if src.has_file(L.L3_VERSIONS):
        bundle.persona_versions = [Row(L.L3_VERSIONS, n, v) for n, v in src.read_jsonl(L.L3_VERSIONS)]
    if src.has_file(L.L3_PROPOSAL):
        proposal = src.read_json(L.L3_PROPOSAL)
        if not isinstance(proposal, dict) or not isinstance(proposal.get("entries", []), list):
            raise ImportFileError(L.L3_PROPOSAL, 1, "must be {entries: [...], base: [...], ...}")
        bundle.persona_proposal = proposal
    bundle.skills = read_skills(src, L.SKILLS)
    if src.has_file(L.SKILLS_JSON):
        pins = src.read_json(L.SKILLS_JSON).get("pinned", [])
        if not isinstance(pins, list) or not all(isinstance(p, str) for p in pins):
            raise ImportFileError(L.SKILLS_JSON, 1, "pinned must be a list of skill names")
        bundle.pins = pins
    return bundle


def read_skills(src: SourceDir, folder: str) -> list[SkillFolder]:
    grouped: dict[tuple[str, str], dict[str, str]] = {}
    for relative in src.tree_under(folder):
        parts = relative[len(folder) + 1:].split("/")
        if len(parts) < 3:
            raise ImportFileError(relative, 0, "a skill file lives in skills/<category>/<name>/")
        grouped.setdefault((parts[0], parts[1]), {})["/".join(parts[2:])] = src.read_text(relative)
    folders = []
    for (category, name), files in sorted(grouped.items()):
        if "SKILL.md" not in files:
            raise ImportFileError(f"{folder}/{category}/{name}", 0, "a skill folder needs a SKILL.md")
        content = files.pop("SKILL.md")
        skill = SkillFolder(category=category, name=name, content=content, files=files)
        problem = skill_problem(skill)
        if problem:
            raise ImportFileError(f"{folder}/{category}/{name}/SKILL.md", 0, problem)
        folders.append(skill)
    return folders


def parse_mode_map(spec: str | None, target_mode: str) -> dict[str, str]:
    """`--mode`: `default` (DEFAULT_MODE_MAP) or `from=to,...` pairs into the target mode."""
    if not spec:
        return {}
    if spec.strip() == "default":
        return dict(DEFAULT_MODE_MAP[target_mode])
    wanted = CODE_TYPES if target_mode == "code" else CHAT_TYPES
    out = {}
    for pair in spec.split(","):
        source, sep, target = (part.strip() for part in pair.partition("="))
        if not sep or not source or target not in wanted:
            raise ValueError(f"--mode {spec!r}: {pair.strip()!r} is not TYPE=TYPE with a target type of {', '.join(wanted)}")
        out[source] = target
    return out


def check_bundle(bundle: Bundle, *, target_mode: str, mode_map: dict[str, str]) -> None:
    """Map record types into `target_mode` and check every row (raises ImportFileError).
    Types of the other mode need `mode_map`; types of neither mode are left out and noted."""
    wanted = set(CODE_TYPES if target_mode == "code" else CHAT_TYPES)
    other = set(CHAT_TYPES if target_mode == "code" else CODE_TYPES)
    unmapped: dict[str, int] = {}
    unknown: dict[str, int] = {}
    kept: list[Row] = []
    for row in bundle.records:
        value = row.value
        if not isinstance(value, dict):
            raise ImportFileError(row.where, row.line, "an L1 row is a JSON object")
        kind = TYPE_ALIASES.get(value.get("type"), value.get("type"))
        kind = mode_map.get(kind, kind)
        if kind in other:
            unmapped[kind] = unmapped.get(kind, 0) + 1
            continue
        if kind not in wanted:
            unknown[str(kind)] = unknown.get(str(kind), 0) + 1
            continue
        value["type"] = kind
        if kind != "work_task":
            value.pop("taskState", None)
        problem = record_row_problem(value)
        if problem:
            raise ImportFileError(row.where, row.line, problem)
        kept.append(row)
    if unmapped:
        listed = ", ".join(f"{k} ×{n}" for k, n in sorted(unmapped.items()))
        raise ValueError(
            f"the import holds records of the other mode ({listed}) and the profile is in {target_mode} mode; "
            f"pass --mode default or --mode TYPE=TYPE,... to say how to re-type them (see docs/transfer.md)"
        )
    if unknown:
        bundle.notes.append("left out records of unknown types: " + ", ".join(f"{k} ×{n}" for k, n in sorted(unknown.items())))
    bundle.records = kept
    for row in bundle.changes or []:
        if not isinstance(row.value, dict) or not isinstance(row.value.get("recordId"), str) or not isinstance(row.value.get("state"), dict):
            raise ImportFileError(row.where, row.line, "a change is {seq, recordId, action, actor, createdAt, state, note}")
    for row in bundle.scenes or []:
        problem = scene_pool_entry_problem(row.value)
        if problem:
            raise ImportFileError(row.where, 0, problem)
    for record_id, stats in bundle.hits.items():
        problem = hit_stats_problem(record_id, stats)
        if problem:
            raise ImportFileError(L.HIT_STATS, 0, problem)
    for filename, archived, text in bundle.blocks:
        problem = scene_file_problem(filename, text)
        if problem:
            raise ImportFileError(f"{L.L2_ARCHIVE if archived else L.L2_SCENES}/{filename}", problem[0], problem[1])
    for name, _ in bundle.l0 + bundle.feed:
        problem = shard_name_problem(name)
        if problem:
            raise ImportFileError(name, 0, problem)
    l1_files = bundle.cursors.get("l1", {}).get("files", {})
    if not isinstance(l1_files, dict) or any(shard_name_problem(str(k)) for k in l1_files):
        raise ImportFileError(L.L1_CURSOR, 1, "files must map shard names (YYYY-MM-DD.jsonl) to byte offsets")
    for row in bundle.persona_versions:
        problem = persona_version_problem(row.value)
        if problem:
            raise ImportFileError(row.where, row.line, problem)
