"""Where each layer lives in an export directory (SPEC §7) and the files this project adds
so that a restore loses nothing (see docs/transfer.md)."""

from __future__ import annotations

DB = "memoryDB"
PROFILE_JSON = f"{DB}/profile.json"  # format marker, source mode, per-profile settings
L0 = f"{DB}/l0"
L1_RECORDS = f"{DB}/l1/records"
L1_CHANGES = f"{DB}/l1/changes.jsonl"  # every change of every record, in change order
L1_CURSOR = f"{DB}/l1/cursor.json"
HIT_STATS = f"{DB}/l1/hit-stats.json"
SCENES_JSON = f"{DB}/l1/scenes.json"
L2_SCENES = f"{DB}/l2/scenes"
L2_ARCHIVE = f"{DB}/l2/archive"
L2_CURSOR = f"{DB}/l2/cursor.json"
L3_CURSOR = f"{DB}/l3/cursor.json"
L3_VERSIONS = f"{DB}/l3/versions.jsonl"  # every USER.md version, oldest first
L3_PROPOSAL = f"{DB}/l3/proposal.json"  # USER-temp.md with entry origins and sources
FEED = f"{DB}/skill-feed"
FEED_CURSOR = f"{DB}/skill-feed/cursor.json"
SKILLS_JSON = f"{DB}/skills.json"  # {pinned: [names]}
USER_MD = "USER.md"
USER_TEMP_MD = "USER-temp.md"
SKILLS = "skills"

FORMAT = "memoryweb-export"
FORMAT_VERSION = 1
