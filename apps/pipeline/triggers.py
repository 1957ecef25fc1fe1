"""Pipeline triggers called by services after their transaction commits.

Services call these through `transaction.on_commit`; the pipeline app decides whether
and when a job runs (debounce, warm-up thresholds). Kept import-light so that every
service may call it.
"""

from __future__ import annotations


def l1_committed(*, profile_id: int, stored: int, source: str) -> None:
    """A subagent l1_commit stored `stored` records: the L2 organizer may be due."""
    from apps.pipeline import scheduling

    scheduling.on_l1_committed(profile_id=profile_id, stored=stored, source=source)


def l0_appended(*, profile_id: int, eligible: int) -> None:
    """New eligible L0 rows arrived: the L1 extractor may be due."""
    from apps.pipeline import scheduling

    scheduling.on_l0_appended(profile_id=profile_id, eligible=eligible)


def l2_committed(*, profile_id: int, persona_signal: bool, reason: str) -> None:
    """An l2_commit applied: with personaSignal the L3 persona job is requested."""
    from apps.pipeline import scheduling

    scheduling.on_l2_committed(profile_id=profile_id, persona_signal=persona_signal, reason=reason)


def skill_feed_appended(*, profile_id: int, tool_calls: int) -> None:
    """New tool calls in the skill feed: the skill reviewer may be due."""
    from apps.pipeline import scheduling

    scheduling.on_skill_feed_appended(profile_id=profile_id, tool_calls=tool_calls)
