"""Importing a TencentDB-Agent-Memory data directory (SPEC §7 [2026-12]): the fixture is
written here from the documented formats — chat-mode records (v1 shards) and code-mode
records (v2 shards, with `version`, `userId`/`agentId`), a merge that deleted two records
(visible only in vectors.db), scene blocks citing records as (memory ID), and a
persona.md ending in the auto-appended "Scene Navigation" section."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from django.core.management.base import CommandError

from apps.accounts.models import Profile
from apps.conversations.cursors import cursor_get
from apps.persona.services import persona_live_entries
from apps.pipeline.scheduling import evaluate, l0_backlog
from apps.records.models import L1Record
from apps.scenes.models import SceneBlock, SceneEntry
from tests.transfer.conftest import run


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _vectors_db(path: Path, live_ids: list[str]) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE l1_records (record_id TEXT PRIMARY KEY, content TEXT, type TEXT, embedding BLOB, updated_time TEXT)")
    conn.executemany("INSERT INTO l1_records (record_id, content, type) VALUES (?, '', '')", [(i,) for i in live_ids])
    conn.commit()
    conn.close()


def chat_fixture(root: Path) -> Path:
    """A chat agent's memory: v1 rows (no userId/agentId, no record version)."""
    s = "wechat:dm:mei"
    _jsonl(root / "conversations/2026-10-02.jsonl", [
        {"sessionKey": s, "sessionId": "a1", "recordedAt": "2026-10-02T08:01:10.112Z", "id": "msg-001", "role": "user",
         "content": "我下个月要去京都，想住在离鸭川近一点的地方", "timestamp": 1759392070000},
        {"sessionKey": s, "sessionId": "a1", "recordedAt": "2026-10-02T08:01:14.530Z", "id": "msg-002", "role": "assistant",
         "content": "好的，我记下了：京都行程，偏好鸭川附近的住宿。", "timestamp": 1759392074000},
        {"sessionKey": s, "sessionId": "a1", "recordedAt": "2026-10-02T08:03:40.001Z", "id": "msg-003", "role": "user",
         "content": "以后别给我推荐红眼航班了，我实在熬不动", "timestamp": 1759392220000},
    ])
    _jsonl(root / "conversations/2026-10-05.jsonl", [
        {"sessionKey": s, "sessionId": "a2", "recordedAt": "2026-10-05T21:15:00.000Z", "id": "msg-010", "role": "user",
         "content": "Booked the ryokan in Pontocho for the 14th to the 17th.", "timestamp": 1759698900000},
    ])
    _jsonl(root / "records/2026-10-02.jsonl", [
        {"id": "l1_1759392100000_k7q2", "content": "用户计划下个月去京都旅行", "type": "episodic", "priority": 60,
         "scene_name": "美｜京都旅行", "source_message_ids": ["msg-001"], "metadata": {"activity_start_time": "2026-11"},
         "timestamps": ["2026-10-02T08:01:10.000Z"], "createdAt": "2026-10-02T08:05:00.000Z", "updatedAt": "2026-10-02T08:05:00.000Z",
         "sessionKey": s, "sessionId": "a1"},
        {"id": "l1_1759392100001_m3za", "content": "住宿偏好：靠近鸭川", "type": "persona", "priority": 70,
         "scene_name": "美｜京都旅行", "source_message_ids": ["msg-001", "msg-002"], "metadata": {},
         "timestamps": ["2026-10-02T08:01:10.000Z"], "createdAt": "2026-10-02T08:05:00.100Z", "updatedAt": "2026-10-02T08:05:00.100Z",
         "sessionKey": s, "sessionId": "a1"},
        {"id": "l1_1759392300000_x1yb", "content": "不要推荐红眼航班", "type": "instruction", "priority": -1,
         "scene_name": "美｜出行偏好", "source_message_ids": ["msg-003"], "metadata": {},
         "timestamps": ["2026-10-02T08:03:40.000Z"], "createdAt": "2026-10-02T08:06:00.000Z", "updatedAt": "2026-10-02T08:06:00.000Z",
         "sessionKey": s, "sessionId": "a1"},
    ])
    _jsonl(root / "records/2026-10-05.jsonl", [
        # The merge result of the two Kyoto records: both originals are gone from vectors.db.
        {"id": "l1_1759699000000_p0nt", "content": "用户 11 月 14–17 日去京都，住先斗町的旅馆（靠近鸭川）", "type": "episodic",
         "priority": 75, "scene_name": "美｜京都旅行", "source_message_ids": ["msg-001", "msg-010"], "metadata": {},
         "timestamps": ["2026-10-02T08:01:10.000Z", "2026-10-05T21:15:00.000Z"], "createdAt": "2026-10-05T21:20:00.000Z",
         "updatedAt": "2026-10-05T21:20:00.000Z", "sessionKey": s, "sessionId": "a2"},
        # The instruction again, updated in place: the later line wins.
        {"id": "l1_1759392300000_x1yb", "content": "不要推荐红眼航班（晚上十点后起飞的都算）", "type": "instruction", "priority": -1,
         "scene_name": "美｜出行偏好", "source_message_ids": ["msg-003"], "metadata": {},
         "timestamps": ["2026-10-02T08:03:40.000Z"], "createdAt": "2026-10-02T08:06:00.000Z", "updatedAt": "2026-10-05T21:21:00.000Z",
         "sessionKey": s, "sessionId": "a2"},
    ])
    _vectors_db(root / "vectors.db", ["l1_1759699000000_p0nt", "l1_1759392300000_x1yb"])
    (root / "scene_blocks").mkdir()
    (root / "scene_blocks/京都旅行.md").write_text(
        "-----META-START-----\ncreated: 2026-10-02T08:10:00.000Z\nupdated: 2026-10-05T21:30:00.000Z\n"
        "summary: 十一月的京都之行\nheat: 3\n-----META-END-----\n\n## 京都旅行\n\n"
        "- 11 月 14–17 日，住先斗町的旅馆 (l1_1759699000000_p0nt)\n- 不坐红眼航班（l1_1759392300000_x1yb）\n", encoding="utf-8")
    (root / "persona.md").write_text(
        "# 用户画像\n\n## 偏好\n\n- 出行不坐红眼航班\n- 喜欢住在河边、安静的地方\n\n"
        "## Scene Navigation\n\n- [京都旅行](scene_blocks/京都旅行.md) — 十一月的京都之行\n", encoding="utf-8")
    (root / ".metadata").mkdir()
    (root / ".metadata/recall_checkpoint.json").write_text(json.dumps({"lastRecordedAt": "2026-10-05T21:15:00.000Z"}))
    return root


