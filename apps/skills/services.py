"""Skill services (SPEC §1.7, §3.17): what `skill_manage`, `skill_view` and the dashboard call.

Every write runs under the profile's skill file lock (one skill writer per profile at a
time), validates everything before touching the disk, then opens the profile's write
transaction, records the audit event and makes the file change last. If the file change
fails nothing was written; if the transaction fails after it, the file change is undone.
Errors are the tool errors of `apps.tools.errors` (the dashboard shows their message).
"""

from __future__ import annotations

import hashlib
import logging
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from apps.accounts.locks import profile_write_lock
from apps.accounts.models import Profile
from apps.accounts.paths import profile_dir
from apps.accounts.services import audit_record
from apps.skills import storage
from apps.skills.frontmatter import parse_front_matter, read_summary
from apps.skills.models import SkillPin
from apps.skills.storage import SKILL_FILE, SkillLocation, Undo
from apps.tools.errors import (
    Conflict,
    Forbidden,
    InvalidParams,
    NotFound,
    Unavailable,
    invalid_field,
)

TOOL = "skill_manage"
logger = logging.getLogger(__name__)


# --- helpers -----------------------------------------------------------------------


def _encode(text: str, field_name: str) -> bytes:
    if "\x00" in text:
        raise invalid_field(field_name, "contains a NUL character; skill files are text")
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        raise invalid_field(field_name, "is not valid Unicode text (lone surrogate)") from None
    storage.check_file_size(data, field_name)
    return data


