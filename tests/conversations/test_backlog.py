"""The job triggers' backlog counts use the conversations app's rules: eligibility,
ISO cursor times, complete lines, and never a linked shard."""

from __future__ import annotations

import os

from apps.accounts.paths import profile_subdir
from apps.conversations import services
from apps.conversations.backlog import l0_backlog, skill_feed_tool_calls

from .conftest import row


def test_a_linked_shard_is_never_counted(alice, bob):
    services.l0_append(profile=bob, rows=[row(1, session="bob-s1"), row(2, session="bob-s1")])
    os.symlink(services.l0_dir(bob) / services.today_shard_name(), services.l0_dir(alice) / "2026-11-30.jsonl")
    assert l0_backlog(profile=alice, cursor={}, limit=5).eligible == 0
    services.l0_append(profile=alice, rows=[row(1)])
    assert l0_backlog(profile=alice, cursor={}, limit=5).eligible == 1


def test_a_linked_feed_shard_is_never_counted(alice, bob, write_shard):
    target = write_shard(bob, "2026-11-30.jsonl", [
        {"role": "tool_call", "content": "ls", "sessionKey": "s", "recordedAt": f"2026-11-30T10:00:0{i}Z"} for i in range(3)
    ], area="skill-feed")
    os.symlink(target, profile_subdir(alice, "skill-feed") / "2026-11-30.jsonl")
    assert skill_feed_tool_calls(profile=alice, cursor={}, limit=10) == 0


def test_a_legacy_cursor_compares_instants_not_strings(alice, write_shard):
    write_shard(alice, "2026-01-05.jsonl", [
        {**row(1), "recordedAt": "2026-01-05T10:00:00+00:00"},  # the same instant as the cursor: not before it
        {**row(2), "recordedAt": "2026-01-05T09:59:59.999999Z"},  # before it
        {**row(3, role="tool"), "recordedAt": "2026-01-05T11:00:00Z"},  # not eligible
    ])
    assert l0_backlog(profile=alice, cursor={"lastRecordedAt": "2026-01-05T10:00:00Z"}, limit=5).eligible == 1


def test_feed_calls_after_the_cursor_instant_are_counted(alice, write_shard):
    write_shard(alice, "2026-11-30.jsonl", [
        {"role": "tool_call", "content": "a", "sessionKey": "s", "recordedAt": "2026-11-30T10:00:00+00:00"},
        {"role": "tool_call", "content": "b", "sessionKey": "s", "recordedAt": "2026-11-30T10:00:01Z"},
        {"role": "tool_result", "content": "c", "sessionKey": "s", "recordedAt": "2026-11-30T10:00:02Z"},
    ], area="skill-feed")
    assert skill_feed_tool_calls(profile=alice, cursor={"recordedAt": "2026-11-30T10:00:00Z"}, limit=10) == 1
