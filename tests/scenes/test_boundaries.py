"""SPEC §1.4, §3.8–§3.11 limits checked at their exact boundaries."""

from datetime import timedelta

from django.utils import timezone

from apps.scenes.models import SceneBlock, SceneBlockBackup

from .conftest import create, meta, state, write_record


def commit(api, writes, cursor=0):
    return api.call("l2_commit", sceneWrites=writes, cursor=cursor)


def ok(api, writes, cursor=0):
    status, body = commit(api, writes, cursor)
    assert status == 200, body
    return body


def test_block_of_exactly_24000_is_whole_and_24001_is_cut(agent_api, worker_api):
    ok(worker_api, [create("exact.md", "e" * 24000), create("over.md", "o" * 24001)])
    body = agent_api.ok("read_scene_blocks", filenames=["exact.md", "over.md"])
    exact, over = body["blocks"]
    assert len(exact["content"]) == 24000 and "truncated" not in exact
    assert len(over["content"]) == 24000 and over["truncated"] is True
    assert (body["returned"], body["truncated"], body["omitted"], body["totalChars"]) == (2, 1, 0, 48000)


def test_a_call_returns_exactly_96000_and_omits_the_next_character(agent_api, worker_api):
    names = ["a.md", "b.md", "c.md", "d.md", "e.md"]
    ok(worker_api, [create(n, n[0] * 24000) for n in names[:4]] + [create("e.md", "e")])
    body = agent_api.ok("read_scene_blocks", filenames=names)
    assert [b.get("omitted", False) for b in body["blocks"]] == [False, False, False, False, True]
    assert body["totalChars"] == 96000 and body["returned"] == 4 and body["omitted"] == 1
    assert body["blocks"][4]["content"] is None and body["blocks"][4]["meta"]["summary"] == "a scene"


def test_call_budget_follows_the_profile_settings(agent_api, worker_api, alice):
    alice.settings = {"l2.blockMaxChars": 10, "l2.callMaxChars": 15}
    alice.save()
    ok(worker_api, [create("a.md", "x" * 12), create("b.md", "y" * 5), create("c.md", "z")])
    body = agent_api.ok("read_scene_blocks", filenames=["a.md", "b.md", "c.md"])
    assert [b["content"] for b in body["blocks"]] == ["x" * 10, "y" * 5, None]


def test_max_records_200_is_accepted_and_201_is_invalid(worker_api, alice):
    for _ in range(201):
        write_record(alice)
    body = worker_api.ok("read_l1_increment", maxRecords=200)
    assert (body["returned"], body["totalNew"], body["truncated"]) == (200, 201, True)
    rest = worker_api.ok("read_l1_increment", cursor=body["nextCursor"], maxRecords=200)
    assert (rest["returned"], rest["totalNew"], rest["truncated"]) == (1, 1, False)
    status, err = worker_api.call("read_l1_increment", maxRecords=201)
    assert status == 400 and err["error"]["details"][0]["field"] == "maxRecords"


def test_tombstone_reaches_the_increment_after_the_record_was_read(worker_api, alice):
    record = write_record(alice, content="a fact")
    first = worker_api.ok("read_l1_increment")
    write_record(alice, record_id=record.record_id, content="a fact", deleted=True, action="tombstone")
    body = worker_api.ok("read_l1_increment", cursor=first["nextCursor"])
    assert [(r["id"], r["deleted"]) for r in body["records"]] == [(record.record_id, True)]


SOURCE_A = "alpha " * 10  # 50 non-space characters
SOURCE_B = "beta! " * 10  # 50 non-space characters


def test_consolidate_accepts_exactly_half_and_refuses_one_character_less(worker_api, alice):
    ok(worker_api, [create("a.md", SOURCE_A), create("b.md", SOURCE_B)])
    before = state(alice)
    write = {"action": "consolidate", "filename": "ab.md", "sources": ["a.md", "b.md"], "meta": meta()}
    status, body = commit(worker_api, [{**write, "content": "# Heading is free\n" + "x" * 49}])
    assert status == 409 and "49" in body["error"]["message"] and "100" in body["error"]["message"]
    assert state(alice) == before
    ok(worker_api, [{**write, "content": "# Heading is free\n" + "x" * 50}])


def test_archive_age_counts_from_the_server_time_at_the_exact_boundary(worker_api, alice):
    ok(worker_api, [create("almost.md"), create("old.md")])
    now = timezone.now()
    SceneBlock.objects.filter(profile=alice, filename="almost.md").update(created_at=now - timedelta(days=7) + timedelta(minutes=1))
    SceneBlock.objects.filter(profile=alice, filename="old.md").update(created_at=now - timedelta(days=7) - timedelta(seconds=5))
    before = state(alice)
    status, body = commit(worker_api, [{"action": "archive", "filename": "almost.md", "reason": "finished"}])
    assert status == 409 and "younger than 7 days" in body["error"]["message"]
    assert state(alice) == before
    assert worker_api.ok("l2_archive_guide", filename="almost.md")["archivable"] is False
    assert worker_api.ok("l2_archive_guide", filename="old.md")["archivable"] is True
    ok(worker_api, [{"action": "archive", "filename": "old.md", "reason": "finished"}])


