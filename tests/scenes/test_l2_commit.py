from datetime import timedelta

import pytest
from django.utils import timezone

from apps.accounts.models import AuditEvent
from apps.conversations.cursors import cursor_get
from apps.scenes.models import SceneBlock, SceneBlockBackup, SceneCommit

from .conftest import create, make_old, meta, state, write_record


def commit(api, writes, cursor=0, **kw):
    return api.call("l2_commit", sceneWrites=writes, cursor=cursor, **kw)


def ok(api, writes, cursor=0, **kw):
    status, body = commit(api, writes, cursor, **kw)
    assert status == 200, body
    return body


def live_names(profile):
    return sorted(SceneBlock.objects.filter(profile=profile, removed=False, archived=False).values_list("filename", flat=True))


def block(profile, name, archived=False):
    return SceneBlock.objects.get(profile=profile, filename=name, removed=False, archived=archived)


def test_create_stores_block_meta_and_advances_cursor(worker_api, alice):
    rec = write_record(alice, content="uses pnpm")
    body = ok(worker_api, [create("项目-α_notes.md", f"# Tooling\n- uses pnpm ({rec.record_id})", meta=meta("tooling", 4))], cursor=rec.last_change)
    assert body == {"success": True, "applied": [{"action": "create", "filename": "项目-α_notes.md"}], "liveCount": 1,
                    "maxScenes": 20, "sceneCountWarning": "green"}
    b = block(alice, "项目-α_notes.md")
    assert (b.summary, b.heat, b.members) == ("tooling", 4, [rec.record_id])
    assert cursor_get(profile=alice, kind="l2") == {"lastRecordId": rec.last_change}


def test_members_default_to_previous_plus_content_references(worker_api, alice):
    r1, r2, r3 = (write_record(alice, content=f"fact {i}") for i in range(3))
    ok(worker_api, [create("a.md", f"- one ({r1.record_id})")])
    ok(worker_api, [{"action": "update", "filename": "a.md", "meta": meta(), "content": f"- two （{r2.record_id}，{r3.record_id}）"}])
    assert block(alice, "a.md").members == sorted([r1.record_id, r2.record_id, r3.record_id])


def test_explicit_members_replace_the_default(worker_api, alice):
    r1, r2 = write_record(alice), write_record(alice)
    ok(worker_api, [create("a.md", f"- ({r1.record_id})")])
    ok(worker_api, [{"action": "update", "filename": "a.md", "meta": meta(), "content": "new body", "members": [r2.record_id]}])
    assert block(alice, "a.md").members == [r2.record_id]


def test_unknown_explicit_members_are_rejected(worker_api, alice):
    before = state(alice)
    status, body = commit(worker_api, [create("a.md", members=["l1_0_zzzz"])])
    assert status == 400 and "l1_0_zzzz" in body["error"]["message"]
    assert state(alice) == before


def test_unknown_references_in_content_are_warned_not_added(worker_api, alice):
    body = ok(worker_api, [create("a.md", "- cites (l1_999_nope)")])
    assert block(alice, "a.md").members == []
    assert any("l1_999_nope" in w for w in body["warnings"])


def test_bob_cannot_reference_alices_records(make_api, bob, alice):
    rec = write_record(alice)
    api = make_api(bob, "worker")
    ok(api, [create("a.md", f"- ({rec.record_id})")])
    assert block(bob, "a.md").members == []
    assert commit(api, [create("b.md", members=[rec.record_id])])[0] == 400


@pytest.mark.parametrize("name", ["../x.md", "a/b.md", "x.txt", ".md", "a b.md", "a..md", ".hidden.md", "x" * 118 + ".md", "a:b.md", "a\\b.md"])
def test_bad_filenames_change_nothing(worker_api, alice, name):
    before = state(alice)
    status, body = commit(worker_api, [create(name)])
    assert status in (400, 403), body
    assert state(alice) == before


def test_filename_escaping_the_profile_is_forbidden(worker_api):
    status, body = commit(worker_api, [create("../../bob/l2/scenes/x.md")])
    assert status == 403 and body["error"]["code"] == "forbidden"


