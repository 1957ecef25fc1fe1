"""Profile folders on disk, and confinement of caller-supplied paths to them.

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
