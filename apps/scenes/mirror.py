"""The file mirror of L2 (SPEC §7 layout under the profile folder).

`profiles/<slug>/l2/scenes/<filename>` holds each live block, `l2/archive/<filename>` each
archived block, both with the META header; `l2/cursor.json` holds `{lastRecordId}`. The
database is the truth: the mirror is rewritten from it after every commit, and a failure
to write it is logged, never fatal.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
from pathlib import Path

from apps.accounts.models import Profile
from apps.accounts.paths import confine, profile_dir, profile_subdir
from apps.conversations.cursors import cursor_get
from apps.scenes.blocks import render_file
from apps.scenes.models import SceneBlock

logger = logging.getLogger(__name__)


def _write_if_changed(path: Path, text: str) -> None:
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return
    # A short temporary name: the block's own name may already be near the file system's
    # limit on name length.
    tmp = path.with_name(f".mirror-{secrets.token_hex(4)}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def block_file_text(block: SceneBlock) -> str:
    return render_file(meta=block.meta_dict(), members=block.members, content=block.content)


def scene_mirror_sync(*, profile: Profile) -> None:
    """Make the profile's l2 folder match the database."""
    try:
        folders = {False: profile_subdir(profile, "l2", "scenes"), True: profile_subdir(profile, "l2", "archive")}
        # A folder linked elsewhere (e.g. to another profile's l2) is never written: the
        # sync would overwrite and remove that profile's files. confine raises for it.
        for relative in ("l2", "l2/scenes", "l2/archive"):
            confine(profile_dir(profile), relative)
        wanted: dict[bool, set[str]] = {False: set(), True: set()}
        for block in SceneBlock.objects.filter(profile=profile, removed=False).prefetch_related("member_rows"):
            folder = folders[block.archived]
            wanted[block.archived].add(block.filename)
            try:
                _write_if_changed(confine(folder, block.filename), block_file_text(block))
            except OSError:
                # One file the file system refuses (a 120-letter CJK name is ~360 bytes,
                # over the usual 255) must not stop the rest of the mirror.
                logger.exception("could not mirror scene block %s of profile %s", block.filename, profile.slug)
        for archived, folder in folders.items():
            for path in folder.glob("*.md"):
                if path.name not in wanted[archived]:
                    path.unlink()
        cursor = cursor_get(profile=profile, kind="l2")
        _write_if_changed(
            profile_subdir(profile, "l2") / "cursor.json",
            json.dumps({"lastRecordId": cursor.get("lastRecordId", 0)}) + "\n",
        )
    except Exception:  # the mirror is a convenience copy; the commit already succeeded
        logger.exception("could not mirror l2 of profile %s", profile.slug)
