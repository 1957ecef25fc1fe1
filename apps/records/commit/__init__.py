"""`l1_commit` (SPEC §3.2): one transaction stores the batch's records, tombstones and
scene registrations and advances the L0 cursor — or nothing changes.

Phases: `validation` (any invalid input raises before anything is read or written),
`provenance` (L0 rows and session project candidates, read outside the lock), `apply`
(under the profile write lock: checks against the stored state, drops, scenes, projects,
writes, cursor).
"""

from apps.records.commit.apply import records_commit
from apps.records.commit.validation import (
    DEFAULT_PRIORITY,
    MAX_RECORDS,
    SOURCE_MAIN,
    SOURCE_SUBAGENT,
    content_problem,
)

__all__ = ["DEFAULT_PRIORITY", "MAX_RECORDS", "SOURCE_MAIN", "SOURCE_SUBAGENT", "content_problem", "records_commit"]
