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

from apps.pipeline.rules.text import content_tokens, is_chinese, one_line

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
        groups = None
        if len(members) >= TOPIC_MIN_MEMBERS:
            vectors = _member_vectors(ctx, members)
            if vectors is None:
                ctx.add("topicGroupingUnavailable")
            else:
                groups = topic_groups(vectors)
                ctx.add("topics", len(groups))
        content, summary = render_block(scene.name, members, groups)
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


def render_block(scene_name: str, members: list, groups: list[list[int]] | None = None) -> tuple[str, str]:
    """The block's body and one-line summary. `groups`: the members (by index) of each topic,
    as `topic_groups` found them; one topic (or none given) renders the sections by type."""
    zh = sum(1 for m in members if is_chinese(m.content)) * 2 >= len(members)
    topics = [[members[i] for i in g] for g in (groups or [list(range(len(members)))]) if g]
    topics.sort(key=lambda t: (-len(t), -max(_rank(m.priority) for m in t), min(m.created_at for m in t)))
    labels = [topic_label([m.content for m in t], zh=zh) for t in topics] if len(topics) > 1 else []
    lines = [f"# {scene_name}", "", synthesis(members, zh=zh, topics=list(zip(labels, topics))), ""]
    if len(topics) > 1:
        for label, items in zip(labels, topics):
            lines.append(f"## {label}")
            lines.extend(_bullet(m, zh=zh) for m in sorted(items, key=lambda r: (-_rank(r.priority), r.created_at)))
            lines.append("")
    else:
        by_type: dict[str, list] = defaultdict(list)
        for m in members:
            by_type[m.type].append(m)
        for rtype, (heading_zh, heading_en) in HEADINGS.items():
            items = by_type.get(rtype)
            if not items:
                continue
            lines.append(f"## {heading_zh if zh else heading_en}")
            lines.extend(_bullet(m, zh=zh) for m in sorted(items, key=lambda r: (-_rank(r.priority), r.created_at)))
            lines.append("")
    top = max(members, key=lambda r: (_rank(r.priority), r.created_at))
    if labels:
        summary = one_line(f"{len(members)} memories in {len(topics)} topics ({', '.join(labels[:6])}); key: {top.content}", 300)
    else:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(_type_counts(members).items()))
        summary = one_line(f"{len(members)} memories ({kinds}); key: {top.content}", 300)
    return "\n".join(lines).rstrip() + "\n", summary


def _bullet(m, *, zh: bool) -> str:
    tag = ""
    if m.type == "work_task":
        tag = TASK_TAGS.get(m.task_state or "open", TASK_TAGS["open"])[0 if zh else 1] + " "
    return f"- {tag}{one_line(m.content, 500)} ({m.record_id})"


def _type_counts(members: list) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for m in members:
        counts[m.type] += 1
    return counts


# ------------------------------------------------------------------ topics by embedding similarity

# Members whose vectors are this close on average form one topic (average linkage), in the
# debiased space where a Chinese and an English sentence about the same thing are close:
# chosen with bench/l2_grouping.py on hand-written blocks (docs/scenes.md).
TOPIC_SIMILARITY = 0.25
TOPIC_MIN_MEMBERS = 4  # a smaller block is read at a glance: no topic sections


def topic_groups(vectors: list[list[float]], *, threshold: float = TOPIC_SIMILARITY) -> list[list[int]]:
    """Average-link agglomerative grouping of unit vectors: the two groups whose members are
    closest on average join while that average is at least `threshold`. Returns the member
    indexes of each group, in order of their first member."""
    import numpy as np

    n = len(vectors)
    if n == 0:
        return []
    matrix = np.asarray(vectors, dtype=np.float64)
    sims = matrix @ matrix.T
    np.fill_diagonal(sims, -np.inf)
    sizes = np.ones(n)
    members: list[list[int]] = [[i] for i in range(n)]
    alive = np.ones(n, dtype=bool)
    for _ in range(n - 1):
        a, b = divmod(int(np.argmax(sims)), n)
        if sims[a, b] < threshold:
            break
        merged = (sizes[a] * sims[a] + sizes[b] * sims[b]) / (sizes[a] + sizes[b])  # Lance-Williams, average linkage
        sims[a], sims[:, a] = merged, merged
        sims[a, a] = -np.inf
        sims[b], sims[:, b] = -np.inf, -np.inf
        sizes[a] += sizes[b]
        members[a].extend(members[b])
        alive[b] = False
    groups = [sorted(members[i]) for i in range(n) if alive[i]]
    return sorted(groups, key=lambda g: g[0])


