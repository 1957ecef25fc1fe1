"""A reviewer's day in a real browser: "protected" seen before typing, a persona entry's
source links, tombstone → confirm → undo, a conversation's message → record links, and
the lineage view. Screenshots of each page go to test-output/screenshots/."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from apps.accounts.models import ProfileAccess
from apps.conversations.services import l0_append
from apps.persona.models import PersonaProposal
from apps.persona.services import persona_edit, persona_import
from apps.records.models import L1Record
from tests import factories
from tests.browser.conftest import log_in

pytestmark = pytest.mark.browser

EVIDENCE = "The user said on 2026-11-30 that the old staging host was shut down."


def _reader(staff):
    """A person who may read and fix on `demo` but is not its admin (cannot force)."""
    get_user_model().objects.create_user(username="erin", password="browser-pass-2")
    ProfileAccess.objects.create(user=get_user_model().objects.get(username="erin"), profile=staff["profile"], is_admin=False)
    return {"username": "erin", "password": "browser-pass-2"}


def _conversation(profile):
    rows = l0_append(profile=profile, rows=[
        {"id": "m1", "role": "user", "content": "部署前一定要先跑 make test，别忘了", "timestamp": 1_767_000_000_000, "sessionKey": "sess-deploy", "cwd": "/srv/shop"},
        {"id": "m2", "role": "assistant", "content": "好的，我会在每次部署前运行 make test。", "timestamp": 1_767_000_001_000, "sessionKey": "sess-deploy", "cwd": "/srv/shop"},
        {"id": "m3", "role": "user", "content": "Also, staging lives on staging-2.internal now", "timestamp": 1_767_000_002_000, "sessionKey": "sess-deploy", "cwd": "/srv/shop"},
    ])
    return [r["messageRef"] for r in rows]


def test_reader_sees_protected_before_typing(browser_page, live_server, staff, screenshot):
    profile = staff["profile"]
    record = factories.make_record(profile, "部署前先跑 make test", type="work_method", priority=90)
    factories.make_block(profile, "部署-流程.md", f"# 部署\n\n- 先跑 make test ({record.record_id})", members=[record.record_id])
    page = browser_page
    log_in(page, live_server, {**staff, **_reader(staff)})
    page.goto(f"{live_server.url}/p/demo/records/{record.record_id}/")
    guards = page.locator("#guards")
    assert "protected" in guards.inner_text() and "部署-流程.md" in guards.inner_text()
    assert "Only an admin of this profile can force" in guards.inner_text()
    # Nothing to type into until the reader deliberately opens the folded forms.
    assert not page.locator("textarea[name=newContent]").is_visible()
    screenshot(page, "record-protected")
    page.click("text=Show the fix forms anyway")
    assert page.locator("textarea[name=newContent]").is_visible()
    assert page.js_errors == []


def test_persona_entry_source_links(browser_page, live_server, staff, screenshot):
    profile = staff["profile"]
    source = factories.make_record(profile, "I review pull requests first thing every morning", type="work_method")
    persona_import(profile=profile, actor="test", user_md="用户偏好中文回答\n§\nUses vim keybindings\n")
    persona_edit(profile=profile, actor="job:l3_persona:4", action="add", content="Reviews pull requests in the morning")
    proposal = PersonaProposal.objects.get(profile=profile)
    proposal.entries = [dict(e, sources=[source.record_id]) if e["text"].startswith("Reviews") else e for e in proposal.entries]
    proposal.save()
    page = browser_page
    log_in(page, live_server, staff)
    page.goto(f"{live_server.url}/p/demo/persona/")
    link = page.locator("[data-kind=added] a.source-link")
    assert link.inner_text() == source.record_id
    screenshot(page, "persona-sources")
    link.click()
    page.wait_for_url(f"**/records/{source.record_id}/")
    assert "I review pull requests" in page.locator(".content").first.inner_text()
    assert page.js_errors == []


def test_tombstone_confirm_then_undo(browser_page, live_server, staff, screenshot):
    record = factories.make_record(staff["profile"], "Staging lives on staging-1.internal", type="work_fact")
    page = browser_page
    log_in(page, live_server, staff)
    page.goto(f"{live_server.url}/p/demo/records/{record.record_id}/")
    form = page.locator("form[data-tombstone]")
    form.locator("textarea[name=evidence]").fill(EVIDENCE)
    form.locator("input[name=reason]").fill("host replaced")
    # First the reviewer says no: nothing happens.
    page.once("dialog", lambda dialog: dialog.dismiss())
    form.locator("button[value=tombstone]").click()
    page.wait_for_timeout(400)
    record.refresh_from_db()
    assert record.deleted is False
    asked: list[str] = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    form.locator("button[value=tombstone]").click()
    page.wait_for_selector("#undo")
    assert asked and asked[0].startswith(f"Tombstone {record.record_id}?")
    record.refresh_from_db()
    assert record.deleted is True
    assert "host replaced" in page.locator("#undo").inner_text()
    screenshot(page, "record-tombstoned-undo")
    page.click("#undo button")
    page.wait_for_selector("text=Restored")
    record.refresh_from_db()
    assert record.deleted is False
    assert page.locator("#guards").is_visible()
    assert page.js_errors == []


def test_conversation_message_links_to_its_records(browser_page, live_server, staff, screenshot):
    profile = staff["profile"]
    refs = _conversation(profile)
    record = factories.make_record(profile, "Run make test before every deploy", type="work_method",
                                   session_key="sess-deploy", source_message_ids=[refs[0], refs[1]])
    page = browser_page
    log_in(page, live_server, staff)
    page.goto(f"{live_server.url}/p/demo/conversations/")
    page.fill("input[name=q]", "staging-2")
    page.click("button:has-text('Search')")
    page.click("text=sess-deploy")
    first = page.locator(".entry").first
    assert record.record_id in first.locator("a.produced-record").inner_text()
    screenshot(page, "conversation")
    first.locator("a.produced-record").click()
    page.wait_for_url(f"**/records/{record.record_id}/")
    # ...and the record links back to the message it was drawn from.
    page.click("text=conversation sess-deploy >> nth=0")
    page.wait_for_url("**/conversations/session/**")
    assert page.locator(".entry-added").count() == 1
    assert page.js_errors == []


def test_lineage_view(browser_page, live_server, staff, screenshot):
    profile = staff["profile"]
    refs = _conversation(profile)
    record = factories.make_record(profile, "Staging lives on staging-1.internal", type="work_fact",
                                   session_key="sess-deploy", source_message_ids=[refs[2]])
    from apps.records.services import record_fix

    result = record_fix(profile=profile, record_id=record.record_id, action="rewrite", new_content="Staging lives on staging-2.internal",
                        evidence=EVIDENCE, actor="user:dana")
    new_id = result["newRecordId"]
    block = factories.make_block(profile, "staging.md", f"# Staging\n\n- staging-2.internal ({new_id})", members=[new_id])
    persona_edit(profile=profile, actor="job:l3_persona:5", action="add", content="Runs the shop's staging on staging-2.internal")
    proposal = PersonaProposal.objects.get(profile=profile)
    proposal.entries = [dict(e, sources=[new_id]) for e in proposal.entries]
    proposal.save()
    page = browser_page
    log_in(page, live_server, staff)
    page.goto(f"{live_server.url}/p/demo/records/{new_id}/")
    screenshot(page, "record-rewritten")
    page.click("text=Lineage: conversation → record → scene → persona")
    chain = page.locator("#lineage")
    text = chain.inner_text()
    assert text.index("staging-2.internal now") < text.index(record.record_id) < text.index(new_id) < text.index("staging.md")
    assert "Runs the shop's staging" in text
    screenshot(page, "lineage-record")
    chain.locator("a", has_text="staging.md").click()
    page.wait_for_url(f"**/scenes/{block.pk}/")
    assert page.locator("a.record-link").first.inner_text() == new_id
    screenshot(page, "scene-detail")
    page.click("text=Lineage: messages → records → this block → persona")
    assert "Staging lives on staging-2.internal" in page.locator("#lineage").inner_text()
    screenshot(page, "lineage-scene")
    assert L1Record.objects.get(record_id=new_id).deleted is False
    assert page.js_errors == []


def test_reviewer_pages_with_data(browser_page, live_server, staff, screenshot):
    """Records list (counts, sortable headers, export), overview cursors, audit, a run's
    changes, hits with legends, conversation search: each rendered with data and shot."""
    from django.utils import timezone

    from apps.accounts.services import audit_record
    from apps.conversations.models import Cursor, L0Message
    from apps.hitstats.models import RecallEvent, RecallHit, RecordHits
    from apps.pipeline.models import JobRun
    from apps.records.services import record_fix

    profile = staff["profile"]
    refs = _conversation(profile)
    records = [
        factories.make_record(profile, "部署前先跑 make test", type="work_method", priority=90, session_key="sess-deploy", source_message_ids=[refs[0]]),
        factories.make_record(profile, "Staging lives on staging-2.internal", type="work_fact", session_key="sess-deploy", source_message_ids=[refs[2]]),
        factories.make_record(profile, "写一份 v2 升级指南", type="work_task"),
        factories.make_record(profile, "The invoice PDF renders blank on Safari", type="work_fact", priority=40),
    ]
    record_fix(profile=profile, record_id=records[3].record_id, action="tombstone", evidence=EVIDENCE, actor="token:mw_Q1w2E3r:agent")
    RecordHits.objects.create(profile=profile, record_id=records[0].record_id, hits=6, invalid_hits=1, last_hit_at=timezone.now())
    RecordHits.objects.create(profile=profile, record_id=records[1].record_id, hits=2, invalid_hits=0, last_hit_at=timezone.now())
    event = RecallEvent.objects.create(profile=profile, query="how do we deploy", session_key="sess-deploy", source="recall_context",
                                       results=[{"recordId": records[0].record_id, "score": 0.82}, {"recordId": records[1].record_id, "score": 0.41}])
    RecallHit.objects.create(event=event, profile=profile, record_id=records[0].record_id, score=0.82)
    second = L0Message.objects.get(profile=profile, ref=refs[1])
    Cursor.objects.create(profile=profile, kind="l1", value={"version": 2, "files": {second.shard: second.offset}})
    run = JobRun.objects.create(profile=profile, kind="l1_extract", driver="rules", status="succeeded", trigger_reason="3 new messages",
                                counts={"messagesRead": 3, "recordsStored": 2, "recordsSkipped": 1}, started_at=timezone.now(), finished_at=timezone.now())
    for r in records[:2]:
        audit_record(profile=profile, actor=f"job:l1_extract:{run.pk}", tool="l1_commit", action="l1_store", target_type="l1_record",
                     target_id=r.record_id, after={"content": r.content, "type": r.type})
    page = browser_page
    log_in(page, live_server, staff)
    page.wait_for_selector("#cursors")
    assert "read up to message 1 of 3 of" in page.locator("#cursors").inner_text()
    screenshot(page, "overview-cursors")
    page.goto(f"{live_server.url}/p/demo/records/?status=all")
    page.click("th >> text=prio")
    page.wait_for_function("location.search.includes('sort=-priority')")
    assert "work_fact (2)" in page.locator("select[name=type]").inner_text()
    screenshot(page, "records-facets")
    page.goto(f"{live_server.url}/p/demo/conversations/session/?session=sess-deploy")
    assert page.locator("#l1-cursor").is_visible()
    screenshot(page, "conversation-cursor")
    page.goto(f"{live_server.url}/p/demo/conversations/?q=make+test")
    screenshot(page, "conversations-search")
    page.goto(f"{live_server.url}/p/demo/admin/audit/")
    assert "agent token mw_Q1w2E3r…" in page.locator("table.audit").inner_text()
    screenshot(page, "audit")
    page.goto(f"{live_server.url}/p/demo/jobs/{run.pk}/")
    assert "What this run changed (2)" in page.inner_text("body")
    screenshot(page, "job-run-changes")
    page.goto(f"{live_server.url}/p/demo/jobs/")
    screenshot(page, "jobs-counts")
    page.goto(f"{live_server.url}/p/demo/hits/")
    screenshot(page, "hits-legend")
    page.goto(f"{live_server.url}/p/demo/records/{records[0].record_id}/")
    screenshot(page, "record-provenance")
    young = factories.make_block(profile, "本周-发布.md", f"# 本周发布\n\n- 先跑 make test ({records[0].record_id})", members=[records[0].record_id], days_old=2)
    page.goto(f"{live_server.url}/p/demo/scenes/{young.pk}/")
    assert "not archivable yet" in page.locator("#archive-status").inner_text()
    assert page.locator("button:has-text('Archive')").is_disabled()
    screenshot(page, "scene-not-archivable")
    assert page.js_errors == []
