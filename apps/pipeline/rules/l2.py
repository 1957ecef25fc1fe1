"""Rules driver of l2_organize: one scene block per pool scene, rendered from its members.

read_l1_increment (to the end, or until time runs short) names the scenes whose records
changed; each such scene's block is rendered again from all its live members and written
with l2_commit together with the increment's cursor. A block whose members are all
tombstoned is soft-deleted. New blocks beyond l2.maxScenes are deferred (counted), never
forced: the cap is the organizer's to manage by consolidating, which rules cannot judge.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from django.utils import timezone

from apps.pipeline.rules.text import is_chinese, one_line

HEADINGS = {
    "work_method": ("工作约定", "Conventions"),
    "work_fact": ("决策与事实", "Decisions and facts"),
    "work_task": ("待办", "Tasks"),
    "work_artifact": ("产物", "Artifacts"),
    "persona": ("偏好与个人信息", "Profile and preferences"),
    "instruction": ("回复要求", "Instructions"),
    "episodic": ("经历", "Events"),
}
TASK_TAGS = {"open": ("[待办]", "[open]"), "done": ("[已完成]", "[done]"), "dropped": ("[已废弃]", "[dropped]")}
PERSONA_TYPES = {"persona", "instruction"}


def block_filename(scene_name: str) -> str:
    base = re.sub(r"[^\w.\-]+", "-", scene_name, flags=re.UNICODE).strip("-._") or "scene"
    return base[:117] + ".md"


def run(ctx) -> None:
    from apps.records.selectors import scene_pks_of_records
    from apps.scenes.selectors import surviving_scenes

    profile = ctx.profile
    cursor: Any = None
    changed_ids: list[str] = []
    persona_changes = 0
    while True:
        params: dict[str, Any] = {"maxRecords": 200}
        if cursor is not None:
            params["cursor"] = cursor
        ctx.progress("read", f"reading L1 changes ({len(changed_ids)} so far)", force=True)
        increment = ctx.tool("read_l1_increment", params)
        records = increment.get("records") or []
        ctx.add("recordsRead", len(records))
        for rec in records:
            changed_ids.append(str(rec.get("id")))
            if rec.get("type") in PERSONA_TYPES:
                persona_changes += 1
        cursor = increment.get("nextCursor")
        if not increment.get("truncated") or ctx.remaining() < 30:
            break
    if cursor is None:
        return
    scenes = {scene.pk: scene for scene in surviving_scenes(profile=profile, scene_pks=scene_pks_of_records(profile=profile, record_ids=changed_ids))}
    # Scenes deferred earlier (the cap was reached) get their block once a slot is free.
    for scene in _scenes_without_block(profile):
        scenes.setdefault(scene.pk, scene)
    writes, deferred = _render_writes(ctx, list(scenes.values()))
    ctx.counts["scenesDeferred"] = deferred
    payload: dict[str, Any] = {"sceneWrites": writes, "cursor": cursor if isinstance(cursor, (str, int)) else str(cursor)}
    if persona_changes and profile.mode == "chat":
        payload["personaSignal"] = True
        payload["personaReason"] = f"{persona_changes} persona/instruction records changed"
    ctx.progress("commit", f"writing {len(writes)} scene blocks", force=True)
    result = ctx.tool("l2_commit", payload)
    ctx.add("scenesWritten", len(result.get("applied") or []))
    ctx.counts["liveCount"] = result.get("liveCount")
    ctx.counts["sceneCountWarning"] = result.get("sceneCountWarning")


def _scenes_without_block(profile) -> list:
    from apps.scenes.selectors import block_filenames, pool_scenes_with_live_records

    named = block_filenames(profile=profile)
    return [e for e in pool_scenes_with_live_records(profile=profile) if block_filename(e.name) not in named]


def _render_writes(ctx, scenes: list) -> tuple[list[dict[str, Any]], int]:
    from apps.accounts.config import profile_setting
    from apps.hitstats.selectors import hit_counts
    from apps.records.selectors import scene_member_records
    from apps.scenes.selectors import block_by_filename, live_block_count, scene_and_merged_pks

    profile = ctx.profile
    cap = int(profile_setting(profile, "l2.maxScenes"))
    live = live_block_count(profile=profile)
    writes: list[dict[str, Any]] = []
    deferred = 0
    now = timezone.now().isoformat(timespec="seconds").replace("+00:00", "Z")
    for scene in sorted(scenes, key=lambda s: s.scene_id):
        members = scene_member_records(profile=profile, scene_pks=scene_and_merged_pks(scene))
        filename = block_filename(scene.name)
        block = block_by_filename(profile=profile, filename=filename)
        if block is not None and block.archived:
            ctx.add("archivedBlocksSkipped")
            continue
        if not members:
            if block is not None:
                writes.append({"action": "delete", "filename": filename, "reason": "every member record was tombstoned"})
            continue
        hits = hit_counts(profile=profile, record_ids=[m.record_id for m in members])
        content, summary = render_block(scene.name, members)
        meta = {
            "created": block.meta_created.isoformat(timespec="seconds").replace("+00:00", "Z") if block else now,
            "updated": now,
            "summary": summary,
            "heat": len(members) + sum(hits.values()),
        }
        if block is None:
            if live >= cap:
                deferred += 1
                continue
            live += 1
            action = "create"
        else:
            action = "update"
        writes.append({"action": action, "filename": filename, "meta": meta, "content": content, "members": [m.record_id for m in members]})
    return writes, deferred


def render_block(scene_name: str, members: list) -> tuple[str, str]:
    zh = sum(1 for m in members if is_chinese(m.content)) * 2 >= len(members)
    groups: dict[str, list] = defaultdict(list)
    for m in members:
        groups[m.type].append(m)
    lines = [f"# {scene_name}", "", synthesis(members, zh=zh), ""]
    for rtype, (heading_zh, heading_en) in HEADINGS.items():
        items = groups.get(rtype)
        if not items:
            continue
        lines.append(f"## {heading_zh if zh else heading_en}")
        for m in sorted(items, key=lambda r: (-_rank(r.priority), r.created_at)):
            tag = ""
            if m.type == "work_task":
                tag = TASK_TAGS.get(m.task_state or "open", TASK_TAGS["open"])[0 if zh else 1] + " "
            lines.append(f"- {tag}{one_line(m.content, 500)} ({m.record_id})")
        lines.append("")
    kinds = ", ".join(f"{len(v)} {k}" for k, v in sorted(groups.items()))
    top = max(members, key=lambda r: (_rank(r.priority), r.created_at))
    summary = one_line(f"{len(members)} memories ({kinds}); key: {top.content}", 300)
    return "\n".join(lines).rstrip() + "\n", summary


KIND_WORDS = {
    "work_method": ("条工作约定", "convention", "conventions"),
    "work_fact": ("条决策与事实", "decision or fact", "decisions and facts"),
    "work_task": ("个待办", "task", "tasks"),
    "work_artifact": ("个产物", "artifact", "artifacts"),
    "persona": ("条个人信息", "personal fact", "personal facts"),
    "instruction": ("条回复要求", "instruction", "instructions"),
    "episodic": ("段经历", "event", "events"),
}
SYNTHESIS_KEY_ITEMS = 3
SYNTHESIS_ITEM_CHARS = 70


def synthesis(members: list, *, zh: bool) -> str:
    """The block's opening paragraph: what kinds of memory it holds, how many tasks are still
    open, and its most important points in short — a summary to read before the bullets."""
    counts: dict[str, int] = defaultdict(int)
    for m in members:
        counts[m.type] += 1
    kinds = [(t, counts[t]) for t in HEADINGS if counts.get(t)]
    open_tasks = sum(1 for m in members if m.type == "work_task" and (m.task_state or "open") == "open")
    key = [one_line(m.content, SYNTHESIS_ITEM_CHARS) for m in sorted(members, key=lambda r: (-_rank(r.priority), r.created_at))[:SYNTHESIS_KEY_ITEMS]]
    if zh:
        parts = "、".join(f"{n} {KIND_WORDS[t][0]}" for t, n in kinds)
        text = f"共 {len(members)} 条记忆：{parts}" + (f"，其中 {open_tasks} 个待办未完成" if open_tasks else "") + "。"
        return text + "要点：" + "；".join(k.rstrip("。.") for k in key) + "。"
    parts = ", ".join(f"{n} {KIND_WORDS[t][1] if n == 1 else KIND_WORDS[t][2]}" for t, n in kinds)
    text = f"{len(members)} memories: {parts}" + (f"; {open_tasks} task{'s' if open_tasks != 1 else ''} still open" if open_tasks else "") + "."
    return text + " Key points: " + "; ".join(k.rstrip("。.") for k in key) + "."


def _rank(priority: int) -> int:
    return 101 if priority == -1 else priority