def test_letters_of_any_script_are_valid_and_120_chars_is_the_limit(worker_api, alice):
    ok(worker_api, [create("Ünïcode_日本語-1.2.md"), create("x" * 117 + ".md")])
    assert len(live_names(alice)) == 2


def test_duplicate_filenames_in_one_batch_change_nothing(worker_api, alice):
    before = state(alice)
    status, body = commit(worker_api, [create("a.md"), create("a.md")], cursor=0)
    assert status == 400 and "sceneWrites.1" in body["error"]["message"]
    assert state(alice) == before


def test_unknown_filename_is_not_found_and_the_batch_is_dropped(worker_api, alice):
    before = state(alice)
    status, body = commit(worker_api, [create("new.md"), {"action": "update", "filename": "ghost.md", "meta": meta(), "content": "x"}])
    assert status == 404 and body["error"]["code"] == "not_found"
    assert state(alice) == before


def test_create_of_existing_block_conflicts(worker_api, alice):
    ok(worker_api, [create("a.md")])
    before = state(alice)
    status, _ = commit(worker_api, [create("a.md")])
    assert status == 409 and state(alice) == before


@pytest.mark.parametrize("bad_meta", [
    {"created": "yesterday", "updated": "2026-01-01T00:00:00Z", "summary": "s", "heat": 1},
    {"created": "2026-01-01T00:00:00Z", "updated": "2026-01-01T00:00:00Z", "summary": "two\nlines", "heat": 1},
    {"created": "2026-01-01T00:00:00Z", "updated": "2026-01-01T00:00:00Z", "summary": "s", "heat": -1},
    {"created": "2026-01-01T00:00:00Z", "updated": "2026-01-01T00:00:00Z", "summary": "s", "heat": "hot"},
    {"created": "2026-01-01T00:00:00Z", "updated": "2026-01-01T00:00:00Z", "summary": "s"},
    None,
])
def test_meta_is_validated(worker_api, alice, bad_meta):
    before = state(alice)
    write = create("a.md")
    write["meta"] = bad_meta
    status, body = commit(worker_api, [write])
    assert status == 400 and body["error"]["code"] == "invalid_params"
    assert state(alice) == before


def test_update_keeps_backups_and_prunes_beyond_the_configured_count(worker_api, alice):
    alice.settings = {"l2.backupsPerBlock": 3}
    alice.save()
    ok(worker_api, [create("a.md", "body 0")])
    for i in range(1, 6):
        ok(worker_api, [{"action": "update", "filename": "a.md", "meta": meta(), "content": f"body {i}"}])
    backups = SceneBlockBackup.objects.filter(block=block(alice, "a.md"))
    assert [b.content for b in backups] == ["body 4", "body 3", "body 2"]
    assert block(alice, "a.md").content == "body 5"


def test_update_keeps_the_original_created(worker_api, alice):
    ok(worker_api, [create("a.md", meta=meta(created="2025-05-05T00:00:00Z"))])
    ok(worker_api, [{"action": "update", "filename": "a.md", "meta": meta(created="2026-09-09T00:00:00Z", updated="2026-09-10T00:00:00Z"), "content": "x"}])
    assert block(alice, "a.md").meta_created.year == 2025


def test_delete_is_soft_and_frees_the_name(worker_api, alice):
    rec = write_record(alice)
    ok(worker_api, [create("a.md", f"gone soon ({rec.record_id})")])
    ok(worker_api, [{"action": "delete", "filename": "a.md", "reason": "obsolete"}])
    assert live_names(alice) == []
    gone = SceneBlock.objects.get(profile=alice, filename="a.md")
    assert gone.removed and gone.content == f"gone soon ({rec.record_id})"
    assert gone.backups.first().members == [rec.record_id]
    ok(worker_api, [create("a.md", "again")])
    assert live_names(alice) == ["a.md"]


