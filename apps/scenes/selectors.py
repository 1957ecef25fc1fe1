"""Read-only queries over scene blocks (L2) and the scene pool, for the dashboard and the
rules organizer."""

from __future__ import annotations

from typing import Any

from django.db.models import Count

from apps.accounts.config import profile_setting
from apps.accounts.models import Profile
from apps.scenes.models import SceneBlock, SceneEntry


def scene_counts(profile: Profile) -> dict[str, Any]:
    rows = SceneBlock.objects.filter(profile=profile, removed=False).values("archived").annotate(n=Count("id")).order_by()
    by = {row["archived"]: row["n"] for row in rows}
    cap = int(profile_setting(profile, "l2.maxScenes"))
    live = by.get(False, 0)
    return {"live": live, "archived": by.get(True, 0), "cap": cap, "pool": SceneEntry.objects.filter(profile=profile, merged_into__isnull=True).count()}


def scene_choices(profile: Profile) -> list[SceneEntry]:
    return list(SceneEntry.objects.filter(profile=profile, merged_into__isnull=True).order_by("name").only("scene_id", "name"))


def scene_blocks(profile: Profile) -> dict[str, list[SceneBlock]]:
    blocks = list(
        SceneBlock.objects.filter(profile=profile, removed=False)
        .annotate(member_count=Count("member_rows"))
        .order_by("-heat", "filename")
    )
    return {"live": [b for b in blocks if not b.archived], "archived": [b for b in blocks if b.archived]}


def scene_pool(profile: Profile) -> list[SceneEntry]:
    return list(SceneEntry.objects.filter(profile=profile).select_related("merged_into").order_by("-use_count", "scene_id"))


def block_for_profile(profile: Profile, block_id: int) -> SceneBlock | None:
    return SceneBlock.objects.filter(profile=profile, pk=block_id).first()


def block_member_ids(block: SceneBlock) -> list[str]:
    return list(block.member_rows.order_by("record_id").values_list("record_id", flat=True))


def block_backups(block: SceneBlock, *, limit: int = 20) -> list[dict[str, Any]]:
    """The block's backups, newest first, each with the text that followed it (`newer`)."""
    out = []
    newer = block.content
    for b in block.backups.order_by("-id")[:limit]:
        out.append({"backup": b, "newer": newer})
        newer = b.content
    return out


def record_blocks(profile: Profile, record_id: str) -> list[SceneBlock]:
    """Scene blocks (live, archived, removed) that list the record as a member."""
    return list(
        SceneBlock.objects.filter(profile=profile, member_rows__record_id=record_id).order_by("archived", "filename").distinct()
    )


def blocks_for_records(profile: Profile, record_ids: list[str]) -> dict[str, list[SceneBlock]]:
    """Live or archived (not removed) blocks per member record id."""
    from apps.scenes.models import SceneBlockMember

    out: dict[str, list[SceneBlock]] = {}
    rows = SceneBlockMember.objects.filter(profile=profile, record_id__in=set(record_ids), block__removed=False).select_related("block")
    for row in rows.order_by("block__filename"):
        out.setdefault(row.record_id, []).append(row.block)
    return out


def archivable_from(block: SceneBlock):
    """When the archive age guard (l2.archiveMinAgeDays from the block's first write here)
    stops refusing this block."""
    from datetime import timedelta

    return block.created_at + timedelta(days=int(profile_setting(block.profile, "l2.archiveMinAgeDays")))


def block_ids_by_filename(profile: Profile, filenames: list[str]) -> dict[str, int]:
    """The block each filename names now (the live one before an archived one)."""
    out: dict[str, int] = {}
    rows = SceneBlock.objects.filter(profile=profile, filename__in=set(filenames)).order_by("removed", "archived", "-id")
    for filename, pk in rows.values_list("filename", "pk"):
        out.setdefault(filename, pk)
    return out


# ---------------------------------------------------------------- the rules organizer's reads

MERGE_DEPTH = 10  # a merge chain longer than this is broken data, not a chain to follow


def surviving_scenes(*, profile: Profile, scene_pks: set[int]) -> list[SceneEntry]:
    """The pool entries that now stand for the given ones (following `merged_into`), once each."""
    out: dict[int, SceneEntry] = {}
    for scene in SceneEntry.objects.filter(profile=profile, pk__in=scene_pks).select_related("merged_into"):
        current: SceneEntry | None = scene
        seen = 0
        while current is not None and current.merged_into_id and seen < MERGE_DEPTH:
            current = current.merged_into
            seen += 1
        if current is not None:
            out[current.pk] = current
    return list(out.values())


def scene_and_merged_pks(scene: SceneEntry) -> set[int]:
    """The entry and those merged into it: their records are the scene's members."""
    return {scene.pk, *scene.merged_from.values_list("pk", flat=True)}


def pool_scenes_with_live_records(*, profile: Profile) -> list[SceneEntry]:
    """Unmerged pool entries that at least one live record is attributed to."""
    return list(SceneEntry.objects.filter(profile=profile, merged_into__isnull=True, records__deleted=False).distinct())


def block_filenames(*, profile: Profile) -> set[str]:
    """Filenames of the live and archived (not removed) blocks."""
    return set(SceneBlock.objects.filter(profile=profile, removed=False).values_list("filename", flat=True))


def live_block_count(*, profile: Profile) -> int:
    """Blocks that count against `l2.maxScenes` (not archived, not removed)."""
    return SceneBlock.objects.filter(profile=profile, archived=False, removed=False).count()


def block_by_filename(*, profile: Profile, filename: str) -> SceneBlock | None:
    """The live or archived block of that name (a removed one is gone)."""
    return SceneBlock.objects.filter(profile=profile, filename=filename, removed=False).first()


def live_blocks(*, profile: Profile) -> list[SceneBlock]:
    """Blocks that are neither archived nor removed, by filename."""
    return list(SceneBlock.objects.filter(profile=profile, archived=False, removed=False).order_by("filename"))
