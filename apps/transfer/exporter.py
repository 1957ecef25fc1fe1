"""`manage.py memory export <profile> <dir>` and the dashboard's zip: one profile in the
SPEC §7 layout. Reads go through each app's export functions; nothing is written to the
database."""

from __future__ import annotations

import json
import zipfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from apps.accounts.locks import profile_write_lock
from apps.accounts.models import Profile
from apps.conversations import transfer as l0
from apps.conversations.models import CURSOR_L1, CURSOR_L2, CURSOR_L3, CURSOR_SKILL_FEED
from apps.hitstats.services import hit_stats_export
from apps.persona import transfer as l3
from apps.persona.services import persona_live_text, persona_proposal_text
from apps.records import transfer as l1
from apps.scenes.services import scene_blocks_export, scene_pool_export
from apps.skills import transfer as skills
from apps.transfer import layout as L

Progress = Callable[[str, int], Any]  # (layer, items) -> progress handle with .update()


def _dumps(value: Any) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode("utf-8")


def _line(value: Any) -> bytes:
    return (json.dumps(value, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


def profile_snapshot(*, profile: Profile) -> tuple[dict[str, bytes], dict[str, int]]:
    """Every file of the export as {relative path: bytes}, and counts per layer.

    The database is read under the profile's write lock, so records, history, blocks,
    persona and cursors are one consistent state; shards are append-only and copied
    afterwards through their last complete line, so they hold at least every row the
    L1 cursor covers."""
    files: dict[str, bytes] = {}
    counts: dict[str, int] = {}
    with profile_write_lock(profile):
        rows, changes = l1.records_export(profile=profile)
        cursors = l0.cursors_export(profile=profile)
        hits = hit_stats_export(profile=profile)
        pool = scene_pool_export(profile=profile)
        blocks = scene_blocks_export(profile=profile)
        persona = l3.persona_export(profile=profile)
        user_md, user_temp_md = persona_live_text(profile=profile), persona_proposal_text(profile=profile)
        l2_ordinal = l1.change_ordinal(profile=profile, change_id=int(cursors.get(CURSOR_L2, {}).get("lastRecordId") or 0))
    files[L.PROFILE_JSON] = _dumps({
        "format": L.FORMAT, "version": L.FORMAT_VERSION, "profile": profile.slug, "name": profile.name, "mode": profile.mode,
        "settings": profile.settings or {}, "knownProjects": profile.known_projects or [],
    })
    by_day: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_day[(row["createdAt"] or "0000-00-00")[:10]].append(row)
    for day, day_rows in sorted(by_day.items()):
        files[f"{L.L1_RECORDS}/{day}.jsonl"] = b"".join(_line(r) for r in day_rows)
    files[L.L1_CHANGES] = b"".join(_line(c) for c in changes)
    counts.update(records=len(rows), tombstones=sum(1 for r in rows if r["deleted"]), changes=len(changes))
    # The table's own export, with the time it was last changed rather than now, so two
    # exports of the same state are the same bytes.
    newest_hit = max((s["lastHitAt"] or "" for s in hits["records"].values()), default="")
    hits["updatedAt"] = newest_hit or None
    files[L.HIT_STATS] = _dumps(hits)
    counts["hitStats"] = len(hits["records"])
    files[L.SCENES_JSON] = _dumps({"version": 1, "scenes": pool})
    counts["scenes"] = len(pool)
    for filename, archived, text in blocks:
        files[f"{L.L2_ARCHIVE if archived else L.L2_SCENES}/{filename}"] = text.encode("utf-8")
    counts.update(blocks=sum(1 for b in blocks if not b[1]), archivedBlocks=sum(1 for b in blocks if b[1]))
    files[L.L1_CURSOR] = _dumps(cursors.get(CURSOR_L1) or {"version": 2, "files": {}})
    files[L.L2_CURSOR] = _dumps({"lastRecordId": l2_ordinal})
    files[L.L3_CURSOR] = _dumps(cursors.get(CURSOR_L3) or {})
    if CURSOR_SKILL_FEED in cursors:
        files[L.FEED_CURSOR] = _dumps(cursors[CURSOR_SKILL_FEED])
    files[L.L3_VERSIONS] = b"".join(_line(v) for v in persona["versions"])
    if persona["proposal"] is not None:
        files[L.L3_PROPOSAL] = _dumps(persona["proposal"])
    files[L.USER_MD] = user_md.encode("utf-8")
    files[L.USER_TEMP_MD] = user_temp_md.encode("utf-8")
    counts["personaVersions"] = len(persona["versions"])
    for area, folder, key in (("l0", L.L0, "l0Shards"), ("skill-feed", L.FEED, "feedShards")):
        paths = l0.shard_paths(profile=profile, area=area)
        for path in paths:
            files[f"{folder}/{path.name}"] = l0.shard_committed_bytes(path)
        counts[key] = len(paths)
    skill_files, pins = skills.skills_export(profile=profile)
    for relative, data in skill_files:
        files[f"{L.SKILLS}/{relative}"] = data
    files[L.SKILLS_JSON] = _dumps({"pinned": pins})
    counts.update(skills=sum(1 for r, _ in skill_files if r.endswith("/SKILL.md")), pinnedSkills=len(pins))
    return files, counts


def profile_export(*, profile: Profile, dest: Path, progress: Progress | None = None) -> dict[str, int]:
    """Write the export into `dest` (which must not exist or be empty)."""
    if dest.is_symlink() or (dest.exists() and (not dest.is_dir() or any(dest.iterdir()))):
        raise ValueError(f"{dest} exists and is not an empty directory; export into a new one")
    files, counts = profile_snapshot(profile=profile)
    layers: dict[str, list[str]] = defaultdict(list)
    for relative in files:
        layers[_layer_of(relative)].append(relative)
    for layer in ("l0", "l1", "l2", "l3", "skills", "skill-feed", "profile"):
        names = sorted(layers.get(layer, []))
        bar = progress(layer, len(names)) if progress else None
        for relative in names:
            target = dest / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(files[relative])
            if bar is not None:
                bar.update(1)
        if bar is not None and hasattr(bar, "close"):
            bar.close()
    return counts


def profile_export_zip(*, profile: Profile, handle: BinaryIO) -> dict[str, int]:
    """The same files as `profile_export`, as a zip written to `handle`."""
    files, counts = profile_snapshot(profile=profile)
    with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for relative in sorted(files):
            archive.writestr(f"{profile.slug}/{relative}", files[relative])
    return counts


def _layer_of(relative: str) -> str:
    if relative.startswith(L.SKILLS + "/") or relative == L.SKILLS_JSON:
        return "skills"
    if relative in (L.USER_MD, L.USER_TEMP_MD) or relative.startswith(f"{L.DB}/l3/"):
        return "l3"
    for layer in ("l0", "l1", "l2", "skill-feed"):
        if relative.startswith(f"{L.DB}/{layer}/"):
            return layer
    return "profile"