def test_merge_backs_up_sources_unions_members_and_removes_them(worker_api, alice):
    r1, r2 = write_record(alice), write_record(alice)
    ok(worker_api, [create("a.md", f"- a ({r1.record_id})"), create("b.md", f"- b ({r2.record_id})")])
    body = ok(worker_api, [{"action": "merge", "filename": "ab.md", "sources": ["a.md", "b.md"], "meta": meta(), "content": "short"}])
    assert body["liveCount"] == 1 and live_names(alice) == ["ab.md"]
    assert block(alice, "ab.md").members == sorted([r1.record_id, r2.record_id])
    assert SceneBlockBackup.objects.filter(block__profile=alice, action="merge").count() == 2


def test_merge_into_one_of_its_sources(worker_api, alice):
    ok(worker_api, [create("a.md", "alpha"), create("b.md", "beta")])
    ok(worker_api, [{"action": "merge", "filename": "a.md", "sources": ["a.md", "b.md"], "meta": meta(), "content": "alpha beta"}])
    assert live_names(alice) == ["a.md"] and block(alice, "a.md").content == "alpha beta"


def test_merge_needs_two_existing_sources(worker_api, alice):
    ok(worker_api, [create("a.md")])
    before = state(alice)
    assert commit(worker_api, [{"action": "merge", "filename": "t.md", "sources": ["a.md"], "meta": meta(), "content": "x"}])[0] == 400
    assert commit(worker_api, [{"action": "merge", "filename": "t.md", "sources": ["a.md", "nope.md"], "meta": meta(), "content": "x"}])[0] == 404
    assert state(alice) == before


def test_merge_target_may_not_overwrite_an_unrelated_block(worker_api, alice):
    ok(worker_api, [create("a.md"), create("b.md"), create("c.md")])
    before = state(alice)
    status, _ = commit(worker_api, [{"action": "merge", "filename": "c.md", "sources": ["a.md", "b.md"], "meta": meta(), "content": "x"}])
    assert status == 409 and state(alice) == before


LONG_A = "# A\n" + "- alpha entry with details\n" * 10
LONG_B = "# B\n" + "- beta entry with details\n" * 10


def test_consolidate_rejects_a_body_under_half_of_the_sources(worker_api, alice):
    ok(worker_api, [create("a.md", LONG_A), create("b.md", LONG_B)])
    before = state(alice)
    short = "# Merged\n# Many headings do not count\n" * 20 + "- alpha entry\n- beta entry\n"
    status, body = commit(worker_api, [{"action": "consolidate", "filename": "ab.md", "sources": ["a.md", "b.md"], "meta": meta(), "content": short}])
    assert status == 409 and body["error"]["code"] == "conflict"
    assert state(alice) == before


def test_consolidate_accepts_a_body_of_at_least_half(worker_api, alice):
    ok(worker_api, [create("a.md", LONG_A), create("b.md", LONG_B)])
    merged = "# AB\n" + "- alpha entry with details\n" * 5 + "- beta entry with details\n" * 5
    body = ok(worker_api, [{"action": "consolidate", "filename": "ab.md", "sources": ["a.md", "b.md"], "meta": meta(), "content": merged}])
    assert body["applied"] == [{"action": "consolidate", "filename": "ab.md"}]
    assert live_names(alice) == ["ab.md"]


def test_consolidate_rejects_explicit_members_missing_a_source_member(worker_api, alice):
    r1, r2 = write_record(alice), write_record(alice)
    ok(worker_api, [create("a.md", LONG_A + f"({r1.record_id})"), create("b.md", LONG_B + f"({r2.record_id})")])
    before = state(alice)
    status, body = commit(worker_api, [{"action": "consolidate", "filename": "ab.md", "sources": ["a.md", "b.md"], "meta": meta(),
                                        "content": LONG_A + LONG_B, "members": [r1.record_id]}])
    assert status == 409 and r2.record_id in body["error"]["message"]
    assert state(alice) == before


