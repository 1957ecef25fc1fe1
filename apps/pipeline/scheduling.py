"""Trigger bookkeeping for the jobs (SPEC §5). The pipeline issue fills these in; until a
job exists, a trigger has nothing to start, so these only record nothing."""

from __future__ import annotations


def on_l1_committed(*, profile_id: int, stored: int, source: str) -> None:
    return None


def on_l0_appended(*, profile_id: int, eligible: int) -> None:
    return None


def on_l2_committed(*, profile_id: int, persona_signal: bool, reason: str) -> None:
    return None


def on_skill_feed_appended(*, profile_id: int, tool_calls: int) -> None:
    return None
