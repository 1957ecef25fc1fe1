"""`manage.py memory import`: write a checked `Bundle` into a profile.

Everything that can be refused is checked first (`bundle.check_bundle` and the shard
plan below), so a bad input leaves the profile exactly as it was. Then one transaction
per layer (L1 with the pool, hit statistics and the L1 cursor; L2 with its cursor; L3
with its cursor), then the files (skills, skill feed, L0 shards). L0 is written last: its
cursor is already committed by then, so the extraction trigger never sees imported rows
as new. Ids already in the profile are skipped, so the import can be re-run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from apps.accounts.locks import profile_write_lock
from apps.accounts.models import Profile
from apps.accounts.services import profile_settings_restore
from apps.conversations import transfer as l0
from apps.conversations.models import CURSOR_L1, CURSOR_L2, CURSOR_L3, CURSOR_SKILL_FEED
from apps.hitstats.transfer import hit_stats_restore
from apps.persona.transfer import persona_restore_all
from apps.records import transfer as l1
from apps.records.models import L1Record
from apps.scenes.blocks import iso, parse_iso
from apps.scenes.models import SceneBlock
from apps.scenes.services import (
    scene_blocks_restore,
    scene_pool_from_names,
    scene_pool_restore,
)
from apps.skills.transfer import skills_restore
from apps.transfer.bundle import Bundle
from apps.transfer.source import ImportFileError

Progress = Callable[[str, int], Any]
ACTOR = "manage.py memory import"


@dataclass
class Summary:
    dry_run: bool
    layers: dict[str, dict[str, int]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = []
        for layer, counts in self.layers.items():
            out.append(f"{layer}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
        out.extend(f"note: {n}" for n in self.notes)
        return out


class _Bar:
    def __init__(self, progress: Progress | None, layer: str, total: int):
        self.handle = progress(layer, total) if progress else None

    def done(self, n: int = 1) -> None:
        if self.handle is not None:
            self.handle.update(n)

    def close(self) -> None:
        if self.handle is not None and hasattr(self.handle, "close"):
            self.handle.close()


def _plan_shards(profile: Profile, bundle: Bundle) -> dict[tuple[str, str], str]:
    plan = {}
    for area, shards in (("l0", bundle.l0), ("skill-feed", bundle.feed)):
        for name, data in shards:
            try:
                plan[(area, name)] = l0.shard_import_action(profile=profile, area=area, name=name, data=data)
            except ValueError as exc:
                raise ImportFileError(f"{area}/{name}", 0, str(exc)) from None
    return plan


def profile_import(*, profile: Profile, bundle: Bundle, dry_run: bool = False, progress: Progress | None = None,
                   actor: str = ACTOR) -> Summary:
    """Import a bundle already passed through `check_bundle` for this profile's mode."""
    plan = _plan_shards(profile, bundle)
    summary = Summary(dry_run=dry_run, notes=list(bundle.notes))
    rows = [r.value for r in bundle.records]
    if bundle.kind == "tdai":
        rows = _last_wins(rows)
    if dry_run:
        present = set(L1Record.objects.filter(profile=profile, record_id__in=[r["id"] for r in rows]).values_list("record_id", flat=True))
        blocks_present = set(SceneBlock.objects.filter(profile=profile, removed=False).values_list("filename", "archived"))
        summary.layers = {
            "l0": {"shards": sum(1 for (a, _), act in plan.items() if a == "l0" and act != "skip"),
                   "rows": sum(d.count(b"\n") for n, d in bundle.l0 if plan[("l0", n)] != "skip")},
            "l1": {"records": sum(1 for r in rows if r["id"] not in present), "tombstones": sum(1 for r in rows if r["id"] not in present and r.get("deleted")),
                   "skipped": len(present), "changes": len(bundle.changes or [])},
            "l2": {"blocks": sum(1 for f, a, _ in bundle.blocks if (f, a) not in blocks_present),
                   "skipped": sum(1 for f, a, _ in bundle.blocks if (f, a) in blocks_present)},
            "l3": {"versions": len(bundle.persona_versions) or int(bundle.user_md is not None)},
            "skills": {"skills": len(bundle.skills), "pinned": len(bundle.pins)},
            "skill-feed": {"shards": sum(1 for (a, _), act in plan.items() if a == "skill-feed" and act != "skip")},
        }
        return summary

    if bundle.profile_meta:
        profile_settings_restore(profile=profile, settings=bundle.profile_meta.get("settings") or {},
                                 known_projects=bundle.profile_meta.get("knownProjects") or [])
    bar = _Bar(progress, "l1", len(rows))
    with profile_write_lock(profile):
        if bundle.scenes is not None:
            scenes, pool_counts = scene_pool_restore(profile=profile, actor=actor, entries=[r.value for r in bundle.scenes])
        else:
            scenes, pool_counts = _pool_from_records(profile, actor, rows), {}
        result = l1.records_import(profile=profile, actor=actor, rows=rows, changes=[c.value for c in bundle.changes] if bundle.changes else None,
                                   scenes=scenes)
        hits = hit_stats_restore(profile=profile, records=bundle.hits)
        l1_cursor = bundle.cursors.get(CURSOR_L1) or _cursor_covering(bundle)
        _restore_l1_cursor(profile, l1_cursor, plan, bundle)
    bar.done(len(rows))
    bar.close()
    summary.layers["l1"] = {"records": result["records"], "tombstones": result["tombstones"], "changes": result["changes"],
                            "skipped": result["skipped"], "scenes": pool_counts.get("created", len(scenes)), "hitStats": hits["records"]}

    bar = _Bar(progress, "l2", len(bundle.blocks))
    with profile_write_lock(profile):
        blocks = scene_blocks_restore(profile=profile, actor=actor, files=bundle.blocks)
        l0.cursor_restore(profile=profile, kind=CURSOR_L2, value={"lastRecordId": _l2_cursor(profile, bundle, result["seqMap"])})
    bar.done(len(bundle.blocks))
    bar.close()
    summary.layers["l2"] = {"blocks": blocks["created"], "members": blocks["members"], "skipped": blocks["skipped"]}

    bar = _Bar(progress, "l3", 1)
    with profile_write_lock(profile):
        persona = persona_restore_all(profile=profile, actor=actor, versions=[v.value for v in bundle.persona_versions],
                                      proposal=bundle.persona_proposal, user_md=bundle.user_md, user_temp_md=bundle.user_temp_md)
        l3_cursor = bundle.cursors.get(CURSOR_L3)
        if l3_cursor is None and bundle.kind == "tdai":
            l3_cursor = _newest_block_update(bundle)
        if l3_cursor:
            l0.cursor_restore(profile=profile, kind=CURSOR_L3, value=l3_cursor)
    bar.done()
    bar.close()
    summary.layers["l3"] = persona

    bar = _Bar(progress, "skills", len(bundle.skills))
    skill_counts = skills_restore(profile=profile, actor=actor, folders=bundle.skills, pins=bundle.pins)
    bar.done(len(bundle.skills))
    bar.close()
    summary.layers["skills"] = skill_counts

    for area, shards, key in (("skill-feed", bundle.feed, "skill-feed"), ("l0", bundle.l0, "l0")):
        bar = _Bar(progress, key, len(shards))
        written = 0
        rows_written = 0
        if area == "skill-feed" and CURSOR_SKILL_FEED in bundle.cursors:
            with profile_write_lock(profile):
                l0.cursor_restore(profile=profile, kind=CURSOR_SKILL_FEED, value=bundle.cursors[CURSOR_SKILL_FEED])
        for name, data in shards:
            if l0.shard_import(profile=profile, area=area, name=name, data=data) != "skip":
                written += 1
                rows_written += data.count(b"\n")
            bar.done()
        bar.close()
        summary.layers[key] = {"shards": written, "rows": rows_written, "skipped": len(shards) - written}
    l0.l0_index_imported(profile=profile)
    return summary


