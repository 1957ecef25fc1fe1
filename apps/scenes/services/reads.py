"""Reads of L2 (SPEC §3.11) and the dashboard's block reads."""

from __future__ import annotations

from typing import Any

from apps.accounts.config import profile_setting
from apps.accounts.models import Profile
from apps.accounts.paths import PathOutsideProfile, confine, profile_dir
from apps.scenes import blocks as B
from apps.scenes.models import (
    SceneBlock,
    SceneBlockBackup,
    SceneCommit,
)
from apps.tools.errors import Forbidden

# -------------------------------------------------------------- read_scene_blocks


def scene_blocks_read(*, profile: Profile, filenames: list[str]) -> dict[str, Any]:
    """Several blocks in one call, with the per-block and per-call limits (§3.11)."""
    block_max = int(profile_setting(profile, "l2.blockMaxChars"))
    call_max = int(profile_setting(profile, "l2.callMaxChars"))
    l2_dir = profile_dir(profile) / "l2"
    names: list[str] = []
    from_archive: list[bool] = []
    for i, raw in enumerate(filenames):
        name = raw
        archive_path = False
        if isinstance(raw, str) and B.looks_like_path(raw):
            try:
                resolved = confine(l2_dir, raw)
            except PathOutsideProfile:
                raise Forbidden(f"filenames.{i}: {raw!r} resolves outside the profile's scene blocks", details=[{"field": f"filenames.{i}", "message": "outside the profile"}]) from None
            name = resolved.name
            archive_path = resolved.parent == (l2_dir / "archive").resolve()
        names.append(name)
        from_archive.append(archive_path)
    live_found: dict[str, SceneBlock] = {}
    archived_found: dict[str, SceneBlock] = {}
    valid = [n for n in names if not B.filename_problem(n)]
    for block in SceneBlock.objects.filter(profile=profile, removed=False, filename__in=valid).prefetch_related("member_rows"):
        (archived_found if block.archived else live_found)[block.filename] = block
    out = []
    total = 0
    counts = {"returned": 0, "omitted": 0, "truncated": 0}
    budget_spent = False
    for raw, name, archive_path in zip(filenames, names, from_archive):
        # A bare name reads the live block when there is one; a path into l2/archive/
        # reads the archived block of that name.
        block = archived_found.get(name) if archive_path else (live_found.get(name) or archived_found.get(name))
        if block is None:
            problem = B.filename_problem(name)
            missing = f"no archived scene block {name}" if archive_path else f"no scene block {name}"
            out.append({"filename": raw, "ok": False, "error": problem or missing})
            continue
        entry: dict[str, Any] = {
            "filename": block.filename,
            "ok": True,
            "meta": block.meta_dict(),
            "members": block.members,
        }
        if block.archived:
            entry["archived"] = True
        content = block.content
        if len(content) > block_max:
            content = content[:block_max]
            entry["truncated"] = True
        if budget_spent or total + len(content) > call_max:
            budget_spent = True
            entry.pop("truncated", None)
            entry["omitted"] = True
            entry["content"] = None
            counts["omitted"] += 1
        else:
            entry["content"] = content
            total += len(content)
            counts["returned"] += 1
            if entry.get("truncated"):
                counts["truncated"] += 1
        out.append(entry)
    return {"blocks": out, **counts, "totalChars": total}


# ----------------------------------------------------------------- dashboard reads


def scene_persona_requests(*, profile: Profile, limit: int = 20) -> list[dict[str, Any]]:
    """Recent l2 commits that asked for an L3 run, with their reasons."""
    rows = SceneCommit.objects.filter(profile=profile, persona_signal=True).order_by("-id")[:limit]
    return [{"at": B.iso(r.created_at), "reason": r.persona_reason, "actor": r.actor, "applied": r.applied} for r in rows]


def scene_block_history(*, profile: Profile, filename: str) -> list[dict[str, Any]]:
    """Backups of every block that carried this filename, newest first."""
    rows = SceneBlockBackup.objects.filter(block__profile=profile, block__filename=filename).order_by("-id")
    return [{"id": r.pk, "action": r.action, "at": B.iso(r.created_at), "meta": r.meta, "members": r.members, "content": r.content} for r in rows]