def test_cap_rejects_the_whole_batch_with_advice(worker_api, alice):
    alice.settings = {"l2.maxScenes": 3}
    alice.save()
    ok(worker_api, [create("a.md"), create("b.md")])
    before = state(alice)
    status, body = commit(worker_api, [{"action": "update", "filename": "a.md", "meta": meta(), "content": "changed"}, create("c.md"), create("d.md")])
    assert status == 409 and body["error"]["code"] == "conflict"
    assert "consolidate" in body["error"]["message"] and "archive" in body["error"]["message"]
    assert state(alice) == before


def test_scene_count_warning_levels(worker_api, alice):
    alice.settings = {"l2.maxScenes": 5}
    alice.save()
    seen = []
    for i in range(5):
        seen.append(ok(worker_api, [create(f"s{i}.md")])["sceneCountWarning"])
    assert seen == ["green", "yellow", "yellow", "orange", "red"]


def test_a_batch_that_frees_slots_is_accepted_at_the_cap(worker_api, alice):
    alice.settings = {"l2.maxScenes": 2}
    alice.save()
    ok(worker_api, [create("a.md", LONG_A), create("b.md", LONG_B)])
    body = ok(worker_api, [{"action": "consolidate", "filename": "ab.md", "sources": ["a.md", "b.md"], "meta": meta(), "content": LONG_A + LONG_B},
                           create("c.md")])
    assert body["liveCount"] == 2 and body["sceneCountWarning"] == "red"


def test_archive_requires_reason_and_one_per_batch(worker_api, alice):
    ok(worker_api, [create("a.md"), create("b.md")])
    make_old(alice, "a.md")
    make_old(alice, "b.md")
    before = state(alice)
    assert commit(worker_api, [{"action": "archive", "filename": "a.md"}])[0] == 400
    status, body = commit(worker_api, [{"action": "archive", "filename": "a.md", "reason": "done"}, {"action": "archive", "filename": "b.md", "reason": "done"}])
    assert status == 400 and "one archive" in body["error"]["message"]
    assert state(alice) == before


def test_archive_moves_a_block_out_of_the_cap_and_restore_brings_it_back(worker_api, alice):
    alice.settings = {"l2.maxScenes": 2}
    alice.save()
    rec = write_record(alice)
    ok(worker_api, [create("a.md", f"kept ({rec.record_id})"), create("b.md")])
    make_old(alice, "a.md")
    body = ok(worker_api, [{"action": "archive", "filename": "a.md", "reason": "project finished"}, create("c.md")])
    assert body["liveCount"] == 2
    arch = block(alice, "a.md", archived=True)
    assert arch.archive_reason == "project finished" and arch.archived_at and arch.members == [rec.record_id]
    before = state(alice)
    status, body = commit(worker_api, [{"action": "restore", "filename": "a.md"}])
    assert status == 409 and state(alice) == before  # the cap counts a restored block again
    ok(worker_api, [{"action": "delete", "filename": "c.md"}, {"action": "restore", "filename": "a.md"}])
    assert live_names(alice) == ["a.md", "b.md"]
    assert block(alice, "a.md").content == f"kept ({rec.record_id})"


def test_archive_is_refused_for_young_blocks(worker_api, alice):
    ok(worker_api, [create("a.md")])
    SceneBlock.objects.filter(profile=alice, filename="a.md").update(created_at=timezone.now() - timedelta(days=6))
    before = state(alice)
    status, body = commit(worker_api, [{"action": "archive", "filename": "a.md", "reason": "cold"}])
    assert status == 409 and "7 days" in body["error"]["message"]
    assert state(alice) == before


def test_archive_is_refused_when_an_archived_block_has_the_name(worker_api, alice):
    ok(worker_api, [create("a.md", "old one")])
    make_old(alice, "a.md")
    ok(worker_api, [{"action": "archive", "filename": "a.md", "reason": "old"}])
    ok(worker_api, [create("a.md", "new one")])
    make_old(alice, "a.md")
    before = state(alice)
    status, body = commit(worker_api, [{"action": "archive", "filename": "a.md", "reason": "again"}])
    assert status == 409 and "archived block" in body["error"]["message"]
    assert commit(worker_api, [{"action": "restore", "filename": "a.md"}])[0] == 409
    assert state(alice) == before


