"""Loading scene-block files of the §7 layout."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.accounts.locks import profile_write_lock
from apps.accounts.models import Profile
from apps.accounts.services import audit_record
from apps.scenes import blocks as B
from apps.scenes.models import (
    SceneBlock,
)
from apps.scenes.services.commit import (
    HEAT_MAX,
    _backup,
    _mirror,
    _set_members,
    _snapshot,
)
from apps.scenes.services.cursor import _invalid


def scene_block_import(*, profile: Profile, actor: str, filename: str, text: str, archived: bool = False) -> dict[str, Any]:
    """Load one block file of the §7 layout (META header + body) as a live or archived
    block, replacing a block of that name in the same state (its previous body is backed
    up). Members are taken as written (from the body's `(l1_…)` references when the file
    has no members line); the import order of L1 and L2 does not matter."""
    problem = B.filename_problem(filename)
    if problem:
        raise _invalid("filename", problem)
    if B.text_problem(text):
        raise _invalid("text", B.text_problem(text) or "")
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