def _decode(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidParams(
            f"{what} is not UTF-8 text and cannot be shown", details=[{"field": "file", "message": "not UTF-8 text"}]
        ) from None


def _file_info(data: bytes) -> dict[str, Any]:
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _count_occurrences(text: str, needle: str) -> int:
    """Occurrences including overlapping ones: 'aa' occurs twice in 'aaa', so it is ambiguous."""
    count, start = 0, 0
    while True:
        index = text.find(needle, start)
        if index < 0:
            return count
        count += 1
        start = index + 1


def _is_pinned(profile: Profile, name: str) -> bool:
    return SkillPin.objects.filter(profile=profile, name=name).exists()


def _mtime_iso(path: Path) -> str:
    return datetime.fromtimestamp(path.stat().st_mtime, tz=UTC).isoformat().replace("+00:00", "Z")


def _apply_change(
    *,
    profile: Profile,
    actor: str,
    tool: str,
    action: str,
    name: str,
    before: Any,
    after: Any,
    apply: Callable[[], Undo] | None = None,
    db: Callable[[], None] | None = None,
    note: Any = None,
) -> None:
    """The audit event, the pin rows and the file change commit together or not at all."""
    undo: Undo | None = None
    try:
        with profile_write_lock(profile):
            if db is not None:
                db()
            audit_record(
                profile=profile, actor=actor, tool=tool, action=action, target_type="skill",
                target_id=name, before=before, after=after, note=note,
            )
            if apply is not None:
                undo = apply()
    except BaseException as exc:
        if undo is not None:
            try:
                undo()
            except Exception:  # keep the original failure; the log says what is left on disk
                logger.exception("undo of skill %s %r in profile %s failed", action, name, profile.slug)
        if isinstance(exc, OSError):
            # Disk full, permissions, a vanished folder: the call failed cleanly, say why.
            raise Unavailable(
                f"the skill files could not be written ({exc.strerror or exc}); nothing was changed",
                details={"name": name, "action": action},
            ) from exc
        raise


def _check_totals(location: SkillLocation, *, replaced_bytes: int, new_bytes: int, new_file: bool) -> None:
    total, count = storage.skill_size(location.path)
    new_total = total - replaced_bytes + new_bytes
    if new_total > storage.MAX_SKILL_BYTES:
        raise Conflict(
            f"skill {location.name!r} would hold {new_total} bytes; a skill may hold at most {storage.MAX_SKILL_BYTES}",
            details={"name": location.name, "bytes": new_total, "limit": storage.MAX_SKILL_BYTES},
        )
    if new_file and count + 1 > storage.MAX_FILES_PER_SKILL:
        raise Conflict(
            f"skill {location.name!r} already has {count} support files; at most {storage.MAX_FILES_PER_SKILL} allowed",
            details={"name": location.name, "files": count, "limit": storage.MAX_FILES_PER_SKILL},
        )


def _result(action: str, location: SkillLocation, **extra: Any) -> dict[str, Any]:
    return {"success": True, "action": action, "name": location.name, "category": location.category, **extra}


# --- reads ---------------------------------------------------------------------------

def skill_list(*, profile: Profile, category: str | None = None) -> dict[str, Any]:
    """Every skill the profile sees (its own, then bundled), optionally of one category.

    `{skills: [{name, category, description, version, tags, related_skills, pinned, bundled,
    files, updatedAt, shadowed?, problem?}], categories: [{category, count}], returned}`.
    """
    if category is not None:
        storage.check_name(category, "category")
    own = list(storage.iter_skills(storage.skills_root(profile), bundled=False))
    bundled = list(storage.iter_skills(storage.bundled_root(), bundled=True))
    own_names = {location.name for location in own}
    pins = set(SkillPin.objects.filter(profile=profile).values_list("name", flat=True))
    counts: dict[str, int] = {}
    items: list[dict[str, Any]] = []
    for location in own + bundled:
        counts[location.category] = counts.get(location.category, 0) + 1
        if category is not None and location.category != category:
            continue
        text = location.skill_file.read_text(encoding="utf-8", errors="replace")
        summary, problem = read_summary(text, expected_name=location.name)
        item: dict[str, Any] = {
            "name": location.name,
            "category": location.category,
            **summary,
            "pinned": (not location.bundled) and location.name in pins,
            "bundled": location.bundled,
            "files": len(storage.support_files(location.path)),
            "updatedAt": _mtime_iso(location.skill_file),
        }
        if location.bundled and location.name in own_names:
            item["shadowed"] = True
        if problem:
            item["problem"] = problem
        items.append(item)
    items.sort(key=lambda item: (item["category"], item["name"], item["bundled"]))
    return {
        "skills": items,
        "categories": [{"category": key, "count": counts[key]} for key in sorted(counts)],
        "returned": len(items),
    }


def skill_view(*, profile: Profile, name: str, file: str | None = None) -> dict[str, Any]:
    """`{name, category, content, files, pinned, bundled}`, or with `file` `{name, file, content}`."""
    storage.check_name(name)
    location = storage.require_skill(profile, name)
    if file is None:
        content = _decode(location.skill_file.read_bytes(), SKILL_FILE)
        return {
            "name": location.name,
            "category": location.category,
            "content": content,
            "files": storage.support_files(location.path),
            "pinned": (not location.bundled) and _is_pinned(profile, name),
            "bundled": location.bundled,
        }
    parts = storage.check_support_path(file, "file", allow_skill_file=True)
    path = storage.resolve_inside(location.path, parts, "file")
    if not path.is_file():
        raise NotFound(f"skill {name!r} has no file {file!r}", details={"name": name, "file": file, "files": storage.support_files(location.path)})
    return {"name": location.name, "file": file, "content": _decode(path.read_bytes(), file)}


# --- writes --------------------------------------------------------------------------

def skill_create(*, profile: Profile, actor: str, name: str, category: str, content: str, tool: str = TOOL) -> dict[str, Any]:
    storage.check_name(name)
    storage.check_name(category, "category")
    data = _encode(content, "content")
    parse_front_matter(content, expected_name=name)
    with storage.skills_lock(profile):
        if storage.find_in_root(storage.bundled_root(), name, bundled=True) is not None:
            raise Conflict(f"{name!r} is the name of a bundled skill; choose another name", details={"name": name, "bundled": True})
        existing = storage.find_in_root(storage.skills_root(profile), name, bundled=False)
        if existing is not None:
            raise Conflict(
                f"a skill named {name!r} already exists (category {existing.category!r}); edit or patch it instead",
                details={"name": name, "category": existing.category},
            )
        root = storage.skills_root(profile)
        category_dir = root / category
        if category_dir.is_symlink() or (category_dir.exists() and not category_dir.is_dir()):
            raise Conflict(f"category {category!r} exists on disk but is not a plain folder", details={"category": category})
        skill_dir = category_dir / name
        if skill_dir.exists() or skill_dir.is_symlink():
            raise Conflict(
                f"a folder for {category}/{name} already exists on disk without a SKILL.md; remove it first",
                details={"name": name, "category": category},
            )
        location = SkillLocation(name, category, skill_dir, False)
        _apply_change(
            profile=profile, actor=actor, tool=tool, action="create", name=name,
            before=None, after={"category": category, "content": content},
            # A pin left behind by a skill removed outside the service must not carry over.
            db=lambda: SkillPin.objects.filter(profile=profile, name=name).delete(),
            apply=lambda: storage.op_write(location.skill_file, data, stop=profile_dir(profile), trash_copy=None),
        )
    return _result("create", location, path=storage.relative_to_profile(profile, location.skill_file))


def skill_edit(*, profile: Profile, actor: str, name: str, content: str, tool: str = TOOL) -> dict[str, Any]:
    storage.check_name(name)
    with storage.skills_lock(profile):
        location = storage.require_writable(profile, name)
        data = _encode(content, "content")
        parse_front_matter(content, expected_name=name)
        old = location.skill_file.read_bytes()
        if old == data:
            return _result("edit", location, changed=False)
        _check_totals(location, replaced_bytes=len(old), new_bytes=len(data), new_file=False)
        _apply_change(
            profile=profile, actor=actor, tool=tool, action="edit", name=name,
            before={"category": location.category, "content": old.decode("utf-8", errors="replace")},
            after={"category": location.category, "content": content},
            apply=lambda: storage.op_write(location.skill_file, data, stop=location.path, trash_copy=None),
        )
    return _result("edit", location, changed=True)


def skill_patch(
    *,
    profile: Profile,
    actor: str,
    name: str,
    old_string: str,
    new_string: str,
    file_path: str | None = None,
    tool: str = TOOL,
) -> dict[str, Any]:
    """Replace the one occurrence of `old_string` in SKILL.md (or in support file `file_path`)."""
    storage.check_name(name)
    if old_string == "":
        raise invalid_field("old_string", "must not be empty")
    if old_string == new_string:
        raise invalid_field("new_string", "equals old_string; the patch would change nothing")
    parts = storage.check_support_path(file_path) if file_path is not None else None
    with storage.skills_lock(profile):
        location = storage.require_writable(profile, name)
        if parts is None:
            path, target = location.skill_file, SKILL_FILE
        else:
            path, target = storage.resolve_inside(location.path, parts), "/".join(parts)
            if not path.is_file():
                raise NotFound(f"skill {name!r} has no file {target!r}", details={"name": name, "file_path": target})
        old_bytes = path.read_bytes()
        text = _decode(old_bytes, target)
        matches = _count_occurrences(text, old_string)
        if matches != 1:
            hint = "it was not found; view the file and copy the text exactly" if matches == 0 else "include more surrounding text so it is unique"
            raise Conflict(
                f"old_string matches {matches} times in {target}; it must match exactly once ({hint})",
                details={"name": name, "file": target, "matches": matches},
            )
        new_text = text.replace(old_string, new_string, 1)
        data = _encode(new_text, "new_string")
        if parts is None:
            parse_front_matter(new_text, expected_name=name, field_name="new_string")
        _check_totals(location, replaced_bytes=len(old_bytes), new_bytes=len(data), new_file=False)
        if parts is None:
            before: dict[str, Any] = {"category": location.category, "content": text}
            after: dict[str, Any] = {"category": location.category, "content": new_text}
        else:
            before = {"file": target, **_file_info(old_bytes)}
            after = {"file": target, **_file_info(data)}
        _apply_change(
            profile=profile, actor=actor, tool=tool, action="patch", name=name, before=before, after=after,
            note={"old_string": old_string, "new_string": new_string},
            apply=lambda: storage.op_write(path, data, stop=location.path, trash_copy=None),
        )
    return _result("patch", location, file=target, replacements=1)


def skill_delete(*, profile: Profile, actor: str, name: str, tool: str = TOOL) -> dict[str, Any]:
    """Soft delete: the folder moves to the profile's skill trash; a pinned skill is refused."""
    storage.check_name(name)
    with storage.skills_lock(profile):
        location = storage.require_writable(profile, name)
        if _is_pinned(profile, name):
            raise Conflict(f"skill {name!r} is pinned; unpin it before deleting", details={"name": name, "pinned": True})
        entry = storage.new_trash_entry(profile, "delete", name)
        destination = entry / location.category / name
        trash = storage.relative_to_profile(profile, entry)
        _apply_change(
            profile=profile, actor=actor, tool=tool, action="delete", name=name,
            before={
                "category": location.category,
                "content": location.skill_file.read_text(encoding="utf-8", errors="replace"),
                "files": storage.support_files(location.path),
            },
            after={"trash": trash},
            apply=lambda: storage.op_move(location.path, destination, prune_stop=storage.skills_root(profile)),
        )
    return _result("delete", location, trash=trash)


def skill_write_file(
    *, profile: Profile, actor: str, name: str, file_path: str, file_content: str, tool: str = TOOL
) -> dict[str, Any]:
    """Create or replace one support file; a replaced version is kept in the skill trash."""
    storage.check_name(name)
    parts = storage.check_support_path(file_path)
    data = _encode(file_content, "file_content")
    with storage.skills_lock(profile):
        location = storage.require_writable(profile, name)
        path = storage.resolve_inside(location.path, parts)
        target = "/".join(parts)
        ancestor = location.path
        for part in parts[:-1]:
            ancestor = ancestor / part
            if ancestor.exists() and not ancestor.is_dir():
                raise Conflict(f"{ancestor.relative_to(location.path).as_posix()!r} is a file, not a folder", details={"file_path": target})
        if path.exists() and not path.is_file():
            raise Conflict(f"{target!r} is a folder, not a file", details={"file_path": target})
        existed = path.is_file()
        old = path.read_bytes() if existed else b""
        if existed and old == data:
            return _result("write_file", location, file_path=target, bytes=len(data), created=False, changed=False)
        _check_totals(location, replaced_bytes=len(old), new_bytes=len(data), new_file=not existed)
        trash_copy = None
        after: dict[str, Any] = {"file": target, **_file_info(data)}
        if existed:
            entry = storage.new_trash_entry(profile, "overwrite", name)
            trash_copy = entry / location.category / name / Path(*parts)
            after["previousKeptIn"] = storage.relative_to_profile(profile, entry)
        _apply_change(
            profile=profile, actor=actor, tool=tool, action="write_file", name=name,
            before={"file": target, **_file_info(old)} if existed else None, after=after,
            apply=lambda: storage.op_write(path, data, stop=location.path, trash_copy=trash_copy),
        )
    return _result("write_file", location, file_path=target, bytes=len(data), created=not existed, changed=True)


def skill_remove_file(*, profile: Profile, actor: str, name: str, file_path: str, tool: str = TOOL) -> dict[str, Any]:
    """Remove one support file (it moves to the skill trash)."""
    storage.check_name(name)
    parts = storage.check_support_path(file_path)
    with storage.skills_lock(profile):
        location = storage.require_writable(profile, name)
        path = storage.resolve_inside(location.path, parts)
        target = "/".join(parts)
        if path.is_dir():
            raise invalid_field("file_path", f"{target!r} is a folder; remove its files one by one")
        if not path.is_file():
            raise NotFound(
                f"skill {name!r} has no file {target!r}",
                details={"name": name, "file_path": target, "files": storage.support_files(location.path)},
            )
        entry = storage.new_trash_entry(profile, "remove_file", name)
        destination = entry / location.category / name / Path(*parts)
        trash = storage.relative_to_profile(profile, entry)
        _apply_change(
            profile=profile, actor=actor, tool=tool, action="remove_file", name=name,
            before={"file": target, **_file_info(path.read_bytes())}, after={"trash": trash},
            apply=lambda: storage.op_move(path, destination, prune_stop=location.path),
        )
    return _result("remove_file", location, file_path=target, trash=trash)


def _set_pin(*, profile: Profile, actor: str, name: str, pinned: bool, tool: str) -> dict[str, Any]:
    storage.check_name(name)
    action = "pin" if pinned else "unpin"
    with storage.skills_lock(profile):
        location = storage.require_writable(profile, name)
        if _is_pinned(profile, name) == pinned:
            return _result(action, location, pinned=pinned, changed=False)

        def db() -> None:
            if pinned:
                SkillPin.objects.create(profile=profile, name=name, pinned_by=actor)
            else:
                SkillPin.objects.filter(profile=profile, name=name).delete()

        _apply_change(
            profile=profile, actor=actor, tool=tool, action=action, name=name,
            before={"pinned": not pinned}, after={"pinned": pinned}, db=db,
        )
    return _result(action, location, pinned=pinned, changed=True)


def skill_pin(*, profile: Profile, actor: str, name: str, tool: str = TOOL) -> dict[str, Any]:
    return _set_pin(profile=profile, actor=actor, name=name, pinned=True, tool=tool)


def skill_unpin(*, profile: Profile, actor: str, name: str, tool: str = TOOL) -> dict[str, Any]:
    return _set_pin(profile=profile, actor=actor, name=name, pinned=False, tool=tool)


# --- the trash (dashboard) ------------------------------------------------------------

def skill_trash_list(*, profile: Profile) -> dict[str, Any]:
    """What deletes, removals and overwrites kept, newest first.

    `{entries: [{id, at, action, name, category, files}], returned}`; `files` are paths
    inside the skill folder (a deleted skill lists SKILL.md and its support files).
    """
    root = storage.trash_root(profile)
    entries = []
    if root.is_dir() and not root.is_symlink():
        for folder in root.iterdir():
            entry = storage.parse_trash_entry(folder)
            if entry is not None:
                entries.append(entry)
    entries.sort(key=lambda e: (e.at, e.id), reverse=True)
    items = [
        {
            "id": e.id,
            "at": e.at.isoformat().replace("+00:00", "Z"),
            "action": e.action,
            "name": e.name,
            "category": e.category,
            "files": storage.files_under(e.path),
        }
        for e in entries
    ]
    return {"entries": items, "returned": len(items)}


def _require_trash_entry(profile: Profile, entry_id: str) -> storage.TrashEntry:
    if not isinstance(entry_id, str) or entry_id == "":
        raise invalid_field("entry", "is required")
    if "/" in entry_id or "\\" in entry_id or entry_id in (".", ".."):
        raise Forbidden(f"entry: {entry_id!r} is a path; give the id of a trash entry", details=[{"field": "entry", "message": "is a path"}])
    if not storage.TRASH_ENTRY_RE.match(entry_id):
        raise invalid_field("entry", f"{entry_id!r} is not a skill trash entry id")
    entry = storage.parse_trash_entry(storage.trash_root(profile) / entry_id)
    if entry is None:
        raise NotFound(f"no skill trash entry {entry_id!r}", details={"entry": entry_id})
    return entry


def skill_restore(*, profile: Profile, actor: str, entry: str, tool: str = "dashboard") -> dict[str, Any]:
    """Bring back what a trash entry kept: a deleted skill, or a removed/overwritten file.

    A deleted skill comes back under its category and name (conflict if the name is taken
    meanwhile). A file goes back into the existing skill; the version it replaces is kept
    in a new trash entry, so a restore loses nothing either.
    """
    with storage.skills_lock(profile):
        found = _require_trash_entry(profile, entry)
        if found.action == "delete":
            return _restore_skill(profile=profile, actor=actor, entry=found, tool=tool)
        return _restore_file(profile=profile, actor=actor, entry=found, tool=tool)


def _restore_skill(*, profile: Profile, actor: str, entry: storage.TrashEntry, tool: str) -> dict[str, Any]:
    name, category = entry.name, entry.category
    if storage.find_in_root(storage.bundled_root(), name, bundled=True) is not None:
        raise Conflict(f"{name!r} is now the name of a bundled skill; it cannot be restored", details={"name": name})
    existing = storage.find_in_root(storage.skills_root(profile), name, bundled=False)
    target = storage.skills_root(profile) / category / name
    if existing is not None or target.exists() or target.is_symlink():
        raise Conflict(
            f"a skill named {name!r} exists again; delete or rename it before restoring",
            details={"name": name, "category": existing.category if existing else category},
        )
    if not (entry.path / SKILL_FILE).is_file():
        raise Conflict(f"trash entry {entry.id!r} holds no SKILL.md", details={"entry": entry.id})
    location = SkillLocation(name, category, target, False)
    _apply_change(
        profile=profile, actor=actor, tool=tool, action="restore", name=name,
        before={"trash": storage.relative_to_profile(profile, storage.trash_root(profile) / entry.id)},
        after={"category": category, "files": storage.files_under(entry.path)},
        db=lambda: SkillPin.objects.filter(profile=profile, name=name).delete(),
        apply=lambda: storage.op_move(entry.path, target, prune_stop=storage.trash_root(profile)),
    )
    return _result("restore", location, entry=entry.id)


def _restore_file(*, profile: Profile, actor: str, entry: storage.TrashEntry, tool: str) -> dict[str, Any]:
    location = storage.require_writable(profile, entry.name)
    files = storage.files_under(entry.path)
    if len(files) != 1:
        raise Conflict(f"trash entry {entry.id!r} should hold one file, found {len(files)}", details={"entry": entry.id, "files": files})
    parts = storage.check_support_path(files[0])
    target = storage.resolve_inside(location.path, parts)
    if target.exists() and not target.is_file():
        raise Conflict(f"{files[0]!r} is a folder in skill {entry.name!r} now", details={"file_path": files[0]})
    source = entry.path / Path(*parts)
    data = source.read_bytes()
    existed = target.is_file()
    old = target.read_bytes() if existed else b""
    _check_totals(location, replaced_bytes=len(old), new_bytes=len(data), new_file=not existed)
    trash_copy = None
    after: dict[str, Any] = {"file": files[0], **_file_info(data)}
    if existed:
        keep = storage.new_trash_entry(profile, "overwrite", entry.name)
        trash_copy = keep / location.category / entry.name / Path(*parts)
        after["previousKeptIn"] = storage.relative_to_profile(profile, keep)
    _apply_change(
        profile=profile, actor=actor, tool=tool, action="restore", name=entry.name,
        before={"trash": storage.relative_to_profile(profile, storage.trash_root(profile) / entry.id)}, after=after,
        apply=lambda: storage.op_write(target, data, stop=location.path, trash_copy=trash_copy),
    )
    # The entry's file is now live again; the redundant copy goes (a failure here loses nothing).
    shutil.rmtree(storage.trash_root(profile) / entry.id, ignore_errors=True)
    return _result("restore", location, entry=entry.id, file_path=files[0])