def code_fixture(root: Path) -> Path:
    """A coding agent's memory: v2 rows with userId/agentId and record versions."""
    s = "claude:proj:billing"
    _jsonl(root / "conversations/2026-11-03.jsonl", [
        {"sessionKey": s, "sessionId": "c9", "recordedAt": "2026-11-03T10:00:01.000Z", "id": "t-1", "role": "user",
         "content": "the billing service reads its config from /srv/billing/config.toml", "timestamp": 1762164001000,
         "userId": "u-42", "agentId": "claude-code"},
        {"sessionKey": s, "sessionId": "c9", "recordedAt": "2026-11-03T10:00:09.000Z", "id": "t-2", "role": "assistant",
         "content": "Got it. I'll also note that invoices are generated by a nightly cron at 02:00.", "timestamp": 1762164009000,
         "userId": "u-42", "agentId": "claude-code"},
    ])
    _jsonl(root / "records/2026-11-03.jsonl", [
        {"id": "l1_1762164100000_aa01", "content": "billing 服务的配置文件在 /srv/billing/config.toml", "type": "work_fact", "priority": 70,
         "scene_name": "billing｜配置", "source_message_ids": ["t-1"], "metadata": {"scope": "global", "project": ""},
         "timestamps": ["2026-11-03T10:00:01.000Z"], "createdAt": "2026-11-03T10:02:00.000Z", "updatedAt": "2026-11-03T10:02:00.000Z",
         "sessionKey": s, "sessionId": "c9", "version": 1},
        {"id": "l1_1762164100001_aa02", "content": "Invoices are generated by a nightly cron job at 02:00", "type": "work_fact",
         "priority": 60, "scene_name": "billing｜任务调度", "source_message_ids": ["t-2"], "metadata": {"scope": "global", "project": ""},
         "timestamps": ["2026-11-03T10:00:09.000Z"], "createdAt": "2026-11-03T10:02:00.500Z", "updatedAt": "2026-11-03T10:02:00.500Z",
         "sessionKey": s, "sessionId": "c9", "version": 1},
        {"id": "l1_1762164200000_aa03", "content": "Move the invoice cron to the job queue", "type": "work_task", "priority": 50,
         "scene_name": "billing｜任务调度", "source_message_ids": ["t-2"], "metadata": {"scope": "global", "project": ""},
         "timestamps": ["2026-11-03T10:00:09.000Z"], "createdAt": "2026-11-03T10:03:00.000Z", "updatedAt": "2026-11-03T10:03:00.000Z",
         "sessionKey": s, "sessionId": "c9", "version": 2},
    ])
    _vectors_db(root / "vectors.db", ["l1_1762164100000_aa01", "l1_1762164200000_aa03"])
    (root / "scene_blocks").mkdir()
    (root / "scene_blocks/billing-config.md").write_text(
        "-----META-START-----\ncreated: 2026-11-03T10:05:00Z\nupdated: 2026-11-03T10:05:00Z\nsummary: where billing reads its settings\n"
        "heat: 1\n-----META-END-----\n# Billing config\n\nConfig lives in /srv/billing/config.toml (l1_1762164100000_aa01).\n",
        encoding="utf-8")
    (root / "persona.md").write_text("Prefers small, reviewed pull requests\n§\nWrites commit messages in English\n", encoding="utf-8")
    return root


