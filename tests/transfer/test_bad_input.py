"""A bad import directory is refused with the file and line named, before anything is
written: the target profile is exactly as it was (or is not created at all)."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from django.core.management.base import CommandError

from apps.accounts.models import AuditEvent, Profile
from apps.accounts.paths import profile_dir
from apps.conversations.models import Cursor
from apps.hitstats.models import RecordHits
from apps.persona.models import PersonaVersion
from apps.records.models import L1Change, L1Record
from apps.scenes.models import SceneBlock, SceneEntry
from tests.transfer.conftest import read_tree, run


def state(profile: Profile) -> dict:
    return {
        "records": sorted(L1Record.objects.filter(profile=profile).values_list("record_id", "deleted", "version")),
        "changes": L1Change.objects.filter(profile=profile).count(),
        "scenes": SceneEntry.objects.filter(profile=profile).count(),
        "blocks": sorted(SceneBlock.objects.filter(profile=profile).values_list("filename", "archived")),
        "persona": PersonaVersion.objects.filter(profile=profile).count(),
        "hits": RecordHits.objects.filter(profile=profile).count(),
        "cursors": sorted((c.kind, json.dumps(c.value)) for c in Cursor.objects.filter(profile=profile)),
        "audit": AuditEvent.objects.filter(profile=profile).count(),
        "files": read_tree(profile_dir(profile)) if profile_dir(profile).exists() else {},
    }


@pytest.fixture
def export_dir(rich_profile, tmp_path):
    path = tmp_path / "export"
    run("export", "lin", str(path))
    return path


@pytest.fixture
def target(make_profile):
    return make_profile("target")


def refused(target, path, *messages: str) -> str:
    before = state(target)
    with pytest.raises(CommandError) as info:
        run("import", target.slug, str(path))
    text = str(info.value)
    for message in messages:
        assert message in text, text
    assert state(target) == before
    return text


def test_truncated_record_shard_names_the_file_and_line(export_dir, target):
    shard = sorted((export_dir / "memoryDB/l1/records").glob("*.jsonl"))[-1]
    data = shard.read_bytes()
    lines = data.count(b"\n")
    shard.write_bytes(data[:-40])
    refused(target, export_dir, f"memoryDB/l1/records/{shard.name}:{lines}:", "truncated")


def test_bad_meta_block_names_the_file_and_line(export_dir, target):
    block = export_dir / "memoryDB/l2/scenes/测试与构建.md"
    text = block.read_text(encoding="utf-8").replace("heat: 4", "heat: very hot")
    block.write_text(text, encoding="utf-8")
    refused(target, export_dir, "memoryDB/l2/scenes/测试与构建.md:5:", "heat")


def test_meta_block_without_end_is_refused(export_dir, target):
    block = export_dir / "memoryDB/l2/archive/staging-env.md"
    block.write_text(block.read_text(encoding="utf-8").replace("-----META-END-----", ""), encoding="utf-8")
    refused(target, export_dir, "memoryDB/l2/archive/staging-env.md:1:", "META-END")


def test_a_link_leading_out_of_the_directory_is_refused(export_dir, target, tmp_path):
    secret = tmp_path / "elsewhere.md"
    secret.write_text("-----META-START-----\ncreated: 2026-01-01T00:00:00Z\n-----META-END-----\nnot yours\n", encoding="utf-8")
    os.symlink(secret, export_dir / "memoryDB/l2/scenes/linked.md")
    refused(target, export_dir, "memoryDB/l2/scenes/linked.md", "symbolic link")


def test_a_linked_folder_is_refused_too(export_dir, target, tmp_path):
    outside = tmp_path / "other-skills"
    shutil.copytree(export_dir / "skills", outside)
    shutil.rmtree(export_dir / "skills")
    os.symlink(outside, export_dir / "skills")
    refused(target, export_dir, "skills", "symbolic link")


def test_non_utf8_file_names_the_file_and_line(export_dir, target):
    (export_dir / "USER.md").write_bytes("第一条\n§\n".encode() + "caf\xe9 au lait\n".encode("latin-1"))
    refused(target, export_dir, "USER.md:3:", "not UTF-8")


def test_bad_input_creates_no_profile(export_dir):
    (export_dir / "memoryDB/l1/changes.jsonl").write_bytes(b'{"seq": 1, "recordId": "l1_x"')
    with pytest.raises(CommandError, match=r"changes.jsonl:1:"):
        run("import", "never-made", str(export_dir))
    assert not Profile.objects.filter(slug="never-made").exists()


def test_other_mode_is_refused_unless_mapped(export_dir, make_profile):
    chat = make_profile("chatty", mode="chat")
    text = refused(chat, export_dir, "--mode", "chat mode")
    assert "work_fact" in text
    run("import", "chatty", str(export_dir), "--mode", "default")
    kinds = set(L1Record.objects.filter(profile=chat).values_list("type", flat=True))
    assert kinds <= {"persona", "episodic", "instruction"} and kinds


def test_dry_run_writes_nothing_and_says_what_it_would_do(export_dir, target):
    before = state(target)
    out = run("import", "target", str(export_dir), "--dry-run")
    assert "dry run" in out and "records 7" in out
    assert state(target) == before


def test_a_shard_that_differs_from_the_profiles_own_is_refused(export_dir, target):
    from apps.conversations.services import l0_append

    shard = l0_append(profile=target, rows=[{"id": "own", "role": "user", "content": "a conversation of the target itself",
                                             "sessionKey": "t", "timestamp": 1764000000000}])[0]["shard"]
    assert (export_dir / "memoryDB/l0" / shard).exists()
    refused(target, export_dir, f"l0/{shard}", "different content")
