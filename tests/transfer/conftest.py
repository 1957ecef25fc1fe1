"""Fixtures for export/import/backup: a profile holding every kind of data, written
through the tool API and the services the way agents, jobs and people write it."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from apps.conversations.services import today_shard_name as l0_shard_name
from apps.scenes.models import SceneBlock
from apps.search.outbox import drain_outbox
from tests.search.conftest import _private_index  # noqa: F401  (a private embedded index per test)

SKILL_MD = """---
name: {name}
description: {description}
version: 1.0.0
tags: [git]
---
# {title}

{body}
"""


def run(*args: str) -> str:
    from io import StringIO

    out = StringIO()
    call_command("memory", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def read_tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def l0_rows(api, rows: list[dict]) -> dict:
    status, body = api.post("/api/v1/l0/messages", {"messages": rows})
    assert status == 200, body
    return body


def build_rich_profile(make_api, profile) -> dict:
    """Conversations, extracted records (stored, replaced, tombstoned, forgotten), a closed
    and a dropped task, scene blocks (one with a Chinese name, one archived), a persona with
    several merged versions and an open proposal, hits, a pinned skill and the skill feed."""
    from apps.persona.services import persona_edit, persona_import, persona_merge_all

    worker = make_api(profile, "worker")
    admin = make_api(profile, "admin")
    profile.settings = {"l2.archiveMinAgeDays": 0}
    profile.save()
    l0_rows(worker, [
        {"id": "u1", "role": "user", "content": "我们的 memoryweb 仓库在 /home/lin/src/memoryweb，测试用 make test 跑。",
         "timestamp": 1764470000000, "sessionKey": "cli:lin:main", "sessionId": "s-01", "cwd": "/home/lin/src/memoryweb"},
        {"id": "a1", "role": "assistant", "content": "Noted: tests run with make test from the repository root.",
         "timestamp": 1764470004000, "sessionKey": "cli:lin:main", "sessionId": "s-01", "cwd": "/home/lin/src/memoryweb"},
        {"id": "u2", "role": "user", "content": "Actually the staging database is Postgres 16 now, not 15 — we upgraded on Friday.",
         "timestamp": 1764470090000, "sessionKey": "cli:lin:main", "sessionId": "s-01", "cwd": "/home/lin/src/memoryweb"},
        {"id": "u3", "role": "user", "content": "TODO before the release: rotate the S3 upload key and write the changelog entry.",
         "timestamp": 1764470150000, "sessionKey": "cli:lin:main", "sessionId": "s-01", "cwd": "/home/lin/src/memoryweb"},
        {"id": None, "role": "tool", "content": "exit status 0", "timestamp": 1764470151000, "sessionKey": "cli:lin:main",
         "sessionId": "s-01", "cwd": "/home/lin/src/memoryweb"},
    ])
    shard = l0_shard_name()
    read = worker.ok("read_l0_increment", l0Files=shard, cursor="")
    cursor = read["nextCursor"] if isinstance(read["nextCursor"], str) else json.dumps(read["nextCursor"])
    commit = worker.ok("l1_commit", cursor=cursor, records=[
        {"content": "memoryweb 的测试在仓库根目录用 make test 运行", "type": "work_method", "priority": 75,
         "source_message_ids": ["u1", "a1"], "metadata": {"scope": "global", "project": ""},
         "new_scene_name": "memoryweb｜测试与构建", "new_scene_reason": "how the project is built and tested"},
        {"content": "The staging database runs PostgreSQL 15", "type": "work_fact", "priority": 60,
         "source_message_ids": ["u2"], "metadata": {"scope": "global", "project": ""},
         "new_scene_name": "memoryweb｜部署环境", "new_scene_reason": "where things run"},
        {"content": "Rotate the S3 upload key before the release", "type": "work_task", "priority": 80,
         "source_message_ids": ["u3"], "metadata": {"scope": "global", "project": ""}, "scene_id": None},
        {"content": "Write the changelog entry for the release", "type": "work_task", "priority": 55,
         "source_message_ids": ["u3"], "metadata": {"scope": "global", "project": ""}},
    ])
    method_id, pg15_id, rotate_id, changelog_id = commit["stored"]
    # A correction: the old fact is replaced by a new version.
    replaced = worker.ok("l1_commit", cursor=cursor, records=[
        {"id": pg15_id, "deleted": True},
        {"content": "The staging database runs PostgreSQL 16 since the Friday upgrade", "type": "work_fact", "priority": 65,
         "source_message_ids": ["u2"], "metadata": {"scope": "global", "project": ""}, "replaces": [pg15_id]},
    ])
    pg16_id = next(i for i in replaced["stored"] if i)
    worker.ok("l1_task_state", ids=[rotate_id], state="done", reason="key rotated on Monday")
    worker.ok("l1_task_state", ids=[changelog_id], state="dropped", reason="the release notes cover it")
    agent = make_api(profile, "agent")
    live = agent.ok("l1_commit", source="main-agent", session="cli:lin:main", records=[
        {"content": "Lin prefers answers in Chinese with English code identifiers", "type": "work_fact", "priority": 70},
        {"content": "The office Wi-Fi password is on the whiteboard", "type": "work_fact", "priority": 40},
    ])
    prefers_id, wifi_id = live["stored"]
    admin.ok("l1_fix", recordId=wifi_id, action="tombstone", evidence="The user asked to forget the Wi-Fi note entirely.",
             reason="user-forget", force=True)
    # Hits, one of them marked useless.
    agent.ok("recall_l1_records", query="how do I run the tests", session="cli:lin:main", turn="t1")
    agent.ok("recall_l1_records", query="which postgres version is staging", session="cli:lin:main", turn="t1")
    agent.ok("clear_invalid_l1_records", recordIds=[pg16_id])
    # Scene blocks: one live with a Chinese file name, one archived.
    when = (timezone.now() - timedelta(days=3)).replace(microsecond=0).isoformat()
    worker.ok("l2_commit", cursor="0", sceneWrites=[
        {"action": "create", "filename": "测试与构建.md", "meta": {"created": when, "updated": when, "summary": "怎么构建和测试 memoryweb", "heat": 4},
         "content": f"# 测试与构建\n\n- 在仓库根目录运行 make test ({method_id})\n"},
        {"action": "create", "filename": "staging-env.md", "meta": {"created": when, "updated": when, "summary": "the staging environment", "heat": 2},
         "content": f"# Staging\n\nPostgreSQL 16 since the upgrade ({pg16_id}).\n"},
    ])
    worker.ok("l2_commit", cursor="0", sceneWrites=[{"action": "archive", "filename": "staging-env.md", "reason": "staging was retired"}])
    # Persona: an imported USER.md, an edit merged by a person, then an open proposal.
    persona_import(profile=profile, actor="test", user_md="偏好中文回答，代码标识符保留英文\n§\nUses vim keybindings everywhere\n")
    persona_edit(profile=profile, actor="job", action="add", content="Runs the test suite before every push")
    persona_merge_all(profile=profile, actor="lin")
    persona_edit(profile=profile, actor="job", action="update", target="vim keybindings", content="Uses vim keybindings, also in the browser")
    worker.ok("l3_commit", cursor=when)
    # A pinned skill with a support file holding a Chinese name.
    admin.ok("skill_manage", action="create", name="git-release", category="devops", content=SKILL_MD.format(
        name="git-release", description="Cut a release with a tag, the changelog and the upload", title="Release", body="1. Tag the commit.\n2. 写 changelog。"))
    admin.ok("skill_manage", action="write_file", name="git-release", file_path="references/发布清单.md", file_content="- 更新版本号\n- 打 tag\n")
    admin.ok("skill_manage", action="pin", name="git-release")
    status, body = agent.post("/api/v1/skill-feed/events", {"events": [
        {"role": "user", "content": "tag the release", "sessionKey": "cli:lin:main"},
        {"role": "tool_call", "content": "git tag v1.4.0", "tool_name": "bash", "tool_call_id": "c1", "sessionKey": "cli:lin:main"},
    ]})
    assert status == 200, body
    drain_outbox(profile.pk)
    assert SceneBlock.objects.filter(profile=profile, archived=True).count() == 1
    return {"method": method_id, "pg15": pg15_id, "pg16": pg16_id, "rotate": rotate_id, "changelog": changelog_id,
            "prefers": prefers_id, "wifi": wifi_id}


@pytest.fixture
def rich_profile(make_profile, make_api):
    profile = make_profile("lin")
    ids = build_rich_profile(make_api, profile)
    return profile, ids