def test_chat_mode_directory_imports_with_tombstones_membership_and_persona(tmp_path, make_profile):
    source = chat_fixture(tmp_path / "memory-tdai")
    out = run("import", "mei", str(source))
    assert "(tdai)" in out
    profile = Profile.objects.get(slug="mei")
    assert profile.mode == "chat"
    records = {r.record_id: r for r in L1Record.objects.filter(profile=profile)}
    assert len(records) == 4
    assert {i for i, r in records.items() if r.deleted} == {"l1_1759392100000_k7q2", "l1_1759392100001_m3za"}
    assert records["l1_1759392300000_x1yb"].content == "不要推荐红眼航班（晚上十点后起飞的都算）"
    assert records["l1_1759392300000_x1yb"].priority == -1
    assert {s.name for s in SceneEntry.objects.filter(profile=profile, reserved=False)} == {"美｜京都旅行", "美｜出行偏好"}
    assert records["l1_1759699000000_p0nt"].scene.name == "美｜京都旅行"
    block = SceneBlock.objects.get(profile=profile, filename="京都旅行.md")
    assert block.members == ["l1_1759392300000_x1yb", "l1_1759699000000_p0nt"] and block.summary == "十一月的京都之行"
    assert persona_live_entries(profile=profile) == ["出行不坐红眼航班", "喜欢住在河边、安静的地方"]
    # The rows are L0 with their ids kept and lines numbered; nothing counts as new.
    shard = (Path(profile_dir_of(profile)) / "l0/2026-10-02.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["sourceLine"] for line in shard] == [1, 2, 3]
    assert l0_backlog(profile=profile, cursor=cursor_get(profile=profile, kind="l1"), limit=100).eligible == 0
    assert evaluate(profile=profile, kind="l1_extract").due is False
    assert evaluate(profile=profile, kind="l2_organize").due is False


def test_code_mode_v2_directory_keeps_versions_and_extra_row_fields(tmp_path, make_profile):
    source = code_fixture(tmp_path / "memory-tdai")
    make_profile("billing")
    run("import", "billing", str(source), "--format", "tdai")
    profile = Profile.objects.get(slug="billing")
    records = {r.record_id: r for r in L1Record.objects.filter(profile=profile)}
    assert records["l1_1762164200000_aa03"].version == 2 and records["l1_1762164200000_aa03"].task_state == "open"
    assert records["l1_1762164100001_aa02"].deleted
    row = json.loads((Path(profile_dir_of(profile)) / "l0/2026-11-03.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert row["userId"] == "u-42" and row["agentId"] == "claude-code" and row["sourceLine"] == 1
    assert SceneBlock.objects.get(profile=profile, filename="billing-config.md").members == ["l1_1762164100000_aa01"]
    assert persona_live_entries(profile=profile) == ["Prefers small, reviewed pull requests", "Writes commit messages in English"]
    assert evaluate(profile=profile, kind="l1_extract").due is False
    # A re-run imports nothing new.
    out = run("import", "billing", str(source))
    assert "records 0" in out and "skipped 3" in out
    assert L1Record.objects.filter(profile=profile).count() == 3


def test_into_a_profile_that_already_extracts_the_new_shards_are_covered(tmp_path, make_profile):
    from apps.conversations.cursors import cursor_set
    from apps.conversations.services import l0_append

    profile = make_profile("billing")
    row = l0_append(profile=profile, rows=[{"id": "own-1", "role": "user", "content": "the deploy runs from CI only",
                                            "sessionKey": "own", "timestamp": 1764000000000}])[0]
    cursor_set(profile=profile, kind="l1", value={"version": 2, "files": {row["shard"]: 0}})
    run("import", "billing", str(code_fixture(tmp_path / "memory-tdai")))
    cursor = cursor_get(profile=profile, kind="l1")
    assert cursor["files"][row["shard"]] == 0  # its own row is still to be extracted
    assert cursor["files"]["2026-11-03.jsonl"] == (Path(profile_dir_of(profile)) / "l0/2026-11-03.jsonl").stat().st_size
    assert l0_backlog(profile=profile, cursor=cursor, limit=100).eligible == 1


def test_chat_records_into_a_code_profile_need_a_mapping(tmp_path, make_profile):
    source = chat_fixture(tmp_path / "memory-tdai")
    make_profile("coder")
    with pytest.raises(CommandError, match="--mode"):
        run("import", "coder", str(source))
    assert not L1Record.objects.filter(profile__slug="coder").exists()


def test_a_vectors_db_that_is_not_sqlite_is_refused(tmp_path, db):
    source = code_fixture(tmp_path / "memory-tdai")
    (source / "vectors.db").write_bytes(b"not a database at all" * 100)
    with pytest.raises(CommandError, match=r"vectors\.db"):
        run("import", "x", str(source))
    assert not Profile.objects.filter(slug="x").exists()


def profile_dir_of(profile):
    from apps.accounts.paths import profile_dir

    return profile_dir(profile)