def test_the_last_ten_backups_are_kept_by_default(worker_api, alice):
    ok(worker_api, [create("a.md", "body 0")])
    for i in range(1, 13):
        ok(worker_api, [{"action": "update", "filename": "a.md", "meta": meta(), "content": f"body {i}"}])
    block = SceneBlock.objects.get(profile=alice, filename="a.md", removed=False)
    kept = list(SceneBlockBackup.objects.filter(block=block).order_by("-id").values_list("content", flat=True))
    assert kept == [f"body {i}" for i in range(11, 1, -1)]


def test_cap_override_accepts_exactly_max_and_refuses_one_more_including_restore(worker_api, alice):
    alice.settings = {"l2.maxScenes": 4, "l2.archiveMinAgeDays": 0}
    alice.save()
    ok(worker_api, [create("a.md"), create("b.md"), create("c.md")])
    ok(worker_api, [{"action": "archive", "filename": "c.md", "reason": "finished"}])
    body = ok(worker_api, [create("c2.md"), create("d.md")])
    assert (body["liveCount"], body["maxScenes"], body["sceneCountWarning"]) == (4, 4, "red")
    before = state(alice)
    status, err = commit(worker_api, [{"action": "restore", "filename": "c.md"}])
    assert status == 409 and err["error"]["details"] == {"liveCount": 4, "liveAfter": 5, "maxScenes": 4}
    assert state(alice) == before
    body = ok(worker_api, [{"action": "restore", "filename": "c.md"}, {"action": "delete", "filename": "d.md"}])
    assert body["liveCount"] == 4


def test_warning_colours_at_max_minus_3_minus_1_and_max_with_a_profile_cap(worker_api, alice, make_profile):
    alice.settings = {"l2.maxScenes": 8}
    alice.save()
    colours = {}
    for i in range(8):
        body = ok(worker_api, [create(f"s{i}.md")])
        colours[body["liveCount"]] = body["sceneCountWarning"]
    assert colours == {1: "green", 2: "green", 3: "green", 4: "green", 5: "yellow", 6: "yellow", 7: "orange", 8: "red"}


def test_mirror_writes_cjk_filenames_with_the_meta_header(worker_api, alice, settings, django_capture_on_commit_callbacks, monkeypatch):
    monkeypatch.setattr("apps.pipeline.triggers.l2_committed", lambda **kw: None)
    name = "项目-记忆_設計.md"
    with django_capture_on_commit_callbacks(execute=True):
        ok(worker_api, [create(name, "## 决定\n- 使用 PostgreSQL")])
    text = (settings.DATA_DIR / "profiles" / "alice" / "l2" / "scenes" / name).read_text(encoding="utf-8")
    assert text.startswith("-----META-START-----\n") and "-----META-END-----\n## 决定\n- 使用 PostgreSQL\n" in text


def test_a_body_over_the_read_limit_is_stored_whole_with_a_warning(worker_api, alice):
    alice.settings = {"l2.blockMaxChars": 100}
    alice.save()
    fits = ok(worker_api, [create("fits.md", "f" * 100)])
    assert "warnings" not in fits
    body = ok(worker_api, [create("big.md", "b" * 101)])
    assert any("big.md" in w and "101" in w and "100" in w for w in body["warnings"])
    assert len(SceneBlock.objects.get(profile=alice, filename="big.md").content) == 101


def test_a_120_character_cjk_name_is_stored_and_the_rest_of_the_mirror_is_still_written(
        worker_api, alice, settings, django_capture_on_commit_callbacks, monkeypatch):
    monkeypatch.setattr("apps.pipeline.triggers.l2_committed", lambda **kw: None)
    long_name = "记" * 117 + ".md"  # 120 characters, 354 bytes in UTF-8: more than most file systems take
    record = write_record(alice)
    with django_capture_on_commit_callbacks(execute=True):
        body = ok(worker_api, [create(long_name, "长名字"), create("z-after.md", "after")], cursor=record.last_change)
    assert body["liveCount"] == 2 and any("354 bytes" in w for w in body["warnings"])
    assert SceneBlock.objects.get(profile=alice, filename=long_name).content == "长名字"
    root = settings.DATA_DIR / "profiles" / "alice" / "l2"
    assert (root / "scenes" / "z-after.md").read_text(encoding="utf-8").endswith("after\n")
    assert (root / "cursor.json").read_text().strip() == f'{{"lastRecordId": {record.last_change}}}'
