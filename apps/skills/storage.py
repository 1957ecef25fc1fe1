"""Skill folders on disk: where they live, how names and paths are checked, and the
file operations (atomic, undoable) that the services compose.

Layout (SPEC §1.7):
    <data>/profiles/<slug>/skills/<category>/<name>/SKILL.md
    <data>/profiles/<slug>/skills/<category>/<name>/{references,templates,scripts,assets}/...
    <data>/profiles/<slug>/skills-trash/<entry>/<category>/<name>/...   (deleted/replaced files)
    <data>/profiles/<slug>/.skills.lock                                 (the per-profile file lock)
    apps/skills/bundled/<category>/<name>/...                           (read-only, every profile)

Nothing here follows a symbolic link: a link found inside a skill tree is refused, so a
crafted link can never reach another profile's files.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings

from apps.accounts.config import profile_setting
from apps.accounts.locks import ProfileLocked
from apps.accounts.models import Profile
from apps.accounts.paths import PathOutsideProfile, confine, profile_dir
from apps.skills.frontmatter import NAME_PATTERN, NAME_RE
from apps.tools.errors import (
    Conflict,
    Forbidden,
    NotFound,
    PayloadTooLarge,
    invalid_field,
)

SKILL_FILE = "SKILL.md"
SUPPORT_DIRS = ("references", "templates", "scripts", "assets")
# Limits (SPEC is silent; see docs/skills.md). One file fits well inside the 2 MiB body limit.
MAX_FILE_BYTES = 1024 * 1024
MAX_SKILL_BYTES = 8 * 1024 * 1024
MAX_FILES_PER_SKILL = 200
MAX_PATH_DEPTH = 6
MAX_SEGMENT_CHARS = 128
MAX_SEGMENT_BYTES = 255  # NAME_MAX of common file systems: 128 CJK letters are 384 bytes
# Letters and digits of any script, '_', '.', '-', '+', '@', ',', '=' and spaces inside a name.
_SEGMENT_RE = re.compile(r"[\w.+@,=\-][\w .+@,=\-]*\Z")

DEFAULT_BUNDLED_ROOT = Path(__file__).resolve().parent / "bundled"
Undo = Callable[[], None]


# --- where things live -------------------------------------------------------------

def _own_folder(profile: Profile, name: str) -> Path:
    """A top-level folder of the profile; a symbolic link there (e.g. to another profile's
    skills) is never followed."""
    path = profile_dir(profile) / name
    if path.is_symlink():
        raise Forbidden(
            f"the profile's {name}/ folder is a symbolic link; links are never followed",
            details=[{"field": name, "message": "symbolic link"}],
        )
    return path


def skills_root(profile: Profile) -> Path:
    return _own_folder(profile, "skills")


def trash_root(profile: Profile) -> Path:
    return _own_folder(profile, "skills-trash")


def bundled_root() -> Path:
    # Tests point this at a temp dir; deployments may ship extra bundled skills.
    return Path(getattr(settings, "SKILLS_BUNDLED_DIR", DEFAULT_BUNDLED_ROOT))


def relative_to_profile(profile: Profile, path: Path) -> str:
    return path.relative_to(profile_dir(profile)).as_posix()


# --- names and paths ------------------------------------------------------------


def _looks_like_path(value: str) -> bool:
    return "/" in value or "\\" in value or value in (".", "..") or value.startswith("~") or bool(re.match(r"[A-Za-z]:", value))


def check_name(value: str, field_name: str = "name") -> str:
    """A skill or category name: a single folder name, never a path."""
    if not isinstance(value, str) or value == "":
        raise invalid_field(field_name, "is required")
    if "\x00" in value:
        raise invalid_field(field_name, "contains a NUL character")
    if _looks_like_path(value):
        raise Forbidden(
            f"{field_name}: {value!r} is a path; a skill {field_name} is a single folder name resolved inside "
            "the calling profile's skills",
            details=[{"field": field_name, "message": "is a path"}],
        )
    if not NAME_RE.match(value):
        raise invalid_field(field_name, f"{value!r} must match {NAME_PATTERN} (lowercase letters, digits and '-', at most 64 chars)")
    return value


def check_support_path(value: str, field_name: str = "file_path", *, allow_skill_file: bool = False) -> tuple[str, ...]:
    """A support file path relative to the skill folder, as its segments.

    Escapes (absolute paths, `..`) are `forbidden`; everything else that is not a plain
    file under references/, templates/, scripts/ or assets/ is invalid_params.
    """
    if not isinstance(value, str) or value == "":
        raise invalid_field(field_name, "is required")
    if "\x00" in value:
        raise invalid_field(field_name, "contains a NUL character")
    if value.startswith(("/", "\\", "~")) or re.match(r"[A-Za-z]:", value):
        raise Forbidden(
            f"{field_name}: {value!r} is absolute; give a path relative to the skill folder",
            details=[{"field": field_name, "message": "absolute path"}],
        )
    if ".." in re.split(r"[/\\]", value):
        raise Forbidden(
            f"{field_name}: {value!r} climbs out with '..'; paths stay inside the skill folder",
            details=[{"field": field_name, "message": "path escapes the skill folder"}],
        )
    if "\\" in value:
        raise invalid_field(field_name, "use '/' as the path separator")
    if allow_skill_file and value == SKILL_FILE:
        return (SKILL_FILE,)
    parts = tuple(value.split("/"))
    for part in parts:
        if part in ("", "."):
            raise invalid_field(field_name, f"{value!r} has an empty or '.' segment")
        if part.startswith("."):
            raise invalid_field(field_name, f"{value!r}: hidden files and folders ('{part}') are not allowed")
        if len(part) > MAX_SEGMENT_CHARS:
            raise invalid_field(field_name, f"segment {part[:20]!r}… is longer than {MAX_SEGMENT_CHARS} characters")
        if len(part.encode("utf-8")) > MAX_SEGMENT_BYTES:
            raise invalid_field(
                field_name,
                f"segment {part[:20]!r}… is {len(part.encode('utf-8'))} bytes in UTF-8; file systems take at most {MAX_SEGMENT_BYTES}",
            )
        if not _SEGMENT_RE.match(part) or part != part.strip():
            raise invalid_field(field_name, f"segment {part!r} has characters other than letters, digits, space and _ . + @ , = -")
    if parts[0] not in SUPPORT_DIRS:
        where = "SKILL.md is changed with edit or patch; " if value == SKILL_FILE else ""
        raise invalid_field(field_name, f"{where}{value!r} must be inside one of {', '.join(d + '/' for d in SUPPORT_DIRS)}")
    if len(parts) < 2:
        raise invalid_field(field_name, f"{value!r} names a support folder, not a file")
    if len(parts) > MAX_PATH_DEPTH:
        raise invalid_field(field_name, f"{value!r} is nested deeper than {MAX_PATH_DEPTH} levels")
    return parts


def resolve_inside(skill_dir: Path, parts: tuple[str, ...], field_name: str = "file_path") -> Path:
    """Join `parts` under `skill_dir`, refusing any symbolic link on the way."""
    current = skill_dir
    for part in parts:
        current = current / part
        if current.is_symlink():
            raise Forbidden(
                f"{field_name}: {'/'.join(parts)!r} passes through a symbolic link; links are never followed",
                details=[{"field": field_name, "message": "symbolic link"}],
            )
    try:
        confine(skill_dir, "/".join(parts))
    except PathOutsideProfile as exc:
        raise Forbidden(f"{field_name}: {exc}", details=[{"field": field_name, "message": "outside the skill"}]) from None
    return current


# --- finding skills ----------------------------------------------------------------

@dataclass(frozen=True)
class SkillLocation:
    name: str
    category: str
    path: Path
    bundled: bool

    @property
    def skill_file(self) -> Path:
        return self.path / SKILL_FILE


def _plain_dirs(root: Path) -> Iterator[Path]:
    """Sub-folders whose names follow the name rule; links and hidden entries are skipped."""
    try:
        entries = sorted(root.iterdir())
    except FileNotFoundError:
        return
    for entry in entries:
        if entry.is_symlink() or not entry.is_dir() or not NAME_RE.match(entry.name):
            continue
        yield entry


def iter_skills(root: Path, *, bundled: bool) -> Iterator[SkillLocation]:
    for category_dir in _plain_dirs(root):
        for skill_dir in _plain_dirs(category_dir):
            skill_file = skill_dir / SKILL_FILE
            if skill_file.is_file() and not skill_file.is_symlink():
                yield SkillLocation(skill_dir.name, category_dir.name, skill_dir, bundled)


def find_in_root(root: Path, name: str, *, bundled: bool) -> SkillLocation | None:
    matches: list[SkillLocation] = []
    for category_dir in _plain_dirs(root):
        candidate = category_dir / name
        if candidate.is_symlink():
            raise Forbidden(f"skill {name!r} is a symbolic link; links are never followed", details={"name": name})
        skill_file = candidate / SKILL_FILE
        if candidate.is_dir() and skill_file.is_file():
            if skill_file.is_symlink():
                raise Forbidden(f"skill {name!r}: SKILL.md is a symbolic link; links are never followed", details={"name": name})
            matches.append(SkillLocation(name, category_dir.name, candidate, bundled))
    if len(matches) > 1:
        raise Conflict(
            f"skill name {name!r} exists in several categories ({', '.join(m.category for m in matches)}); "
            "remove the extra copies on disk",
            details={"name": name, "categories": [m.category for m in matches]},
        )
    return matches[0] if matches else None


def find_skill(profile: Profile, name: str) -> SkillLocation | None:
    """The profile's own skill wins over a bundled one of the same name (see docs/skills.md)."""
    return find_in_root(skills_root(profile), name, bundled=False) or find_in_root(bundled_root(), name, bundled=True)


