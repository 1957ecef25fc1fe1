"""Scene blocks and the scene pool in and out of the SPEC §7 layout."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.accounts.locks import profile_write_lock
from apps.accounts.models import Profile
from apps.accounts.services import audit_record
from apps.scenes import blocks as B
from apps.scenes.models import SceneBlock, SceneEntry
from apps.scenes.services.commit import (
    HEAT_MAX,
    _backup,
    _mirror,
    _set_members,
    _snapshot,
)
from apps.tools.errors import invalid_field


def scene_block_import(*, profile: Profile, actor: str, filename: str, text: str, archived: bool = False) -> dict[str, Any]:
    """Load one block file of the §7 layout (META header + body) as a live or archived
    block, replacing a block of that name in the same state (its previous body is backed
    up). Members are taken as written (from the body's `(l1_…)` references when the file
    has no members line); the import order of L1 and L2 does not matter."""
    problem = B.filename_problem(filename)
    if problem:
        raise invalid_field("filename", problem)
    if B.text_problem(text):
        raise invalid_field("text", B.text_problem(text) or "")
    meta, members, body = B.parse_file(text)
    if members is None:
        # A file without a members line (TencentDB-Agent-Memory form): the members are the
        # L1 ids the body cites as (memory ID) references, as l2_commit would default them.
        members = B.referenced_ids(body)
    now = timezone.now()
    created = B.parse_iso(meta.get("created")) or now
    updated = B.parse_iso(meta.get("updated")) or created
    with profile_write_lock(profile):
        block = SceneBlock.objects.filter(profile=profile, filename=filename, removed=False, archived=archived).first()
        before = None
        if block is not None:
            before = _snapshot(block)
            _backup(block, "import")
        else:
            block = SceneBlock(profile=profile, filename=filename, archived=archived, created_at=min(created, now))
            if archived:
                block.archived_at = now
        block.content = body
        block.summary = str(meta.get("summary", ""))[:1000]
        block.heat = min(max(int(meta.get("heat") or 0), 0), HEAT_MAX)
        block.meta_created, block.meta_updated, block.written_at = created, updated, now
        block.save()
        _set_members(block, list(dict.fromkeys(members)))
        audit_record(profile=profile, actor=actor, tool="import", action="import", target_type="scene_block", target_id=filename,
                     before=before, after=_snapshot(block), note={"archived": archived})
        transaction.on_commit(lambda: _mirror(profile))
    return {"success": True, "filename": filename, "archived": archived, "members": len(set(members))}


# ------------------------------------------------------------------ export / restore
# Used by `manage.py memory export|import` (apps.transfer). Restores write inside the
# caller's `profile_write_lock` transaction and keep what a commit would stamp anew.


def scene_pool_export(*, profile: Profile) -> list[dict[str, Any]]:
    """The pool as `scenes.json` lists it: SPEC §1.3 fields plus `reason` and `reserved`."""
    out = []
    for entry in SceneEntry.objects.filter(profile=profile).select_related("merged_into").order_by("scene_id"):
        data = entry.as_dict()
        data["reason"] = entry.reason
        data["reserved"] = entry.reserved
        out.append(data)
    return out


def scene_pool_entry_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return "a scene entry is a JSON object"
    if not isinstance(entry.get("id"), str) or not entry["id"].strip() or len(entry["id"]) > 64:
        return f"scene id must be text of at most 64 characters, got {entry.get('id')!r}"
    if not isinstance(entry.get("name"), str) or not entry["name"].strip() or len(entry["name"]) > 300:
        return f"{entry['id']}: name must be text of at most 300 characters"
    if not isinstance(entry.get("aliases", []), list):
        return f"{entry['id']}: aliases must be a list"
    for key in ("createdAt", "lastUsedAt"):
        if entry.get(key) is not None and B.parse_iso(entry.get(key)) is None:
            return f"{entry['id']}: {key} must be an ISO 8601 time"
    if isinstance(entry.get("useCount", 0), bool) or not isinstance(entry.get("useCount", 0), int):
        return f"{entry['id']}: useCount must be an integer"
    return None


def scene_pool_restore(*, profile: Profile, actor: str, entries: list[dict[str, Any]]) -> tuple[dict[str, SceneEntry], dict[str, int]]:
    """Create the pool entries the profile lacks (same ids, names, counts, times, merges).
    An entry whose id or name is already taken is skipped. Returns (every entry of the
    profile by id, counts)."""
    existing = {e.scene_id: e for e in SceneEntry.objects.filter(profile=profile)}
    names = {e.name for e in existing.values()}
    created: list[tuple[SceneEntry, dict[str, Any]]] = []
    skipped = 0
    for data in entries:
        if data["id"] in existing or data["name"].strip() in names:
            skipped += 1
            continue
        entry = SceneEntry.objects.create(
            profile=profile, scene_id=data["id"], name=data["name"].strip(), aliases=list(data.get("aliases") or []),
            project=str(data.get("project") or "")[:1000], cwd=str(data.get("cwd") or "")[:1000],
            reason=str(data.get("reason") or ""), use_count=int(data.get("useCount") or 0),
            last_used_at=B.parse_iso(data.get("lastUsedAt")), reserved=bool(data.get("reserved", False)),
        )
        names.add(entry.name)
        existing[entry.scene_id] = entry
        created.append((entry, data))
    for entry, data in created:
        updates: dict[str, Any] = {}
        if B.parse_iso(data.get("createdAt")):
            updates["created_at"] = B.parse_iso(data.get("createdAt"))
        survivor = existing.get(data.get("mergedInto") or "")
        if survivor is not None and survivor.pk != entry.pk:
            updates["merged_into"] = survivor
        if updates:
            SceneEntry.objects.filter(pk=entry.pk).update(**updates)
    if created:
        audit_record(profile=profile, actor=actor, tool="import", action="scene_pool_import", target_type="scene", target_id="*",
                     before=None, after=None, note={"created": len(created), "skipped": skipped})
    fresh = {e.scene_id: e for e in SceneEntry.objects.filter(profile=profile).select_related("merged_into")}
    return fresh, {"created": len(created), "skipped": skipped}


def scene_pool_from_names(*, profile: Profile, actor: str, usage: dict[str, tuple[int, Any]]) -> dict[str, SceneEntry]:
    """Register (or reuse) a pool entry per scene name of records that came without a pool
    (a TencentDB-Agent-Memory import), counting `usage[name] = (records, newest time)`."""
    from apps.scenes.pool import scene_register, scene_touch

    out: dict[str, SceneEntry] = {}
    for name, (count, newest) in sorted(usage.items()):
        entry, _ = scene_register(profile=profile, name=name, reason="imported", project="", cwd="", actor=actor, tool="import")
        scene_touch(scene=entry, count=count, at=newest)
        out[entry.scene_id] = entry
    return out


def scene_blocks_export(*, profile: Profile) -> list[tuple[str, bool, str]]:
    """(filename, archived, file text) of every live and archived block; removed blocks
    (deleted, merged away) are not part of the layout."""
    out = []
    for block in SceneBlock.objects.filter(profile=profile, removed=False).prefetch_related("member_rows").order_by("archived", "filename"):
        extra = {
            "firstWrittenAt": B.iso(block.created_at),
            "writtenAt": B.iso(block.written_at),
            "archivedAt": B.iso(block.archived_at),
            "archiveReason": block.archive_reason or None,
        }
        text = B.render_file(meta=block.meta_dict(), members=block.members, content=block.content, extra=extra)
        out.append((block.filename, block.archived, text))
    return out


def scene_file_problem(filename: str, text: str) -> tuple[int, str] | None:
    """(line, why) when a block file cannot be restored; line 0 means the name."""
    problem = B.filename_problem(filename)
    if problem:
        return 0, problem
    if B.text_problem(text):
        return 1, B.text_problem(text) or ""
    return B.meta_problem(text)


def scene_blocks_restore(*, profile: Profile, actor: str, files: list[tuple[str, bool, str]]) -> dict[str, int]:
    """Create the blocks the profile lacks, as the files describe them: meta, members (as
    written, or the body's `(memory ID)` references when the file names none), archive
    state and reason, and the server times the export kept. A block of the same name and
    state already present is skipped."""
    present = set(SceneBlock.objects.filter(profile=profile, removed=False).values_list("filename", "archived"))
    now = timezone.now()
    counts = {"created": 0, "skipped": 0, "members": 0}
    for filename, archived, text in files:
        if (filename, archived) in present:
            counts["skipped"] += 1
            continue
        meta, members, body = B.parse_file(text)
        if members is None:
            members = B.referenced_ids(body)
        created = B.parse_iso(meta.get("created")) or now
        block = SceneBlock.objects.create(
            profile=profile, filename=filename, content=body, summary=str(meta.get("summary", ""))[:1000],
            heat=min(max(int(meta.get("heat") or 0), 0), HEAT_MAX), meta_created=created,
            meta_updated=B.parse_iso(meta.get("updated")) or created, archived=archived,
            archived_at=(B.parse_iso(meta.get("archivedAt")) or now) if archived else None,
            archive_reason=str(meta.get("archiveReason") or ""),
            written_at=B.parse_iso(meta.get("writtenAt")) or now,
            created_at=B.parse_iso(meta.get("firstWrittenAt")) or min(created, now),
        )
        _set_members(block, list(dict.fromkeys(members)))
        present.add((filename, archived))
        counts["created"] += 1
        counts["members"] += len(set(members))
        audit_record(profile=profile, actor=actor, tool="import", action="import", target_type="scene_block", target_id=filename,
                     before=None, after=_snapshot(block), note={"archived": archived})
    if counts["created"]:
        transaction.on_commit(lambda: _mirror(profile))
    return counts
