"""L2 services: scene-block commits, the archive guide and block reads (SPEC §3.9–§3.11;
the L1 increment of §3.8 is read by `apps.records.selectors`). The dashboard calls the
same functions.

One module per concern; every public name is re-exported here so callers keep importing
`from apps.scenes.services import ...`."""

from apps.scenes.services.commit import (
    ACTIONS,
    BODY_ACTIONS,
    CONSOLIDATE_MIN_SHARE,
    FUTURE_SLACK,
    HEAT_MAX,
    scene_block_archive,
    scene_block_restore,
    scene_commit,
    scene_count_warning,
)
from apps.scenes.services.cursor import CURSOR_KIND, parse_l2_cursor, resolve_l2_cursor
from apps.scenes.services.guide import ARCHIVE_RULES, scene_archive_guide
from apps.scenes.services.imports import (
    scene_block_import,
    scene_blocks_export,
    scene_blocks_restore,
    scene_file_problem,
    scene_pool_entry_problem,
    scene_pool_export,
    scene_pool_from_names,
    scene_pool_restore,
)
from apps.scenes.services.reads import (
    scene_block_history,
    scene_blocks_read,
    scene_persona_requests,
)

__all__ = [
    "ACTIONS",
    "ARCHIVE_RULES",
    "BODY_ACTIONS",
    "CONSOLIDATE_MIN_SHARE",
    "CURSOR_KIND",
    "FUTURE_SLACK",
    "HEAT_MAX",
    "parse_l2_cursor",
    "resolve_l2_cursor",
    "scene_archive_guide",
    "scene_block_archive",
    "scene_block_history",
    "scene_block_import",
    "scene_block_restore",
    "scene_blocks_export",
    "scene_blocks_read",
    "scene_blocks_restore",
    "scene_commit",
    "scene_count_warning",
    "scene_file_problem",
    "scene_persona_requests",
    "scene_pool_entry_problem",
    "scene_pool_export",
    "scene_pool_from_names",
    "scene_pool_restore",
]