def require_skill(profile: Profile, name: str) -> SkillLocation:
    location = find_skill(profile, name)
    if location is None:
        raise NotFound(f"no skill named {name!r} in this profile or the bundled skills", details={"name": name})
    return location


def require_writable(profile: Profile, name: str) -> SkillLocation:
    location = require_skill(profile, name)
    if location.bundled:
        raise Forbidden(
            f"skill {name!r} is bundled with the product and cannot be changed; create your own skill under another name",
            details={"name": name, "bundled": True},
        )
    return location


def support_files(skill_dir: Path) -> list[str]:
    """Regular files under the support folders, as sorted posix paths; links and hidden entries skipped."""
    found: list[str] = []
    for support in SUPPORT_DIRS:
        base = skill_dir / support
        if base.is_symlink() or not base.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not os.path.islink(os.path.join(dirpath, d)))
            for filename in sorted(filenames):
                full = Path(dirpath) / filename
                if filename.startswith(".") or full.is_symlink() or not full.is_file():
                    continue
                found.append(full.relative_to(skill_dir).as_posix())
    return found


def skill_size(skill_dir: Path) -> tuple[int, int]:
    """(total bytes, number of support files) of a skill folder."""
    total = (skill_dir / SKILL_FILE).stat().st_size
    files = support_files(skill_dir)
    total += sum((skill_dir / f).stat().st_size for f in files)
    return total, len(files)


