"""Profile folders on disk, and confinement of every path the service reads to them.

The one rule: a file is read, listed or indexed only if it lies inside its profile
folder with every link on the way followed. Caller-supplied paths go through `confine`
(a path resolving elsewhere is refused). Listings of a profile folder (`own_files`: the
L0 index catch-up, backlog counters, the feed) and reads of a file named by the index
(`own_file`) skip links altogether: a link never brings another profile's file in, and
one file is never indexed under two names.

The data dir is read from settings at call time (tests point it at a temp dir).
"""

from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings

from apps.accounts.models import Profile


class PathOutsideProfile(Exception):
    pass


def profile_dir(profile: Profile) -> Path:
    return Path(settings.DATA_DIR) / "profiles" / profile.slug


def profile_subdir(profile: Profile, *parts: str, create: bool = True) -> Path:
    path = profile_dir(profile).joinpath(*parts)
    if create:
        path.mkdir(parents=True, exist_ok=True)
    return path


def confine(base: Path, candidate: str) -> Path:
    """Resolve `candidate` (a bare name, a relative path or an absolute path) inside `base`.

    Raises PathOutsideProfile for anything resolving outside `base`, including through
    `..` or a symlink.
    """
    if not isinstance(candidate, str) or candidate.strip() == "" or "\x00" in candidate:
        raise PathOutsideProfile(f"invalid path {candidate!r}")
    base_resolved = base.resolve()
    raw = Path(candidate.strip())
    target = raw if raw.is_absolute() else base_resolved / raw
    resolved = Path(os.path.realpath(target))
    if resolved != base_resolved and base_resolved not in resolved.parents:
        raise PathOutsideProfile(f"path {candidate!r} is outside the profile")
    return resolved


def own_file(folder: Path, name: str) -> Path | None:
    """`folder/name` if it is a regular file of `folder` itself (not a link, not in a
    subfolder), else None."""
    if not name or "/" in name or "\x00" in name or name in (".", ".."):
        return None
    path = folder / name
    try:
        if path.is_symlink() or not path.is_file():
            return None
    except OSError:
        return None
    return path


def own_files(folder: Path, pattern: str) -> list[Path]:
    """The regular files of `folder` matching `pattern`, in name order, links skipped;
    nothing when `folder` itself is a link or missing."""
    try:
        if folder.is_symlink() or not folder.is_dir():
            return []
        return sorted(p for p in folder.glob(pattern) if own_file(folder, p.name) is not None)
    except OSError:
        return []
