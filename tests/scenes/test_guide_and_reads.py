from datetime import timedelta

from django.utils import timezone

from apps.hitstats.models import RecallEvent, RecallHit
from apps.records.models import L1Change
from apps.scenes.models import SceneBlock

from .conftest import create, make_old, meta, write_record


def ok(api, writes, cursor=0):
    status, body = api.call("l2_commit", sceneWrites=writes, cursor=cursor)
    assert status == 200, body
    return body


def test_guide_reports_facts_from_real_data(worker_api, alice):
    r1, r2, r3 = (write_record(alice, content=f"fact {i}") for i in range(3))
    ok(worker_api, [create("a.md", f"- ({r1.record_id}) ({r2.record_id}) ({r3.record_id})", meta=meta("alpha work", 7)), create("b.md")])
    event = RecallEvent.objects.create(profile=alice, query="q")
    RecallHit.objects.create(event=event, profile=alice, record_id=r1.record_id, score=0.9)
    later = RecallHit.objects.create(event=event, profile=alice, record_id=r2.record_id, score=0.5)
    # Activity on three distinct later days; the block was written "now", so move its write back.
    SceneBlock.objects.filter(profile=alice, filename="a.md").update(written_at=timezone.now() - timedelta(days=10))
    for days_ago in (1, 2, 2, 5, 11):
        change = L1Change.objects.create(profile=alice, record=r1, action="fix", actor="t", state={})
        L1Change.objects.filter(pk=change.pk).update(created_at=timezone.now() - timedelta(days=days_ago))
    guide = worker_api.ok("l2_archive_guide")
    assert "consolidate" in guide["rules"].lower() and "7 days" in guide["rules"]
    assert guide["liveCount"] == 2 and guide["maxScenes"] == 20
    facts = {b["filename"]: b for b in guide["blocks"]}
    a = facts["a.md"]
    assert (a["heat"], a["memberCount"], a["recalledMembers"], a["summary"], a["archived"]) == (7, 3, 2, "alpha work", False)
    assert a["lastRecallAt"] == later.created_at.isoformat().replace("+00:00", "Z")
    # today (the records above), 1, 2 and 5 days ago; 11 days ago is before the write
    assert a["activeDaysSinceWrite"] == 4
    assert facts["b.md"]["recalledMembers"] == 0 and facts["b.md"]["lastRecallAt"] is None
    assert "archivable" not in guide


def test_guide_archivable_hard_blocks(worker_api, alice):
    ok(worker_api, [create("young.md"), create("old.md"), create("dup.md")])
    make_old(alice, "old.md")
    make_old(alice, "dup.md")
    ok(worker_api, [{"action": "archive", "filename": "dup.md", "reason": "finished"}])
    ok(worker_api, [create("dup.md")])
    make_old(alice, "dup.md")
    young = worker_api.ok("l2_archive_guide", filename="young.md")
    assert young["archivable"] is False and "7 days" in young["why"]
    old = worker_api.ok("l2_archive_guide", filename="old.md")
    assert old["archivable"] is True
    dup = worker_api.ok("l2_archive_guide", filename="dup.md")
    assert dup["archivable"] is False and "archived block" in dup["why"]
    assert any(b["filename"] == "dup.md" and b["archived"] for b in dup["blocks"])
    assert worker_api.call("l2_archive_guide", filename="none.md")[0] == 404
    assert worker_api.call("l2_archive_guide", filename="../../x.md")[0] == 403


def test_guide_min_age_is_configurable(worker_api, alice):
    alice.settings = {"l2.archiveMinAgeDays": 0}
    alice.save()
    ok(worker_api, [create("a.md")])
    assert worker_api.ok("l2_archive_guide", filename="a.md")["archivable"] is True
    ok(worker_api, [{"action": "archive", "filename": "a.md", "reason": "min age is zero here"}])


def test_read_scene_blocks_returns_meta_content_and_errors(agent_api, worker_api, alice):
    ok(worker_api, [create("a.md", "alpha body", meta=meta("alpha", 3)), create("b.md", "beta body")])
    body = agent_api.ok("read_scene_blocks", filenames=["a.md", "missing.md", "b.md"])
    a, missing, b = body["blocks"]
    assert a["ok"] and a["content"] == "alpha body" and a["meta"]["summary"] == "alpha" and a["meta"]["heat"] == 3
    assert a["meta"]["created"] == "2026-01-01T00:00:00Z"
    assert missing == {"filename": "missing.md", "ok": False, "error": "no scene block missing.md"}
    assert b["content"] == "beta body"
    assert (body["returned"], body["omitted"], body["truncated"], body["totalChars"]) == (2, 0, 0, len("alpha body") + len("beta body"))


def test_read_scene_blocks_truncates_a_block_and_omits_past_the_call_budget(agent_api, worker_api, alice):
    big = "x" * 30000
    names = [f"b{i}.md" for i in range(5)]
    ok(worker_api, [create(n, big) for n in names])
    body = agent_api.ok("read_scene_blocks", filenames=names)
    blocks = body["blocks"]
    assert all(len(b["content"]) == 24000 and b["truncated"] for b in blocks[:4])
    assert blocks[4]["omitted"] is True and blocks[4]["content"] is None
    assert (body["returned"], body["omitted"], body["truncated"], body["totalChars"]) == (4, 1, 4, 96000)