def check_file_size(data: bytes, field_name: str) -> None:
    if len(data) > MAX_FILE_BYTES:
        raise PayloadTooLarge(
            f"{field_name} is {len(data)} bytes; one skill file may hold at most {MAX_FILE_BYTES} bytes",
            details={"field": field_name, "bytes": len(data), "limit": MAX_FILE_BYTES},
        )


# --- the per-profile file lock ----------------------------------------------------

@contextmanager
def skills_lock(profile: Profile) -> Iterator[None]:
    """Serialise skill writers of one profile, across threads and processes.

    Waits up to `l1.writeLockTimeoutSeconds`, then raises ProfileLocked (→ `locked`).
    """
    timeout = float(profile_setting(profile, "l1.writeLockTimeoutSeconds"))
    base = profile_dir(profile)
    base.mkdir(parents=True, exist_ok=True)
    fd = os.open(base / ".skills.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() >= deadline:
                    raise ProfileLocked(f"the profile's skill lock stayed busy for {timeout:g} s; retry") from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


# --- atomic, undoable file operations ---------------------------------------------

def _make_dirs(path: Path, stop: Path) -> list[Path]:
    """mkdir -p `path`, returning the folders it created (deepest last) so they can be undone."""
    created: list[Path] = []
    missing: list[Path] = []
    current = path
    while not current.exists() and current != stop and stop in current.parents:
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        folder.mkdir()
        created.append(folder)
    return created


def _remove_dirs(created: list[Path]) -> None:
    for folder in reversed(created):
        try:
            folder.rmdir()
        except OSError:
            pass


def _prune_empty(start: Path, stop: Path) -> list[Path]:
    """Remove empty folders from `start` up to (not including) `stop`; returns what it removed."""
    removed: list[Path] = []
    current = start
    while current != stop and stop in current.parents:
        try:
            current.rmdir()
        except OSError:
            break
        removed.append(current)
        current = current.parent
    return removed


def atomic_write(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temp file and a rename: readers see old or new, never half."""
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp's 0600 is kept: skill files are as private as the rest of the data dir.
        os.replace(tmp_name, path)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise


TRASH_ACTIONS = ("delete", "overwrite", "remove_file")
TRASH_ENTRY_RE = re.compile(r"(\d{8}T\d{12}Z)-(" + "|".join(TRASH_ACTIONS) + r")-(" + NAME_PATTERN + r")-([0-9a-f]{4})\Z")


def new_trash_entry(profile: Profile, action: str, name: str) -> Path:
    """A fresh trash folder; its name says when, why and which skill (see TRASH_ENTRY_RE)."""
    assert action in TRASH_ACTIONS
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return trash_root(profile) / f"{stamp}-{action}-{name}-{secrets.token_hex(2)}"


@dataclass(frozen=True)
class TrashEntry:
    id: str
    at: datetime
    action: str
    name: str
    category: str
    path: Path  # <trash>/<id>/<category>/<name>


def parse_trash_entry(folder: Path) -> TrashEntry | None:
    match = TRASH_ENTRY_RE.match(folder.name)
    if match is None or folder.is_symlink() or not folder.is_dir():
        return None
    stamp, action, name, _ = match.groups()
    categories = [c for c in _plain_dirs(folder) if (c / name).is_dir() and not (c / name).is_symlink()]
    if len(categories) != 1:
        return None
    at = datetime.strptime(stamp, "%Y%m%dT%H%M%S%fZ").replace(tzinfo=UTC)
    return TrashEntry(folder.name, at, action, name, categories[0].name, categories[0] / name)


def files_under(folder: Path) -> list[str]:
    """Regular files below `folder` as sorted posix paths; links are skipped."""
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not os.path.islink(os.path.join(dirpath, d)))
        for filename in sorted(filenames):
            full = Path(dirpath) / filename
            if not full.is_symlink() and full.is_file():
                found.append(full.relative_to(folder).as_posix())
    return found


def op_write(path: Path, data: bytes, *, stop: Path, trash_copy: Path | None) -> Undo:
    """Create or replace one file. A replaced file is first kept at `trash_copy` (if given)."""
    created = _make_dirs(path.parent, stop)
    previous: bytes | None = None
    trash_created: list[Path] = []
    try:
        if path.exists():
            previous = path.read_bytes()
            if trash_copy is not None:
                trash_created = _make_dirs(trash_copy.parent, trash_copy.parents[len(trash_copy.parents) - 1])
                shutil.copy2(path, trash_copy)
        atomic_write(path, data)
    except BaseException:
        if trash_copy is not None and trash_copy.exists():
            trash_copy.unlink()
        _remove_dirs(trash_created)
        _remove_dirs(created)
        raise

    def undo() -> None:
        if previous is None:
            path.unlink(missing_ok=True)
            _remove_dirs(created)
        else:
            atomic_write(path, previous)
        if trash_copy is not None:
            trash_copy.unlink(missing_ok=True)
            _remove_dirs(trash_created)

    return undo


def op_move(source: Path, destination: Path, *, prune_stop: Path) -> Undo:
    """Move a file or a folder (into or out of the trash); prune folders left empty up to `prune_stop`."""
    trash_created = _make_dirs(destination.parent, destination.parents[len(destination.parents) - 1])
    try:
        os.rename(source, destination)
    except BaseException:
        _remove_dirs(trash_created)
        raise
    pruned = _prune_empty(source.parent, prune_stop)

    def undo() -> None:
        for folder in reversed(pruned):
            folder.mkdir(exist_ok=True)
        os.rename(destination, source)
        _remove_dirs(trash_created)

    return undo
