"""The records table and the record page: filters, counts, pagination, the actions through
the records services with their guards, and the refusals shown to the person."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from apps.accounts.models import AuditEvent
from apps.hitstats.models import RecordHits
from apps.records.models import L1Change, L1Record

EVIDENCE = "The user said on 2026-11-02 that the port moved to 8080."


def _ids(response) -> set[str]:
    body = response.content.decode()
    return {part.split('"')[0] for part in body.split('name="ids" value="')[1:]}


def test_list_shows_live_records_with_total(login, alice, make_record):
    live = make_record(alice, "The service listens on port 8000")
    gone = make_record(alice, "An outdated fact about the old server", deleted=True)
    response = login("alice").get("/p/alice/records/")
    assert response.status_code == 200
    assert _ids(response) == {live.record_id}
    assert "1 record ·" in response.content.decode()
    assert gone.record_id in _ids(login("alice").get("/p/alice/records/?status=tombstoned"))
    assert _ids(login("alice").get("/p/alice/records/?status=all")) == {live.record_id, gone.record_id}


def test_filters_by_type_scope_project_scene_and_task_state(login, alice, make_record):
    task_open = make_record(alice, "Write the migration guide for v2", type="work_task")
    task_done = make_record(alice, "Ship the release notes for v1", type="work_task", task_state="done")
    scoped = make_record(alice, "Project memoryweb uses Django 5.2", metadata={"scope": "self", "project": "/srv/memoryweb"})
    client = login("alice")
    assert _ids(client.get("/p/alice/records/?type=work_task")) == {task_open.record_id, task_done.record_id}
    assert _ids(client.get("/p/alice/records/?task_state=open")) == {task_open.record_id}
    assert _ids(client.get("/p/alice/records/?task_state=done")) == {task_done.record_id}
    assert _ids(client.get("/p/alice/records/?scope=self")) == {scoped.record_id}
    assert _ids(client.get("/p/alice/records/?project=/srv/memoryweb")) == {scoped.record_id}


def test_filters_by_date_range(login, alice, make_record):
    old = make_record(alice, "An old fact from last month", created_at=timezone.now() - timedelta(days=40))
    new = make_record(alice, "A fresh fact from today")
    today = timezone.now().date()
    client = login("alice")
    since = (today - timedelta(days=2)).isoformat()
    assert _ids(client.get(f"/p/alice/records/?from={since}")) == {new.record_id}
    until = (today - timedelta(days=30)).isoformat()
    assert _ids(client.get(f"/p/alice/records/?to={until}")) == {old.record_id}


def test_bad_filter_values_are_named_not_silently_dropped(login, alice, make_record):
    make_record(alice, "Something to list here")
    body = login("alice").get("/p/alice/records/?type=bogus&from=yesterday").content.decode()
    assert "Filter ignored: unknown type" in body
    assert "from: &#x27;yesterday&#x27; is not a date" in body


def test_keyword_search_matches_every_word_and_chinese(login, alice, make_record):
    en = make_record(alice, "Deploy with docker compose on the staging host")
    zh = make_record(alice, "用户喜欢用中文写提交说明")
    make_record(alice, "Deploy by hand on production")
    client = login("alice")
    assert _ids(client.get("/p/alice/records/?q=deploy+staging")) == {en.record_id}
    assert _ids(client.get("/p/alice/records/?q=中文")) == {zh.record_id}
    assert _ids(client.get(f"/p/alice/records/?q={zh.record_id}")) == {zh.record_id}


def test_pagination_counts_everything_and_pages_do_not_overlap(login, alice, make_record):
    made = {make_record(alice, f"Numbered fact number {i} for paging").record_id for i in range(60)}
    client = login("alice")
    first = client.get("/p/alice/records/?per_page=25")
    assert "60 records · page 1 of 3" in first.content.decode()
    seen = set()
    for n in (1, 2, 3):
        ids = _ids(client.get(f"/p/alice/records/?per_page=25&page={n}"))
        assert not (ids & seen)
        seen |= ids
    assert seen == made
    # A page past the end shows the last page instead of an error.
    assert "page 3 of 3" in client.get("/p/alice/records/?per_page=25&page=99").content.decode()


def test_sorting_by_priority(login, alice, make_record):
    low = make_record(alice, "Low priority detail", priority=10)
    high = make_record(alice, "High priority rule", priority=95)
    body = login("alice").get("/p/alice/records/?sort=-priority").content.decode()
    assert body.index(high.record_id) < body.index(low.record_id)
    body = login("alice").get("/p/alice/records/?sort=priority").content.decode()
    assert body.index(low.record_id) < body.index(high.record_id)


def test_htmx_request_gets_only_the_results_partial(login, alice, make_record):
    make_record(alice, "Partial rendering check")
    response = login("alice").get("/p/alice/records/?q=partial", HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert "<html" not in body and "Partial rendering check" in body
    assert 'id="bulk"' in body
    assert "HX-Request" in response["Vary"]


def test_history_restore_request_gets_the_whole_page(login, alice, make_record):
    make_record(alice, "Back button check")
    response = login("alice").get("/p/alice/records/?q=back", HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true")
    assert "<html" in response.content.decode()


def test_record_page_shows_content_history_hits_and_scenes(login, alice, make_record, make_block):
    record = make_record(alice, "The API answers on /api/v1")
    RecordHits.objects.create(profile=alice, record_id=record.record_id, hits=3, invalid_hits=1)
    make_block(alice, "接口.md", f"# API\n\nSee ({record.record_id}).", members=[record.record_id])
    body = login("alice").get(f"/p/alice/records/{record.record_id}/").content.decode()
    assert "The API answers on /api/v1" in body
    assert "3 hits · 1 invalid" in body and "<strong>2</strong> effective" in body
    assert "接口.md" in body
    assert "store" in body  # the history entry


def test_rewrite_goes_through_the_service_and_lands_on_the_new_record(login, alice, make_record):
    record = make_record(alice, "The service listens on port 8000")
    client = login("alice")
    response = client.post(f"/p/alice/records/{record.record_id}/fix/",
                           {"action": "rewrite", "newContent": "The service listens on port 8080", "evidence": EVIDENCE})
    record.refresh_from_db()
    assert record.deleted is True and record.replaced_by
    new = L1Record.objects.get(profile=alice, record_id=record.replaced_by)
    assert new.content == "The service listens on port 8080" and new.version == record.version + 1
    assert response.status_code == 302 and response["Location"] == f"/p/alice/records/{new.record_id}/"
    event = AuditEvent.objects.filter(profile=alice, target_id=record.record_id).order_by("-id").first()
    assert event.actor == "user:alice" and event.tool == "dashboard"
    page = client.get(response["Location"]).content.decode()
    assert f"Rewrote {record.record_id}" in page
    old_page = client.get(f"/p/alice/records/{record.record_id}/").content.decode()
    assert f"Replaced by <a class=\"mono\" href=\"/p/alice/records/{new.record_id}/\"" in old_page


def test_fix_with_short_evidence_is_refused_and_changes_nothing(login, alice, make_record):
    record = make_record(alice, "The service listens on port 8000")
    changes = L1Change.objects.count()
    response = login("alice").post(f"/p/alice/records/{record.record_id}/fix/",
                                   {"action": "tombstone", "evidence": "too short"}, follow=True)
    body = response.content.decode()
    assert "Please check the form:" in body and "evidence" in body
    record.refresh_from_db()
    assert record.deleted is False and L1Change.objects.count() == changes


def test_htmx_refusal_renders_in_place(login, alice, make_record):
    record = make_record(alice, "The service listens on port 8000")
    response = login("alice").post(f"/p/alice/records/{record.record_id}/fix/",
                                   {"action": "tombstone", "evidence": "short"}, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert response.status_code == 200 and "<html" not in body
    assert 'class="refusal"' in body and "invalid_params" in body
    assert '<textarea name="evidence" rows="2" required>short</textarea>' in body  # what was typed survives


def test_htmx_success_redirects_the_browser(login, alice, make_record):
    record = make_record(alice, "The service listens on port 8000")
    response = login("alice").post(f"/p/alice/records/{record.record_id}/fix/",
                                   {"action": "tombstone", "evidence": EVIDENCE}, HTTP_HX_REQUEST="true")
    assert response["HX-Redirect"] == f"/p/alice/records/{record.record_id}/"


def test_high_value_record_needs_an_admin_force(login, people, alice, make_record):
    from apps.accounts.models import ProfileAccess

    record = make_record(alice, "A record recalled very often")
    RecordHits.objects.create(profile=alice, record_id=record.record_id, hits=9)
    url = f"/p/alice/records/{record.record_id}/fix/"
    # A non-admin cannot force: the service refuses and nothing changes.
    body = login("alice").post(url, {"action": "tombstone", "evidence": EVIDENCE, "force": "on"}, follow=True).content.decode()
    assert "Not allowed:" in body
    body = login("alice").post(url, {"action": "tombstone", "evidence": EVIDENCE}, follow=True).content.decode()
    assert "Not done:" in body and "high-value" in body
    record.refresh_from_db()
    assert record.deleted is False
    assert 'name="force"' not in login("alice").get(f"/p/alice/records/{record.record_id}/").content.decode()
    ProfileAccess.objects.filter(user=people["alice"], profile=alice).update(is_admin=True)
    body = login("alice").post(url, {"action": "tombstone", "evidence": EVIDENCE, "force": "on"}, follow=True).content.decode()
    record.refresh_from_db()
    assert record.deleted is True and "Tombstoned" in body


def test_a_fix_of_the_rewritten_record_is_not_debounced(login, alice, make_record):
    # SPEC §3.5 [2026-12]: the debounce counts one record id; a rewrite's new record starts without one.
    record = make_record(alice, "The service listens on port 8000")
    client = login("alice")
    first = client.post(f"/p/alice/records/{record.record_id}/fix/", {"action": "rewrite", "newContent": "The service listens on port 8080", "evidence": EVIDENCE})
    new_id = first["Location"].rstrip("/").rsplit("/", 1)[1]
    body = client.post(f"/p/alice/records/{new_id}/fix/", {"action": "tombstone", "evidence": EVIDENCE}, follow=True).content.decode()
    assert "Not done:" not in body
    assert L1Record.objects.get(profile=alice, record_id=new_id).deleted is True


def test_task_state_is_set_through_the_service(login, alice, make_record):
    task = make_record(alice, "Write the migration guide for v2", type="work_task")
    body = login("alice").post(f"/p/alice/records/{task.record_id}/task-state/", {"state": "done", "reason": "shipped"}, follow=True).content.decode()
    task.refresh_from_db()
    assert task.task_state == "done"
    assert "1 applied" in body
    assert task.metadata["taskStateChange"][-1]["reason"] == "shipped"


def test_restore_a_previous_version(login, alice, make_record):
    task = make_record(alice, "Write the migration guide for v2", type="work_task")
    first_change = L1Change.objects.filter(record=task).order_by("id").first()
    client = login("alice")
    client.post(f"/p/alice/records/{task.record_id}/task-state/", {"state": "dropped"})
    task.refresh_from_db()
    assert task.task_state == "dropped"
    page = client.get(f"/p/alice/records/{task.record_id}/").content.decode()
    assert f'name="change" value="{first_change.pk}"' in page
    client.post(f"/p/alice/records/{task.record_id}/restore/", {"change": str(first_change.pk)})
    task.refresh_from_db()
    assert task.task_state in (None, "open")
    assert L1Change.objects.filter(record=task).order_by("-id").first().action == "restore"


def test_bulk_task_state_reports_per_record_failures(login, alice, make_record):
    task = make_record(alice, "Write the migration guide for v2", type="work_task")
    fact = make_record(alice, "A fact that is not a task at all")
    response = login("alice").post("/p/alice/records/bulk/", {"ids": [task.record_id, fact.record_id], "action": "task_state:done", "back": "type=work_task"}, follow=True)
    body = response.content.decode()
    task.refresh_from_db()
    assert task.task_state == "done"
    assert "1 applied" in body and "not a work_task" in body
    assert response.redirect_chain[-1][0] == "/p/alice/records/?type=work_task"


def test_bulk_tombstone_needs_evidence_and_reports_refusals(login, alice, make_record):
    a = make_record(alice, "First duplicate fact to remove")
    b = make_record(alice, "Second duplicate fact to remove")
    RecordHits.objects.create(profile=alice, record_id=b.record_id, hits=7)
    client = login("alice")
    body = client.post("/p/alice/records/bulk/", {"ids": [a.record_id, b.record_id], "action": "tombstone", "evidence": "short"}, follow=True).content.decode()
    assert "Tombstoned 0 of 2" in body
    assert not L1Record.objects.filter(pk__in=[a.pk, b.pk], deleted=True).exists()
    body = client.post("/p/alice/records/bulk/", {"ids": [a.record_id, b.record_id], "action": "tombstone", "evidence": EVIDENCE}, follow=True).content.decode()
    assert "Tombstoned 1 of 2" in body and "high-value" in body
    a.refresh_from_db()
    b.refresh_from_db()
    assert a.deleted is True and b.deleted is False


def test_bulk_without_selection_or_with_unknown_action(login, alice, make_record):
    record = make_record(alice, "Some fact that stays")
    client = login("alice")
    assert "Select at least one record" in client.post("/p/alice/records/bulk/", {"action": "tombstone"}, follow=True).content.decode()
    assert "Unknown bulk action" in client.post("/p/alice/records/bulk/", {"ids": [record.record_id], "action": "explode"}, follow=True).content.decode()


def test_actions_need_post(login, alice, make_record):
    record = make_record(alice, "Some fact for method checks")
    client = login("alice")
    for suffix in ("fix/", "task-state/", "restore/"):
        assert client.get(f"/p/alice/records/{record.record_id}/{suffix}").status_code == 405
    assert client.get("/p/alice/records/bulk/").status_code == 405


def test_person_without_access_cannot_act(login, alice, make_record):
    record = make_record(alice, "The service listens on port 8000")
    response = login("charlie").post(f"/p/alice/records/{record.record_id}/fix/", {"action": "tombstone", "evidence": EVIDENCE})
    assert response.status_code == 404
    record.refresh_from_db()
    assert record.deleted is False
    assert login("charlie").post("/p/alice/records/bulk/", {"ids": [record.record_id], "action": "task_state:done"}).status_code == 404
