"""`l2_archive_guide` (SPEC §3.10): the rules and per-block facts; no coldness score."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import Max
from django.utils import timezone

from apps.accounts.config import profile_setting
from apps.accounts.models import Profile
from apps.accounts.paths import PathOutsideProfile, confine, profile_dir
from apps.hitstats.models import RecallHit
from apps.records.models import L1Change
from apps.scenes import blocks as B
from apps.scenes.models import (
    SceneBlock,
)
from apps.tools.errors import Forbidden, NotFound, invalid_field

# --------------------------------------------------------------- l2_archive_guide

ARCHIVE_RULES = """\
L2 archive guide

Archive or consolidate?
- Consolidate (action "consolidate", sources = [a.md, b.md, ...]) when several blocks describe
  the same project or topic: the merged block keeps every entry and every member, and frees
  len(sources) - 1 slots. Prefer it whenever blocks overlap.
- Archive (action "archive", filename, reason) when one block's project or topic is no longer
  evolving: it leaves the scene folder and stops counting against the cap, but its content
  and members are kept intact, and {action: "restore"} brings it back at any time.

What makes a good archive candidate (you decide, from the facts below):
- the project is finished, abandoned or replaced, and new L1 records stopped arriving;
- few or no members appear in the recall history, and the last recall is long ago;
- many active days have passed since the block was last written (active days are days on
  which this profile recorded memories, so holidays do not make a block look cold).
Recall here is automatic injection, so "recently recalled" does not prove "still relevant";
the host computes no coldness score.

Hard rules the host enforces:
- at most one archive per l2_commit batch, and a written reason is required;
- a block younger than {min_age} days (since it was first written here; a consolidated block
  is as old as its oldest source) cannot be archived;
- a block cannot be archived while an archived block of the same filename exists
  (consolidate it, or restore and consolidate the old one);
- restore is refused while a live block of the same filename exists, and counts against
  the cap of {max_scenes} live blocks again.
"""


def scene_archive_guide(*, profile: Profile, filename: str | None = None) -> dict[str, Any]:
    """Rules and per-block facts for archiving (SPEC §3.10); no coldness score."""
    now = timezone.now()
    min_age = int(profile_setting(profile, "l2.archiveMinAgeDays"))
    maximum = int(profile_setting(profile, "l2.maxScenes"))
    blocks = list(SceneBlock.objects.filter(profile=profile, removed=False).prefetch_related("member_rows").order_by("archived", "filename"))
    members_of = {b.pk: sorted(m.record_id for m in b.member_rows.all()) for b in blocks}
    all_members = {m for ms in members_of.values() for m in ms}
    last_recall: dict[str, Any] = {}
    if all_members:
        for row in RecallHit.objects.filter(profile=profile, record_id__in=all_members).values("record_id").annotate(last=Max("created_at")):
            last_recall[row["record_id"]] = row["last"]
    written = [b.written_at or b.updated_at for b in blocks]
    active_days: list = []
    if written:
        active_days = list(L1Change.objects.filter(profile=profile, created_at__gt=min(written)).dates("created_at", "day"))
    facts = []
    for block, wrote in zip(blocks, written):
        members = members_of[block.pk]
        recalled = [last_recall[m] for m in members if m in last_recall]
        facts.append({
            "filename": block.filename,
            "heat": block.heat,
            "memberCount": len(members),
            "recalledMembers": len(recalled),
            "lastRecallAt": B.iso(max(recalled)) if recalled else None,
            "activeDaysSinceWrite": sum(1 for day in active_days if day > wrote.date()),
            "summary": block.summary,
            "archived": block.archived,
            "created": B.iso(block.meta_created),
            "updated": B.iso(block.meta_updated),
        })
    result: dict[str, Any] = {
        "rules": ARCHIVE_RULES.replace("{min_age}", str(min_age)).replace("{max_scenes}", str(maximum)),
        "blocks": facts,
        "liveCount": sum(1 for b in blocks if not b.archived),
        "maxScenes": maximum,
    }
    if filename is not None:
        if B.looks_like_path(filename):
            try:
                confine(profile_dir(profile) / "l2" / "scenes", filename)
            except PathOutsideProfile:
                raise Forbidden(f"filename: {filename!r} resolves outside the profile") from None
        problem = B.filename_problem(filename)
        if problem:
            raise invalid_field("filename", problem)
        live_block = next((b for b in blocks if b.filename == filename and not b.archived), None)
        archived_block = next((b for b in blocks if b.filename == filename and b.archived), None)
        if live_block is None and archived_block is None:
            raise NotFound(f"no scene block {filename}", details={"filename": filename})
        if live_block is None:
            result.update(archivable=False, why=f"{filename} is already archived (restore brings it back)")
        elif live_block.created_at > now - timedelta(days=min_age):
            age = (now - live_block.created_at).days
            result.update(archivable=False, why=f"{filename} is {age} days old; blocks younger than {min_age} days cannot be archived")
        elif archived_block is not None:
            result.update(archivable=False, why=f"an archived block named {filename} already exists; consolidate instead")
        else:
            result.update(archivable=True, why=f"no hard block: older than {min_age} days and no archived block of that name; decide from the facts and give a reason")
    return result