def test_later_blocks_stay_omitted_once_the_budget_is_spent(agent_api, worker_api, alice):
    ok(worker_api, [create("big1.md", "y" * 24000), create("big2.md", "y" * 24000), create("big3.md", "y" * 24000),
                    create("mid.md", "z" * 23000), create("over.md", "z" * 2000), create("tiny.md", "t")])
    body = agent_api.ok("read_scene_blocks", filenames=["big1.md", "big2.md", "big3.md", "mid.md", "over.md", "tiny.md"])
    assert [b.get("omitted", False) for b in body["blocks"]] == [False, False, False, False, True, True]
    assert body["totalChars"] == 95000


def test_read_scene_blocks_refuses_paths_outside_the_profile(agent_api, make_api, bob):
    ok(make_api(bob, "worker"), [create("secret.md", "bob only")])
    status, body = agent_api.call("read_scene_blocks", filenames=["../../bob/l2/scenes/secret.md"])
    assert status == 403 and body["error"]["code"] == "forbidden"
    body = agent_api.ok("read_scene_blocks", filenames=["secret.md"])
    assert body["blocks"][0]["ok"] is False


def test_read_scene_blocks_accepts_a_path_inside_the_profile(agent_api, worker_api):
    ok(worker_api, [create("a.md", "alpha")])
    body = agent_api.ok("read_scene_blocks", filenames=["scenes/a.md"])
    assert body["blocks"][0]["content"] == "alpha"


def test_read_scene_blocks_needs_at_least_one_name(agent_api):
    assert agent_api.call("read_scene_blocks", filenames=[])[0] == 400


def test_mirror_files_follow_commits(worker_api, alice, settings, django_capture_on_commit_callbacks, monkeypatch):
    monkeypatch.setattr("apps.pipeline.triggers.l2_committed", lambda **kw: None)
    rec = write_record(alice)
    root = settings.DATA_DIR / "profiles" / "alice" / "l2"
    with django_capture_on_commit_callbacks(execute=True):
        ok(worker_api, [create("a.md", f"alpha ({rec.record_id})", meta=meta("sum", 2)), create("b.md", "beta")], cursor=rec.last_change)
    text = (root / "scenes" / "a.md").read_text(encoding="utf-8")
    assert text.startswith("-----META-START-----\ncreated: 2026-01-01T00:00:00Z\nupdated: 2026-01-02T00:00:00Z\nsummary: sum\nheat: 2\n")
    assert f"members: {rec.record_id}\n-----META-END-----\nalpha ({rec.record_id})" in text
    assert (root / "cursor.json").read_text().strip() == f'{{"lastRecordId": {rec.last_change}}}'
    make_old(alice, "a.md")
    with django_capture_on_commit_callbacks(execute=True):
        ok(worker_api, [{"action": "archive", "filename": "a.md", "reason": "done"}, {"action": "delete", "filename": "b.md"}], cursor=rec.last_change)
    assert sorted(p.name for p in (root / "scenes").iterdir()) == []
    assert (root / "archive" / "a.md").exists()


def test_read_scene_blocks_refuses_a_name_with_nul_at_the_door(agent_api, worker_api):
    # NUL is not text: the tool door refuses it for every parameter (docs/api.md).
    ok(worker_api, [create("a.md", "alpha")])
    status, body = agent_api.call("read_scene_blocks", filenames=["a\x00.md", "a.md"])
    assert status == 400 and [d["field"] for d in body["error"]["details"]] == ["filenames.0"]


def test_a_path_into_the_archive_folder_reads_the_archived_block_of_that_name(agent_api, worker_api, alice):
    ok(worker_api, [create("dup.md", "old archived story")])
    make_old(alice, "dup.md")
    ok(worker_api, [{"action": "archive", "filename": "dup.md", "reason": "finished"}])
    ok(worker_api, [create("dup.md", "new live story"), create("only-live.md", "x")])
    body = agent_api.ok("read_scene_blocks", filenames=["dup.md", "archive/dup.md", "scenes/dup.md", "archive/only-live.md"])
    got = [(b["ok"], b.get("content"), b.get("archived", False)) for b in body["blocks"]]
    assert got[0] == (True, "new live story", False)
    assert got[1] == (True, "old archived story", True)
    assert got[2] == (True, "new live story", False)
    assert got[3][0] is False and "archived" in body["blocks"][3]["error"]


def test_mirror_never_writes_through_a_folder_linked_to_another_profile(worker_api, make_api, alice, bob, settings,
                                                                        django_capture_on_commit_callbacks, monkeypatch):
    import os

    monkeypatch.setattr("apps.pipeline.triggers.l2_committed", lambda **kw: None)
    with django_capture_on_commit_callbacks(execute=True):
        ok(make_api(bob, "worker"), [create("bobs.md", "bob only")])
    bob_scenes = settings.DATA_DIR / "profiles" / "bob" / "l2" / "scenes"
    before = {p.name: p.read_bytes() for p in bob_scenes.iterdir()}
    alice_l2 = settings.DATA_DIR / "profiles" / "alice" / "l2"
    alice_l2.mkdir(parents=True, exist_ok=True)
    os.symlink(bob_scenes, alice_l2 / "scenes")
    with django_capture_on_commit_callbacks(execute=True):
        ok(worker_api, [create("alices.md", "alice only")])
    assert {p.name: p.read_bytes() for p in bob_scenes.iterdir()} == before
    assert SceneBlock.objects.filter(profile=alice, filename="alices.md").exists()
