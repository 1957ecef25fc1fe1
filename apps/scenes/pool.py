"""Scene-pool services (SPEC §1.3, §3.2 scene attribution, §3.3 list).

Writers call these inside `profile_write_lock(profile)`; ids are allocated there, so two
commits never hand out the same `sc0001`-style id.

Name matching (reuse by name or alias) compares a key: NFKC (which also folds the
full-width separator `｜` into `|`), casefold, whitespace collapsed and trimmed, no space around the separator.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime, timedelta

from django.db.models import F
from django.utils import timezone

from apps.accounts.config import profile_setting
from apps.accounts.models import Profile
from apps.accounts.services import audit_record
from apps.records.normalize import path_within
from apps.scenes.models import RESERVED_SCENES, SceneEntry

_SCENE_ID = re.compile(r"^sc(\d+)$")
_WS = re.compile(r"\s+")
_SEPARATOR = re.compile(r"\s*\|\s*")
_DATE_IN_NAME = re.compile(r"\d{4}[-/.年]\d{1,2}(?:[-/.月]\d{1,2})?")
MAX_NAME_CHARS = 200


def scene_name_key(name: str) -> str:
    key = _WS.sub(" ", unicodedata.normalize("NFKC", name or "").casefold()).strip()
    return _SEPARATOR.sub("|", key)


def scene_resolve(*, profile: Profile, scene_id: str) -> SceneEntry | None:
    """The live entry answering to `scene_id` (a merged-away id answers with its survivor)."""
    entry = SceneEntry.objects.filter(profile=profile, scene_id=scene_id).first()
    if entry is None and scene_id in RESERVED_SCENES:
        return scene_reserved(profile=profile, scene_id=scene_id)
    return _survivor(entry)


def _survivor(entry: SceneEntry | None) -> SceneEntry | None:
    seen: set[int] = set()
    while entry is not None and entry.merged_into_id and entry.pk not in seen:
        seen.add(entry.pk)
        entry = entry.merged_into
    return entry


def scene_reserved(*, profile: Profile, scene_id: str) -> SceneEntry:
    if scene_id not in RESERVED_SCENES:
        raise ValueError(f"{scene_id!r} is not a reserved scene")
    entry, _ = SceneEntry.objects.get_or_create(
        profile=profile, scene_id=scene_id, defaults={"name": scene_id, "reserved": True}
    )
    return entry


def scene_match_name(*, profile: Profile, name: str) -> SceneEntry | None:
    """The entry whose name or alias matches `name` (resolved to the merge survivor)."""
    key = scene_name_key(name)
    if not key:
        return None
    entries = list(SceneEntry.objects.filter(profile=profile).select_related("merged_into"))
    # A live entry's own name beats an alias, which beats a merged-away entry's name.
    for entry in entries:
        if entry.merged_into_id is None and scene_name_key(entry.name) == key:
            return entry
    for entry in entries:
        if entry.merged_into_id is None and any(scene_name_key(a) == key for a in entry.aliases or []):
            return entry
    for entry in entries:
        if scene_name_key(entry.name) == key or any(scene_name_key(a) == key for a in entry.aliases or []):
            return _survivor(entry)
    return None


def scene_name_problem(name: str) -> str | None:
    """Why `name` cannot be registered, or None."""
    if not name.strip():
        return "must not be empty"
    if len(name) > MAX_NAME_CHARS:
        return f"must be at most {MAX_NAME_CHARS} characters"
    if "\n" in name or "\r" in name:
        return "must be one line"
    if scene_name_key(name) in RESERVED_SCENES:
        return f"{name!r} is a reserved scene; omit the scene fields to leave a record unclassified"
    return None


def scene_name_warning(name: str) -> str | None:
    """A soft warning: scene names are stable labels and should not carry a date."""
    if _DATE_IN_NAME.search(name):
        return "scene names are stable labels of the form {project}｜{topic}; this one looks like it carries a date"
    return None


def _next_scene_id(profile: Profile) -> str:
    highest = 0
    for scene_id in SceneEntry.objects.filter(profile=profile, scene_id__startswith="sc").values_list("scene_id", flat=True):
        match = _SCENE_ID.match(scene_id)
        if match:
            highest = max(highest, int(match.group(1)))
    return f"sc{highest + 1:04d}"


def scene_register(
    *, profile: Profile, name: str, reason: str, project: str, cwd: str, actor: str, tool: str
) -> tuple[SceneEntry, bool]:
    """Reuse the entry matching `name` by name or alias, else register a new one.

    Returns (entry, created). Call inside the profile write lock."""
    existing = scene_match_name(profile=profile, name=name)
    if existing is not None:
        return existing, False
    entry = SceneEntry.objects.create(
        profile=profile, scene_id=_next_scene_id(profile), name=name.strip(), reason=reason.strip(),
        project=_fits(SceneEntry, "project", project), cwd=_fits(SceneEntry, "cwd", cwd),
    )
    audit_record(
        profile=profile, actor=actor, tool=tool, action="scene_register", target_type="scene",
        target_id=entry.scene_id, before=None, after=entry.as_dict(), note={"reason": entry.reason},
    )
    return entry, True


def _fits(model: type, field: str, value: str | None) -> str:
    """`value` if the column can hold it, else "": a scene's project and cwd are hints
    copied from its first record (which keeps its own whole value), and an over-long one
    must not fail the commit that registers the scene."""
    limit = model._meta.get_field(field).max_length
    return value if value and (limit is None or len(value) <= limit) else ""


def scene_touch(*, scene: SceneEntry, count: int, at: datetime) -> None:
    """`count` committed records were attributed to `scene` at `at`."""
    if count <= 0:
        return
    SceneEntry.objects.filter(pk=scene.pk).update(use_count=F("use_count") + count, last_used_at=at)


def scene_list(*, profile: Profile, limit: int, project: str = "") -> list[SceneEntry]:
    """Scenes offered for attribution: not merged away, not reserved, used within
    `scenePool.staleDays`; same-project first, then most recently used."""
    cutoff = timezone.now() - timedelta(days=int(profile_setting(profile, "scenePool.staleDays")))
    entries = [
        entry
        for entry in SceneEntry.objects.filter(profile=profile, merged_into__isnull=True, reserved=False)
        if (entry.last_used_at or entry.created_at) >= cutoff
    ]

    def recency(entry: SceneEntry) -> float:
        return (entry.last_used_at or entry.created_at).timestamp()

    def same_project(entry: SceneEntry) -> bool:
        return bool(project) and bool(entry.project) and path_within(entry.project, project) and path_within(project, entry.project)

    entries.sort(key=lambda e: (not same_project(e), -recency(e), e.scene_id))
    return entries[:limit]


def scene_merge(*, profile: Profile, source_id: str, target_id: str, actor: str, tool: str = "dashboard") -> SceneEntry:
    """Merge scene `source_id` into `target_id` (SPEC §1.3): the source answers to the
    survivor's id from now on, its name and aliases become aliases of the survivor, and its
    use count is added. Records keep their row (their history is not rewritten); readers
    resolve the scene through `scene_resolve`. Takes the profile write lock."""
    from apps.accounts.locks import profile_write_lock
    from apps.tools.errors import Conflict, NotFound

    with profile_write_lock(profile):
        source = SceneEntry.objects.select_for_update().filter(profile=profile, scene_id=source_id).first()
        target = scene_resolve(profile=profile, scene_id=target_id)
        if source is None or target is None or not SceneEntry.objects.filter(profile=profile, scene_id=target_id).exists():
            raise NotFound(f"no scene {source_id if source is None else target_id!r} in this profile")
        if source.reserved or target.reserved:
            raise Conflict("reserved scenes (unclassified, main-agent-live) cannot be merged")
        if source.merged_into_id is not None:
            raise Conflict(f"scene {source_id!r} is already merged into {source.merged_into.scene_id!r}")
        if source.pk == target.pk:
            raise Conflict("a scene cannot be merged into itself")
        before = {"source": source.as_dict(), "target": target.as_dict()}
        aliases = list(target.aliases or [])
        for name in [source.name, *(source.aliases or [])]:
            if scene_name_key(name) != scene_name_key(target.name) and all(scene_name_key(a) != scene_name_key(name) for a in aliases):
                aliases.append(name)
        target.aliases = aliases
        target.use_count += source.use_count
        if source.last_used_at and (target.last_used_at is None or source.last_used_at > target.last_used_at):
            target.last_used_at = source.last_used_at
        target.save(update_fields=["aliases", "use_count", "last_used_at"])
        source.merged_into = target
        source.save(update_fields=["merged_into"])
        audit_record(
            profile=profile, actor=actor, tool=tool, action="scene_merge", target_type="scene", target_id=source.scene_id,
            before=before, after={"source": source.as_dict(), "target": target.as_dict()},
        )
    return target
