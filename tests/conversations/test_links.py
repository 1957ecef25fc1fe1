"""A link in a profile folder never brings another profile's rows in: not into the L0
index, not into lookups (project, provenance, the dashboard's session page), and index
rows that came from a link are removed."""

from __future__ import annotations

import json
import os

from django.contrib.auth import get_user_model
from django.test import Client

from apps.accounts.models import ProfileAccess
from apps.accounts.paths import own_file, own_files
from apps.conversations import services
from apps.conversations.models import L0Message, L0ShardState

from .conftest import row

CURSOR = json.dumps({"version": 2, "files": {}})


def _link_bobs_shard_into_alice(alice, bob) -> str:
    services.l0_append(profile=bob, rows=[
        row(1, session="bob-s1", content="bob works on /home/bob/secret-project/src/app.py", cwd="/home/bob/secret-project"),
        row(2, session="bob-s1", content="edit /home/bob/secret-project/README.md", cwd="/home/bob/secret-project"),
    ])
    bob_shard = services.l0_dir(bob) / services.today_shard_name()
    name = "2026-11-30.jsonl"
    os.symlink(bob_shard, services.l0_dir(alice) / name)
    return name


def test_the_index_never_follows_a_linked_shard(alice, bob):
    name = _link_bobs_shard_into_alice(alice, bob)
    assert services.l0_reindex(profile=alice) == 0
    assert not L0Message.objects.filter(profile=alice).exists()
    assert [p.name for p in services.l0_shard_files(alice)] == []
    assert services.l0_lookup_messages(profile=alice, refs=["m1"]) == {}
    assert services.l0_session_rows(profile=alice, session_key="bob-s1") == []
    assert own_file(services.l0_dir(alice), name) is None


def test_project_lookup_of_a_linked_session_finds_nothing(worker_api, alice, bob):
    _link_bobs_shard_into_alice(alice, bob)
    body = worker_api.ok("l1_project_get", sessionKey="bob-s1")
    assert body["flag"] is False and body["project"] == ""


def test_a_subagent_commit_citing_a_linked_message_is_provenance_missing(worker_api, alice, bob):
    _link_bobs_shard_into_alice(alice, bob)
    body = worker_api.ok("l1_commit", records=[{
        "content": "the secret project keeps its entry point in src/app.py", "type": "work_fact", "priority": 60,
        "source_message_ids": ["m1"], "metadata": {"scope": "global", "project": ""},
    }], cursor=CURSOR)
    assert body["provenanceMissing"] == 1 and body["stored"] == [None]


def test_index_rows_that_came_from_a_link_are_removed(alice, bob):
    name = _link_bobs_shard_into_alice(alice, bob)
    # Rows an earlier version indexed through the link (or of a shard since removed).
    L0MessageRow = {"ref": "m1", "ref_key": services._sha1("m1"), "session_key": "bob-s1",
                    "session_hash": services._sha1("bob-s1"), "shard": name, "offset": 0, "length": 10, "line": 1}
    L0Message.objects.create(profile=alice, **L0MessageRow)
    L0Message.objects.create(profile=alice, **{**L0MessageRow, "shard": "2026-01-01.jsonl"})
    L0ShardState.objects.create(profile=alice, shard=name, indexed_bytes=10, indexed_lines=1)
    L0ShardState.objects.create(profile=alice, shard="2026-01-01.jsonl", indexed_bytes=10, indexed_lines=1)
    services.l0_reindex(profile=alice)
    assert not L0Message.objects.filter(profile=alice).exists()
    assert not L0ShardState.objects.filter(profile=alice).exists()


def test_the_dashboard_session_page_shows_no_row_of_a_linked_shard(alice, bob, db):
    name = _link_bobs_shard_into_alice(alice, bob)
    L0Message.objects.create(profile=alice, ref="m1", ref_key=services._sha1("m1"), session_key="bob-s1",
                             session_hash=services._sha1("bob-s1"), shard=name, offset=0, length=10, line=1)
    L0ShardState.objects.create(profile=alice, shard=name, indexed_bytes=10, indexed_lines=1)
    user = get_user_model().objects.create_user(username="reader", password="pw-reader-123")
    ProfileAccess.objects.create(user=user, profile=alice, is_admin=False)
    client = Client()
    client.force_login(user)
    response = client.get(f"/p/{alice.slug}/conversations/session/", {"session": "bob-s1"})
    assert response.status_code == 404
    assert b"secret-project" not in client.get(f"/p/{alice.slug}/conversations/").content


def test_own_files_skips_links_and_a_linked_folder(tmp_path):
    folder = tmp_path / "l0"
    folder.mkdir()
    (folder / "a.jsonl").write_text("{}\n")
    os.symlink(folder / "a.jsonl", folder / "b.jsonl")
    assert [p.name for p in own_files(folder, "*.jsonl")] == ["a.jsonl"]
    os.symlink(folder, tmp_path / "linked")
    assert own_files(tmp_path / "linked", "*.jsonl") == []
