"""Scene blocks: live and archived lists, the cap gauge, members and backups, and
archive/restore through the scene service with its guards."""

from __future__ import annotations

from apps.accounts.models import AuditEvent
from apps.scenes.models import SceneBlock
from apps.scenes.services import scene_commit


def test_list_shows_live_archived_pool_and_cap(login, alice, make_block):
    make_block(alice, "构建.md")
    body = login("alice").get("/p/alice/scenes/").content.decode()
    assert "构建.md" in body
    assert "1 / 20 live · green" in body


def test_cap_gauge_turns_yellow_near_the_cap(login, alice, make_block):
    alice.settings = {"l2.maxScenes": 4}
    alice.save()
    make_block(alice, "a.md")
    assert "1 / 4 live · yellow" in login("alice").get("/p/alice/scenes/").content.decode()


def test_block_page_renders_markdown_members_and_backups(login, alice, make_record, make_block):
    record = make_record(alice, "The build runs make test")
    block = make_block(alice, "build.md", "# Build\n\n- runs tests", members=[record.record_id])
    scene_commit(profile=alice, actor="test", cursor=None, scene_writes=[{
        "action": "update", "filename": "build.md", "content": "# Build\n\n- runs tests\n- lints with ruff",
        "meta": {"created": block.meta_created.isoformat(), "updated": block.meta_created.isoformat(), "summary": "build", "heat": 4},
    }])
    body = login("alice").get(f"/p/alice/scenes/{block.pk}/").content.decode()
    assert "<h1>Build</h1>" in body and "<li>lints with ruff</li>" in body
    assert record.record_id in body and "The build runs make test" in body
    assert "<ins>+ - lints with ruff</ins>" in body  # the backup's diff to the newer body


def test_archive_and_restore_through_the_service(login, alice, make_block):
    block = make_block(alice, "old-project.md", days_old=30)
    client = login("alice")
    body = client.post(f"/p/alice/scenes/{block.pk}/archive/", {"reason": "the project ended in October"}, follow=True).content.decode()
    assert "Archived old-project.md" in body
    block.refresh_from_db()
    assert block.archived is True and block.archive_reason == "the project ended in October"
    assert AuditEvent.objects.filter(profile=alice, actor="user:alice", action__icontains="archive").exists()
    body = client.post(f"/p/alice/scenes/{block.pk}/restore/", follow=True).content.decode()
    assert "Restored old-project.md" in body
    block.refresh_from_db()
    assert block.archived is False


def test_archive_needs_a_reason(login, alice, make_block):
    block = make_block(alice, "old.md", days_old=30)
    body = login("alice").post(f"/p/alice/scenes/{block.pk}/archive/", {"reason": "  "}, follow=True).content.decode()
    assert "Please check the form:" in body
    block.refresh_from_db()
    assert block.archived is False


def test_young_block_archive_is_refused_by_the_guard(login, alice, make_block):
    block = make_block(alice, "fresh.md", days_old=1)
    body = login("alice").post(f"/p/alice/scenes/{block.pk}/archive/", {"reason": "trying too early"}, follow=True).content.decode()
    # In a plain sentence: no internal field path ("sceneWrites.0.filename: …").
    assert "Not done: fresh.md is younger than 7 days" in body
    assert "sceneWrites" not in body and "nothing was written" not in body
    block.refresh_from_db()
    assert block.archived is False


def test_restore_over_the_cap_is_refused(login, alice, make_block):
    block = make_block(alice, "a.md", days_old=30)
    client = login("alice")
    client.post(f"/p/alice/scenes/{block.pk}/archive/", {"reason": "done with it"})
    alice.settings = {"l2.maxScenes": 1}
    alice.save()
    make_block(alice, "b.md")
    body = client.post(f"/p/alice/scenes/{block.pk}/restore/", follow=True).content.decode()
    assert "Not done:" in body
    block.refresh_from_db()
    assert block.archived is True


def test_scene_of_another_profile_is_404(login, bob, make_block):
    block = make_block(bob, "bobs.md", days_old=30)
    client = login("alice")
    assert client.get(f"/p/alice/scenes/{block.pk}/").status_code == 404
    assert client.post(f"/p/alice/scenes/{block.pk}/archive/", {"reason": "not mine at all"}).status_code == 404
    assert SceneBlock.objects.get(pk=block.pk).archived is False