_LABEL_STOPWORD_TEXT = (
    "always never use using every all new need needs must should don't dont also only before after more less one two "
    "like get got make made want wants go goes going really very much many thing things"
)
_LABEL_STOPWORDS = frozenset(_LABEL_STOPWORD_TEXT.split())
_LABEL_STOP_CHARS = frozenset("的了是在我你他她它们这那就都也还和与把被吧呢啊呀吗哦嗯个一不要有里上下去来到说会能得着过很太")
TOPICS_LISTED = 5  # the opening paragraph names this many topics, then says how many more
LABEL_WORDS = 3


def topic_label(contents: list[str], *, zh: bool) -> str:
    """A few words the topic's members share (those most of them use), else its first member
    in short: the heading of the topic's section."""
    df: dict[str, int] = defaultdict(int)
    for text in contents:
        for tok in content_tokens(text):
            if tok in _LABEL_STOPWORDS or tok.isdigit() or (is_chinese(tok) and any(ch in _LABEL_STOP_CHARS for ch in tok)):
                continue  # a Chinese pair with a function character in it ("在里") is not a word
            df[tok] += 1
    shared = sorted((t for t, n in df.items() if n >= 2), key=lambda t: (-df[t], -len(t), t))
    picked: list[str] = []
    for tok in shared:
        if any(set(tok) & set(p) for p in picked if is_chinese(tok) and is_chinese(p)):
            continue  # "海鲜" and "鲜过" are one word
        picked.append(tok)
        if len(picked) == LABEL_WORDS:
            break
    if picked:
        return " · ".join(picked)
    return one_line(contents[0], 40).rstrip("。.")


def _member_vectors(ctx, members: list) -> list[list[float]] | None:
    """The members' topic vectors from apps/search (`matching.topic_vectors`); None when the
    embedding model is unavailable (the block is then rendered by type, as before)."""
    from apps.search import matching

    try:
        return matching.topic_vectors([m.content for m in members])
    except matching.EmbeddingUnavailable as exc:
        ctx.counts["topicVectorsError"] = str(exc)[:300]
        return None


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


def synthesis(members: list, *, zh: bool, topics: list[tuple[str, list]] | None = None) -> str:
    """The block's opening paragraph: how many memories of which kinds, the topics they fall
    into (with how many each), how many tasks are still open, and the most important points
    in short — a summary to read before the bullets."""
    counts = _type_counts(members)
    kinds = [(t, counts[t]) for t in HEADINGS if counts.get(t)]
    open_tasks = sum(1 for m in members if m.type == "work_task" and (m.task_state or "open") == "open")
    ranked = sorted(members, key=lambda r: (-_rank(r.priority), r.created_at))
    if topics:
        # One point per topic first, so the summary covers the block rather than its biggest topic.
        leads = [sorted(items, key=lambda r: (-_rank(r.priority), r.created_at))[0] for _, items in topics]
        ranked = leads + [m for m in ranked if m not in leads]
    key = [one_line(m.content, SYNTHESIS_ITEM_CHARS) for m in ranked[:SYNTHESIS_KEY_ITEMS]]
    if zh:
        parts = "、".join(f"{n} {KIND_WORDS[t][0]}" for t, n in kinds)
        text = f"共 {len(members)} 条记忆：{parts}"
        if topics:
            more = "等" if len(topics) > TOPICS_LISTED else ""
            text += f"，分 {len(topics)} 个话题：" + "、".join(f"{label}（{len(items)}）" for label, items in topics[:TOPICS_LISTED]) + more
        text += (f"，其中 {open_tasks} 个待办未完成" if open_tasks else "") + "。"
        return text + "要点：" + "；".join(k.rstrip("。.") for k in key) + "。"
    parts = ", ".join(f"{n} {KIND_WORDS[t][1] if n == 1 else KIND_WORDS[t][2]}" for t, n in kinds)
    text = f"{len(members)} memories: {parts}"
    if topics:
        more = f" and {len(topics) - TOPICS_LISTED} more" if len(topics) > TOPICS_LISTED else ""
        text += f", in {len(topics)} topics: " + ", ".join(f"{label} ({len(items)})" for label, items in topics[:TOPICS_LISTED]) + more
    text += (f"; {open_tasks} task{'s' if open_tasks != 1 else ''} still open" if open_tasks else "") + "."
    return text + " Key points: " + "; ".join(k.rstrip("。.") for k in key) + "."


def _rank(priority: int) -> int:
    return 101 if priority == -1 else priority