def _last_wins(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Several lines of one id (append-only shards): the last one is the record."""
    by_id: dict[str, dict[str, Any]] = {}
    for row in rows:
        by_id.pop(row["id"], None)
        by_id[row["id"]] = row
    return list(by_id.values())


def _pool_from_records(profile: Profile, actor: str, rows: list[dict[str, Any]]):
    usage: dict[str, tuple[int, Any]] = {}
    for row in rows:
        name = (row.get("scene_name") or "").strip()
        if not name:
            continue
        count, newest = usage.get(name, (0, None))
        at = parse_iso(row.get("updatedAt")) or parse_iso(row.get("createdAt"))
        usage[name] = (count + 1, max(filter(None, [newest, at]), default=None))
    return scene_pool_from_names(profile=profile, actor=actor, usage=usage)


def _cursor_covering(bundle: Bundle) -> dict[str, Any]:
    """An L1 cursor past every imported L0 row: nothing imported is extracted again."""
    return {"version": 2, "files": {name: len(data) for name, data in bundle.l0}}


def _restore_l1_cursor(profile: Profile, value: dict[str, Any], plan: dict[tuple[str, str], str], bundle: Bundle) -> None:
    if l0.cursor_restore(profile=profile, kind=CURSOR_L1, value=value):
        return
    # The profile already extracts from its own shards: cover the shards this import
    # creates, and leave the others where they are.
    sizes = dict(bundle.l0)
    created = {name: len(sizes[name]) for (area, name), action in plan.items() if area == "l0" and action == "create"}
    l0.l1_cursor_cover(profile=profile, shards=created)


def _l2_cursor(profile: Profile, bundle: Bundle, seq_map: dict[int, int]) -> int:
    if bundle.kind == "tdai" or CURSOR_L2 not in bundle.cursors:
        # Every imported record is already organised into the imported blocks.
        return l1.newest_change_id(profile=profile)
    ordinal = bundle.cursors[CURSOR_L2].get("lastRecordId") or 0
    if not isinstance(ordinal, int) or ordinal <= 0:
        return 0
    if ordinal in seq_map:
        return seq_map[ordinal]
    earlier = [seq for seq in seq_map if seq <= ordinal]
    return seq_map[max(earlier)] if earlier else l1.change_id_at(profile=profile, ordinal=ordinal)


def _newest_block_update(bundle: Bundle) -> dict[str, Any] | None:
    from apps.scenes.blocks import parse_file

    times = [parse_iso(parse_file(text)[0].get("updated")) for _, _, text in bundle.blocks]
    newest = max(filter(None, times), default=None)
    return {"updated": iso(newest)} if newest else None
