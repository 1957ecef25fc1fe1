"""L0 shards and the skill feed in and out of the SPEC §7 layout, and the pipeline cursors.

An export copies each shard up to its last complete line (a line without its newline is
still being written, SPEC §1.1), so byte offsets in the L1 cursor stay valid in the copy.
An import creates a missing shard, skips one already holding the same bytes, and appends
the rest of a shard whose stored bytes are a prefix of the imported ones (an import that
stopped half-way, or a re-run after the source grew); any other difference is refused.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Any

from apps.accounts.models import Profile
from apps.conversations.cursors import cursor_get, cursor_set
from apps.conversations.models import Cursor
from apps.conversations.services import SHARD_NAME_RE, area_folder, l0_reindex

AREAS = ("l0", "skill-feed")


def shard_paths(*, profile: Profile, area: str) -> list[Path]:
    folder = area_folder(profile, area)
    return [p for p in sorted(folder.glob("*.jsonl")) if SHARD_NAME_RE.match(p.name) and p.is_file() and not p.is_symlink()]


def shard_committed_bytes(path: Path) -> bytes:
    """The shard's bytes through its last newline."""
    data = path.read_bytes()
    end = data.rfind(b"\n")
    return data[: end + 1] if end >= 0 else b""


def shard_name_problem(name: str) -> str | None:
    if not SHARD_NAME_RE.match(name) or ".." in name:
        return "a shard is named like YYYY-MM-DD.jsonl"
    return None


def shard_import_action(*, profile: Profile, area: str, name: str, data: bytes) -> str:
    """`create`, `skip` or `append` for an import of `data` as shard `name`; raises
    ValueError when the stored shard differs from it."""
    path = area_folder(profile, area) / name
    if path.is_symlink():
        raise ValueError(f"{area}/{name} is a symbolic link in the profile; it is never written through")
    if not path.exists():
        return "create"
    stored = path.read_bytes()
    if stored == data:
        return "skip"
    if data.startswith(stored) and (not stored or stored.endswith(b"\n")):
        return "append"
    raise ValueError(f"{area}/{name} already exists in the profile with different content; nothing of it is imported")


def shard_import(*, profile: Profile, area: str, name: str, data: bytes) -> str:
    """Write one shard as `shard_import_action` decided; returns the action taken."""
    action = shard_import_action(profile=profile, area=area, name=name, data=data)
    if action == "skip":
        return action
    path = area_folder(profile, area) / name
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # the appender's lock: no ingest interleaves with us
        size = os.fstat(fd).st_size
        if not data.startswith(os.pread(fd, size, 0)):
            raise ValueError(f"{area}/{name} changed while it was imported; nothing more of it is written")
        payload = data[size:]
        written = 0
        while written < len(payload):
            written += os.write(fd, payload[written:])
        os.fsync(fd)
    finally:
        os.close(fd)
    return action


def l0_index_imported(*, profile: Profile) -> int:
    """Index the rows of imported L0 shards (message references, sessions)."""
    return l0_reindex(profile=profile)


def cursors_export(*, profile: Profile) -> dict[str, dict[str, Any]]:
    return {row.kind: dict(row.value) for row in Cursor.objects.filter(profile=profile).order_by("kind")}


def cursor_restore(*, profile: Profile, kind: str, value: dict[str, Any]) -> bool:
    """Set a cursor the profile does not have yet (inside the caller's transaction); a
    cursor already there is kept, so a re-run never moves a live pipeline backwards."""
    if Cursor.objects.filter(profile=profile, kind=kind).exists():
        return False
    cursor_set(profile=profile, kind=kind, value=value)
    return True


def l1_cursor_cover(*, profile: Profile, shards: dict[str, int]) -> bool:
    """Move the L1 cursor of a profile that already extracts to the end of `shards`
    (name → size) that an import created, so their rows do not count as new; other shards
    keep their offsets. A legacy or absent cursor is left alone."""
    current = cursor_get(profile=profile, kind="l1")
    if not shards or not isinstance(current.get("files"), dict):
        return False
    cursor_set(profile=profile, kind="l1", value={**current, "version": 2, "files": {**current["files"], **shards}})
    return True