def test_restore_of_unknown_block_is_not_found(worker_api):
    status, body = commit(worker_api, [{"action": "restore", "filename": "none.md"}])
    assert status == 404 and body["error"]["code"] == "not_found"


def test_update_of_an_archived_block_says_restore_first(worker_api, alice):
    ok(worker_api, [create("a.md")])
    make_old(alice, "a.md")
    ok(worker_api, [{"action": "archive", "filename": "a.md", "reason": "old"}])
    status, body = commit(worker_api, [{"action": "update", "filename": "a.md", "meta": meta(), "content": "x"}])
    assert status == 404 and "restore" in body["error"]["message"]


def test_cursor_must_not_pass_the_newest_change_or_go_back(worker_api, alice):
    rec = write_record(alice)
    ok(worker_api, [], cursor=rec.last_change)
    before = state(alice)
    assert commit(worker_api, [create("a.md")], cursor=rec.last_change + 1000)[0] == 400
    assert commit(worker_api, [create("a.md")], cursor=0)[0] == 409
    assert commit(worker_api, [create("a.md")], cursor="not-a-cursor")[0] == 400
    assert state(alice) == before


def test_empty_batch_commits_the_cursor(worker_api, alice):
    rec = write_record(alice)
    body = ok(worker_api, [], cursor=str(rec.last_change))
    assert body["applied"] == [] and cursor_get(profile=alice, kind="l2") == {"lastRecordId": rec.last_change}


def test_every_write_is_audited(worker_api, alice):
    rec = write_record(alice)
    ok(worker_api, [create("a.md"), create("b.md")], cursor=rec.last_change)
    events = AuditEvent.objects.filter(profile=alice, tool="l2_commit")
    assert sorted(events.values_list("action", "target_id")) == [("create", "a.md"), ("create", "b.md"), ("cursor", "l2")]
    created = events.get(target_id="a.md")
    assert created.before is None and created.after["content"] == "Body text of a scene block."


def test_persona_signal_is_stored_and_triggers_after_commit(worker_api, alice, monkeypatch, django_capture_on_commit_callbacks):
    calls = []
    monkeypatch.setattr("apps.pipeline.triggers.l2_committed", lambda **kw: calls.append(kw))
    with django_capture_on_commit_callbacks(execute=True):
        ok(worker_api, [create("a.md")], personaSignal=True, personaReason="new preference about editors")
    assert calls == [{"profile_id": alice.pk, "persona_signal": True, "reason": "new preference about editors"}]
    row = SceneCommit.objects.get(profile=alice)
    assert row.persona_signal and row.persona_reason == "new preference about editors"


def test_no_trigger_when_the_batch_fails(worker_api, alice, monkeypatch, django_capture_on_commit_callbacks):
    calls = []
    monkeypatch.setattr("apps.pipeline.triggers.l2_committed", lambda **kw: calls.append(kw))
    with django_capture_on_commit_callbacks(execute=True):
        commit(worker_api, [create("bad name.md")], personaSignal=True)
    assert calls == []


def test_agent_role_may_not_commit(agent_api):
    assert agent_api.call("l2_commit", sceneWrites=[], cursor=0)[0] == 403


def test_blocks_of_bob_are_invisible_to_alice(make_api, alice, bob, worker_api):
    ok(make_api(bob, "worker"), [create("a.md", "bob's")])
    ok(worker_api, [create("a.md", "alice's")])
    assert block(alice, "a.md").content == "alice's" and block(bob, "a.md").content == "bob's"
    status, _ = commit(worker_api, [{"action": "delete", "filename": "b.md"}])
    assert status == 404


def test_cursor_may_name_the_last_record_and_the_stored_cursor_is_always_accepted(worker_api, alice):
    rec = write_record(alice)
    ok(worker_api, [], cursor=rec.record_id)
    assert cursor_get(profile=alice, kind="l2") == {"lastRecordId": rec.last_change}
    # An imported cursor beyond this profile's changes must not wedge the organizer.
    from apps.conversations.cursors import cursor_set

    cursor_set(profile=alice, kind="l2", value={"lastRecordId": rec.last_change + 500})
    stored = worker_api.ok("read_l1_increment")["nextCursor"]
    assert ok(worker_api, [create("a.md")], cursor=stored)["liveCount"] == 1


def test_meta_updated_before_created_is_invalid(worker_api, alice):
    before = state(alice)
    status, body = commit(worker_api, [create("a.md", meta=meta(created="2026-02-01T00:00:00Z", updated="2026-01-01T00:00:00Z"))])
    assert status == 400 and "sceneWrites.0.meta.updated" in body["error"]["message"]
    assert state(alice) == before


@pytest.mark.parametrize("field,bad", [
    ("content", "a body\x00with NUL"),
    ("content", "a body with a lone surrogate \ud800"),
    ("summary", "summary\x00"),
    ("reason", "why\x00"),
    ("members", "l1_\x00"),
])
def test_text_that_cannot_be_stored_is_invalid_and_changes_nothing(worker_api, alice, field, bad):
    ok(worker_api, [create("a.md")])
    before = state(alice)
    write = {"action": "update", "filename": "a.md", "meta": meta(), "content": "fine"}
    if field == "summary":
        write["meta"] = meta(summary=bad)
    elif field == "members":
        write["members"] = [bad]
    else:
        write[field] = bad
    status, body = commit(worker_api, [write])
    assert status == 400 and body["error"]["code"] == "invalid_params"
    assert body["error"]["details"][0]["field"].startswith(f"sceneWrites.0.{'meta.' if field == 'summary' else ''}{field}")
    assert state(alice) == before


def test_persona_reason_with_nul_is_invalid(worker_api, alice):
    before = state(alice)
    status, body = commit(worker_api, [create("a.md")], personaSignal=True, personaReason="because\x00")
    assert status == 400 and body["error"]["details"][0]["field"] == "personaReason"
    assert state(alice) == before


def test_heat_beyond_the_stored_range_is_invalid_and_changes_nothing(worker_api, alice):
    before = state(alice)
    status, body = commit(worker_api, [create("a.md", meta=meta(heat=2**31))])
    assert status == 400 and body["error"]["details"][0]["field"] == "sceneWrites.0.meta.heat"
    assert state(alice) == before
    assert ok(worker_api, [create("a.md", meta=meta(heat=2**31 - 1))])["applied"] == [{"action": "create", "filename": "a.md"}]


@pytest.mark.parametrize("when", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"])
def test_meta_time_without_a_utc_equivalent_is_invalid(worker_api, alice, when):
    before = state(alice)
    status, body = commit(worker_api, [create("a.md", meta=meta(created=when, updated="2026-01-02T00:00:00Z"))])
    assert status == 400 and body["error"]["details"][0]["field"] == "sceneWrites.0.meta.created"
    assert state(alice) == before


def test_meta_times_in_the_future_are_invalid_and_change_nothing(worker_api, alice):
    future = (timezone.now() + timedelta(minutes=10)).isoformat()
    before = state(alice)
    status, body = commit(worker_api, [create("a.md", meta=meta(updated=future))])
    assert status == 400 and body["error"]["details"][0]["field"] == "sceneWrites.0.meta.updated"
    assert "future" in body["error"]["message"]
    assert state(alice) == before
    soon = (timezone.now() + timedelta(minutes=1)).isoformat()
    ok(worker_api, [create("a.md", meta=meta(updated=soon))])


def test_an_update_the_persona_job_would_never_read_is_warned(worker_api, alice):
    from apps.conversations.cursors import cursor_set

    cursor_set(profile=alice, kind="l3", value={"updated": "2026-03-01T00:00:00Z"})
    body = ok(worker_api, [create("old.md", meta=meta(updated="2026-02-01T00:00:00Z")),
                           create("new.md", meta=meta(updated="2026-03-02T00:00:00Z"))])
    assert len(body["warnings"]) == 1 and "old.md" in body["warnings"][0] and "persona" in body["warnings"][0]
