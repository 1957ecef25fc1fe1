"""The dashboard as a reviewer's tool: guards before input, undo, provenance (persona
sources, messages → records, lineage), humanised cursors/audit/jobs, links, export."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.accounts.models import ProfileAccess
from apps.conversations.models import Cursor
from apps.conversations.services import l0_append
from apps.hitstats.models import RecallEvent, RecallHit, RecordHits
from apps.persona.models import PersonaProposal
from apps.persona.services import persona_edit, persona_import
from apps.pipeline.models import JobRun
from apps.records.services import fix_guard_status, record_fix
from apps.tools.errors import Conflict

EVIDENCE = "The user said in the 2026-11-30 session that this is wrong."


def _msg(i: int, content: str, session: str = "sess-42", cwd: str = "/home/dana/shop") -> dict:
    return {"id": f"m{i}", "role": "user", "content": content, "timestamp": 1_767_000_000_000 + i, "sessionKey": session, "cwd": cwd}


# ---------------------------------------------------------------- guards before input


def test_guard_status_names_the_guard_record_fix_applies(alice, make_record, make_block):
    member = make_record(alice, "Deploys go through the staging cluster first")
    make_block(alice, "部署-流程.md", members=[member.record_id])
    status = fix_guard_status(profile=alice, record_id=member.record_id, is_admin=False)
    assert status["guard"] == "high_value" and status["sceneBlocks"] == ["部署-流程.md"]
    assert status["forceLifts"] is True and status["canForce"] is False
    with pytest.raises(Conflict):  # the service refuses exactly what the status announced
        record_fix(profile=alice, record_id=member.record_id, action="tombstone", evidence=EVIDENCE, actor="user:x")
    assert fix_guard_status(profile=alice, record_id=member.record_id, is_admin=True)["canForce"] is True

    plain = make_record(alice, "The staging cluster runs in eu-west")
    assert fix_guard_status(profile=alice, record_id=plain.record_id, is_admin=False)["guard"] is None
    record_fix(profile=alice, record_id=plain.record_id, action="rewrite", new_content="The staging cluster runs in eu-central",
               evidence=EVIDENCE, actor="user:x")
    # The tombstoned original reports it; force lifts neither that nor the debounce.
    assert fix_guard_status(profile=alice, record_id=plain.record_id, is_admin=True)["guard"] == "tombstoned"


def test_record_page_says_protected_before_any_input(login, alice, make_record, make_block):
    record = make_record(alice, "Release notes are written in Chinese and English")
    make_block(alice, "发布.md", members=[record.record_id])
    RecordHits.objects.create(profile=alice, record_id=record.record_id, hits=7)
    body = login("alice").get(f"/p/alice/records/{record.record_id}/").content.decode()
    guards = body.split('id="guards"')[1].split("</div>")[0]
    assert "protected" in guards and "发布.md" in guards and "7 hits (protected from 5)" in guards
    assert "Only an admin of this profile can force" in guards
    # The forms are folded away, since a fix by this reader would be refused.
    assert body.index('class="blocked-form"') < body.index('name="newContent"')

    ProfileAccess.objects.filter(user__username="alice", profile=alice).update(is_admin=True)
    body = login("alice").get(f"/p/alice/records/{record.record_id}/").content.decode()
    assert "you can force the fix" in body and 'class="blocked-form"' not in body


def test_record_page_shows_the_debounce_and_an_unguarded_record(login, alice, make_record):
    fresh = make_record(alice, "The shop uses PostgreSQL 15")
    client = login("alice")
    assert "no guard stands in the way" in client.get(f"/p/alice/records/{fresh.record_id}/").content.decode()
    # Tombstoned by a fix and brought back: the fix's debounce still applies to this id.
    client.post(f"/p/alice/records/{fresh.record_id}/fix/", {"action": "tombstone", "evidence": EVIDENCE})
    page = client.get(f"/p/alice/records/{fresh.record_id}/").content.decode()
    client.post(f"/p/alice/records/{fresh.record_id}/restore/", {"change": page.split('name="change" value="')[1].split('"')[0]})
    status = fix_guard_status(profile=alice, record_id=fresh.record_id, is_admin=True)
    assert status["guard"] == "debounce" and status["forceLifts"] is False and status["fixableAt"]
    guards = client.get(f"/p/alice/records/{fresh.record_id}/").content.decode().split('id="guards"')[1].split("</div>")[0]
    assert "fixed recently" in guards and "the next fix is possible from" in guards and "Force does not lift this" in guards
    with pytest.raises(Conflict):
        record_fix(profile=alice, record_id=fresh.record_id, action="tombstone", evidence=EVIDENCE, actor="user:alice")


# ---------------------------------------------------------------- confirm and undo


def test_tombstone_asks_first_and_its_page_offers_undo(login, alice, make_record):
    record = make_record(alice, "The cache TTL is 300 seconds")
    client = login("alice")
    page = client.get(f"/p/alice/records/{record.record_id}/").content.decode()
    tomb_form = page.split("data-tombstone")[0].rsplit("<form", 1)[1]
    assert "hx-confirm=" in tomb_form  # tombstone has its own form, and it asks
    client.post(f"/p/alice/records/{record.record_id}/fix/", {"action": "tombstone", "evidence": EVIDENCE, "reason": "outdated"})
    page = client.get(f"/p/alice/records/{record.record_id}/").content.decode()
    undo = page.split('id="undo"')[1].split("</form>")[0]
    assert "Tombstoned by" in undo and "outdated" in undo and "Undo" in undo
    change = undo.split('name="change" value="')[1].split('"')[0]
    client.post(f"/p/alice/records/{record.record_id}/restore/", {"change": change})
    record.refresh_from_db()
    assert record.deleted is False
    assert 'id="undo"' not in client.get(f"/p/alice/records/{record.record_id}/").content.decode()


def test_destructive_buttons_ask_first(login, people, bob, make_record):
    from apps.accounts.services import token_create

    token_create(profile=bob, role="agent", name="laptop")
    ProfileAccess.objects.create(user=people["alice"], profile=bob, is_admin=False)
    client = login("bob")
    admin = client.get("/p/bob/admin/").content.decode()
    assert admin.count("data-confirm=") >= 2  # revoke, remove
    make_record(bob, "Bob's notes live in ~/notes")
    listing = client.get("/p/bob/records/").content.decode()
    assert 'value="tombstone" class="danger" data-confirm=' in listing


def test_pages_carry_no_inline_script_or_handlers(login, alice, make_record):
    record = make_record(alice, "The API listens on :8080")
    client = login("alice")
    for url in ("/p/alice/", "/p/alice/records/", f"/p/alice/records/{record.record_id}/", "/p/alice/persona/",
                "/p/alice/conversations/", "/p/alice/hits/", "/p/alice/jobs/", f"/p/alice/records/{record.record_id}/lineage/"):
        body = client.get(url).content.decode()
        assert "onclick=" not in body and "onchange=" not in body, url
        assert "<script>" not in body and "javascript:" not in body, url
        for tag in body.split("<script")[1:]:
            assert 'src="/static/' in tag.split(">")[0], url


# ---------------------------------------------------------------- persona provenance


def _persona_with_sources(profile, record_ids):
    persona_import(profile=profile, actor="test", user_md="用户偏好中文回答\n§\nUses vim keybindings\n")
    persona_edit(profile=profile, actor="job:l3_persona:7", action="add", content="Reviews pull requests in the morning")
    proposal = PersonaProposal.objects.get(profile=profile)
    entries = list(proposal.entries)
    for entry in entries:
        if entry["text"] == "Reviews pull requests in the morning":
            entry["sources"] = record_ids
    proposal.entries = entries
    proposal.save()


def test_persona_entry_links_its_sources_and_the_run_that_proposed_it(login, alice, make_record):
    a = make_record(alice, "I review PRs first thing every morning", type="persona")
    _persona_with_sources(alice, [a.record_id, "l1_missing_0001"])
    JobRun.objects.create(profile=alice, kind="l3_persona", driver="rules", status="succeeded", trigger_reason="test")
    body = login("alice").get("/p/alice/persona/").content.decode()
    added = body.split('data-kind="added"')[1].split('data-kind=')[0]
    assert f'href="/p/alice/records/{a.record_id}/"' in added
    assert "proposed by" in added and 'href="/p/alice/jobs/7/"' in added and "l3_persona job run #7" in added
    assert "/p/alice/persona/entries/" in added  # lineage link
    # Unchanged entries are folded away; the changes stay in view.
    folded = body.split('class="small unchanged-lines"')[1].split("</details>")[0]
    assert "用户偏好中文回答" in folded and "Reviews pull requests" not in folded


def test_entry_without_sources_says_so(login, alice):
    persona_edit(profile=alice, actor="job:l3_persona:3", action="add", content="Prefers short answers")
    body = login("alice").get("/p/alice/persona/").content.decode()
    assert "no source records named" in body


def test_rejections_stay_in_the_history_with_who_and_when(login, alice):
    persona_edit(profile=alice, actor="job:l3_persona:3", action="add", content="Likes tabs over spaces")
    client = login("alice")
    body = client.get("/p/alice/persona/").content.decode()
    index = body.split('data-kind="added"')[1].split('name="index" value="')[1].split('"')[0]
    client.post("/p/alice/persona/entry/", {"decision": "reject", "kind": "added", "index": index})
    body = client.get("/p/alice/persona/").content.decode()
    rejected = body.split('id="rejections"')[1]
    assert "Likes tabs over spaces" in rejected and "alice" in rejected and "UTC" in rejected


def test_accept_all_is_secondary_and_asks(login, alice):
    persona_edit(profile=alice, actor="job", action="add", content="Works in Berlin time")
    body = login("alice").get("/p/alice/persona/").content.decode()
    form = next(f for f in body.split("<form")[1:] if "merge-all/" in f.split(">")[0]).split("</form>")[0]
    assert "hx-confirm=" in form and 'class="secondary"' in form


# ---------------------------------------------------------------- conversations


def test_message_links_the_records_drawn_from_it_and_the_cursor_is_marked(login, alice, make_record):
    refs = [r["messageRef"] for r in l0_append(profile=alice, rows=[
        _msg(1, "We deploy the shop with docker compose"), _msg(2, "记住：发布前先跑 make test"), _msg(3, "Thanks, that's all for today"),
    ])]
    record = make_record(alice, "The shop is deployed with docker compose", session_key="sess-42", source_message_ids=[refs[0]])
    from apps.conversations.models import L0Message

    second = L0Message.objects.get(profile=alice, ref=refs[1])
    Cursor.objects.create(profile=alice, kind="l1", value={"version": 2, "files": {second.shard: second.offset}})
    body = login("alice").get("/p/alice/conversations/session/?session=sess-42").content.decode()
    first_msg = body.split('id="line-')[1]
    assert f'href="/p/alice/records/{record.record_id}/"' in first_msg.split('id="line-')[0]
    # The marker sits between the read message and the first unread one.
    assert body.index("docker compose") < body.index('id="l1-cursor"') < body.index("make test")
    # And the record links back to the message.
    page = login("alice").get(f"/p/alice/records/{record.record_id}/").content.decode()
    assert "/p/alice/conversations/session/?session=sess-42" in page


def test_sessions_are_searched_by_text_project_and_date(login, alice):
    l0_append(profile=alice, rows=[_msg(1, "The invoice PDF renders blank on Safari", session="billing-1", cwd="/home/dana/shop"),
                                   _msg(2, "午饭吃什么", session="chat-7", cwd="/home/dana")])
    client = login("alice")
    body = client.get("/p/alice/conversations/?q=invoice+pdf").content.decode()
    assert "billing-1" in body and "chat-7" not in body
    body = client.get("/p/alice/conversations/?q=午饭").content.decode()
    assert "chat-7" in body and "billing-1" not in body
    body = client.get("/p/alice/conversations/?project=/home/dana/shop").content.decode()
    assert "billing-1" in body and "chat-7" not in body
    tomorrow = (timezone.now() + timedelta(days=1)).date().isoformat()
    body = client.get(f"/p/alice/conversations/?from={tomorrow}").content.decode()
    assert "billing-1" not in body and "No conversation matches." in body
    assert "not a date" in client.get("/p/alice/conversations/?from=yesterday").content.decode()


# ---------------------------------------------------------------- links, diffs, lineage


def test_scene_block_links_record_ids_and_says_when_it_can_be_archived(login, alice, make_record, make_block):
    record = make_record(alice, "Staging deploys need a VPN")
    old = make_record(alice, "Old note")
    block = make_block(alice, "staging.md", content=f"# Staging\n\n- Needs a VPN ({record.record_id})\n- [x](https://example.org/{old.record_id})",
                       members=[record.record_id], days_old=2)
    body = login("alice").get(f"/p/alice/scenes/{block.pk}/").content.decode()
    assert f'<a class="mono record-link" href="/p/alice/records/{record.record_id}/">{record.record_id}</a>' in body
    assert f'https://example.org/{old.record_id}"' in body  # an id inside a link's URL is left alone
    status = body.split('id="archive-status"')[1].split("</p>")[0]
    assert "not archivable yet" in status and "Archivable from" in status and "UTC" in status
    assert "disabled" in body.split('action="/p/alice/scenes/')[1].split("</form>")[0]


def test_rewritten_record_diffs_against_its_predecessor(login, alice, make_record):
    record = make_record(alice, "The backup runs at 02:00 UTC")
    client = login("alice")
    response = client.post(f"/p/alice/records/{record.record_id}/fix/",
                           {"action": "rewrite", "newContent": "The backup runs at 03:00 UTC", "evidence": EVIDENCE})
    new_id = response["Location"].rstrip("/").rsplit("/", 1)[1]
    body = client.get(f"/p/alice/records/{new_id}/").content.decode()
    diff = body.split('id="predecessor-diff"')[1].split("</div></div>")[0]
    assert record.record_id in diff and "<del>2</del>" in diff and "<ins>3</ins>" in diff


def test_record_shows_created_by_and_last_recall(login, alice, make_record):
    record = make_record(alice, "Use pnpm, not npm")
    event = RecallEvent.objects.create(profile=alice, query="which package manager", session_key="sess-9", source="recall_context",
                                       actor="token:laptop-claude:agent", results=[{"recordId": record.record_id, "score": 0.8}])
    RecallHit.objects.create(event=event, profile=alice, record_id=record.record_id, score=0.8)
    body = login("alice").get(f"/p/alice/records/{record.record_id}/").content.decode()
    created_by = body.split("<dt>created by</dt>")[1].split("</dd>")[0]
    assert 'title="test">test</span>' in created_by  # the actor of the record's first change
    last = body.split("<dt>last recalled</dt>")[1].split("</dd>")[0]
    assert "via recall_context" in last and "sess-9" in last and "UTC" in last
    assert "by <span" in last and "laptop-claude" in last  # the token that asked, by its name


def test_lineage_of_a_record_goes_from_message_to_persona(login, alice, make_record, make_block):
    refs = [r["messageRef"] for r in l0_append(profile=alice, rows=[_msg(1, "I always review PRs in the morning")])]
    record = make_record(alice, "Reviews PRs in the morning", type="persona", session_key="sess-42", source_message_ids=refs)
    block = make_block(alice, "habits.md", members=[record.record_id])
    _persona_with_sources(alice, [record.record_id])
    client = login("alice")
    body = client.get(f"/p/alice/records/{record.record_id}/lineage/").content.decode()
    chain = body.split('id="lineage"')[1]
    assert chain.index("I always review PRs") < chain.index(record.record_id) < chain.index("habits.md") < chain.index("Reviews pull requests")
    assert f"/p/alice/scenes/{block.pk}/" in chain and "/p/alice/conversations/session/?session=sess-42" in chain
    # The same chain from the block and from the persona entry.
    assert "I always review PRs" in client.get(f"/p/alice/scenes/{block.pk}/lineage/").content.decode()
    entry_index = PersonaProposal.objects.get(profile=alice).entries.index(
        next(e for e in PersonaProposal.objects.get(profile=alice).entries if e.get("sources")))
    entry_page = client.get(f"/p/alice/persona/entries/{entry_index}/lineage/").content.decode()
    assert record.record_id in entry_page and "habits.md" in entry_page
    assert client.get("/p/alice/persona/entries/99/lineage/").status_code == 404
    assert login("charlie").get(f"/p/alice/records/{record.record_id}/lineage/").status_code == 404


def test_lineage_follows_a_rewrite_back_to_v1(login, alice, make_record):
    record = make_record(alice, "Meetings are on Tuesdays")
    result = record_fix(profile=alice, record_id=record.record_id, action="rewrite", new_content="Meetings are on Wednesdays",
                        evidence=EVIDENCE, actor="user:alice")
    body = login("alice").get(f"/p/alice/records/{result['newRecordId']}/lineage/").content.decode()
    chain = body.split('id="lineage"')[1]
    assert chain.index(record.record_id) < chain.index(result["newRecordId"])


# ---------------------------------------------------------------- humanised views


def test_audit_targets_are_links_and_changes_are_field_level(login, people, bob, make_record):
    record = make_record(bob, "Bob deploys on Fridays")
    record_fix(profile=bob, record_id=record.record_id, action="tombstone", evidence=EVIDENCE, actor="token:mw_AbCdEfG:agent")
    body = login("bob").get("/p/bob/admin/audit/").content.decode()
    assert f'<a class="mono target-link" href="/p/bob/records/{record.record_id}/">' in body
    assert "agent token mw_AbCdEfG…" in body
    row = body.split(f'/p/bob/records/{record.record_id}/')[1].split("</tr>")[0]
    assert "<span class=\"mono\">deleted</span>" in row and "<pre>" not in row.split("<details>")[0]


def test_finished_run_lists_what_it_changed(login, alice, make_record):
    run = JobRun.objects.create(profile=alice, kind="l1_extract", driver="rules", status="succeeded", trigger_reason="test",
                                counts={"recordsStored": 2, "messagesRead": 5}, finished_at=timezone.now())
    record = make_record(alice, "Uses ruff for linting")
    from apps.accounts.services import audit_record

    audit_record(profile=alice, actor=f"job:l1_extract:{run.pk}", tool="l1_commit", action="l1_store", target_type="l1_record",
                 target_id=record.record_id, after={"content": record.content})
    audit_record(profile=alice, actor="job:l1_extract:999", tool="l1_commit", action="l1_store", target_type="l1_record",
                 target_id="l1_other_0001", after={"content": "not this run"})
    body = login("alice").get(f"/p/alice/jobs/{run.pk}/").content.decode()
    assert "What this run changed" in body and f"/p/alice/records/{record.record_id}/" in body and "l1_other_0001" not in body
    counts = body.split('id="run-counts"')[1].split("</table>")[0]
    assert "records stored" in counts and "messages read" in counts
    assert "Finished" in body.split('id="state-line"')[1].split("</span>")[0]


def test_overview_cursors_are_sentences(login, alice):
    rows = l0_append(profile=alice, rows=[_msg(i, f"message {i}") for i in range(1, 5)])
    from apps.conversations.models import L0Message

    third = L0Message.objects.get(profile=alice, ref=rows[2]["messageRef"])
    Cursor.objects.create(profile=alice, kind="l1", value={"version": 2, "files": {third.shard: third.offset}})
    Cursor.objects.create(profile=alice, kind="l3", value={"updated": "2026-11-30T10:00:00Z"})
    body = login("alice").get("/p/alice/").content.decode()
    cursors = body.split('id="cursors"')[1].split("</table>")[0]
    assert f"read up to message 2 of 4 of {third.shard.removesuffix('.jsonl')} (2 unread)" in cursors
    assert "read scene blocks updated up to 2026-11-30 10:00 UTC" in cursors
    assert '"files"' not in cursors and "offset" not in cursors


def test_every_date_says_utc(login, alice, make_record):
    record = make_record(alice, "The office closes at 18:00")
    body = login("alice").get(f"/p/alice/records/{record.record_id}/").content.decode()
    created = body.split("<dt>created</dt>")[1].split("</dd>")[0]
    assert "UTC</time>" in created and "datetime=" in created


# ---------------------------------------------------------------- the list: facets, sorting, export


def test_filter_values_carry_counts_and_headers_sort(login, alice, make_record):
    make_record(alice, "Fact one")
    make_record(alice, "Fact two")
    make_record(alice, "A task", type="work_task")
    make_record(alice, "Gone", deleted=True)
    client = login("alice")
    body = client.get("/p/alice/records/").content.decode()
    assert ">work_fact (2)</option>" in body and ">work_task (1)</option>" in body
    assert ">live (3)</option>" in body and ">tombstoned (1)</option>" in body and ">open (1)</option>" in body
    # Counts follow the other filters: with type=work_task the status counts shrink.
    body = client.get("/p/alice/records/?type=work_task").content.decode()
    assert ">live (1)</option>" in body and ">work_fact (2)</option>" in body
    body = client.get("/p/alice/records/?status=tombstoned").content.decode()
    assert ">work_fact (1)</option>" in body and ">work_task (0)</option>" in body and ">live (3)</option>" in body
    body = client.get("/p/alice/records/?q=Fact").content.decode()  # a search: counts on request only
    assert ">work_fact</option>" in body and "show the counts" in body
    body = client.get("/p/alice/records/?q=Fact&facets=1").content.decode()  # and they follow the search
    assert ">work_fact (2)</option>" in body and ">work_task (0)</option>" in body and ">live (2)</option>" in body
    body = client.get("/p/alice/records/?sort=-priority").content.decode()
    assert 'aria-sort="descending"' in body and "sort=priority" in body


def test_export_gives_the_filtered_list_as_csv_and_json(login, alice, make_record):
    make_record(alice, "=HYPERLINK(\"http://evil.example\")", type="work_fact")
    make_record(alice, "用中文回答", type="instruction")
    make_record(alice, "Tombstoned", deleted=True)
    client = login("alice")
    response = client.get("/p/alice/records/export/?format=json&type=work_fact")
    data = json.loads(response.content)
    assert response["Content-Disposition"].startswith("attachment;")
    assert data["total"] == 1 and [r["type"] for r in data["records"]] == ["work_fact"]
    response = client.get("/p/alice/records/export/?format=csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert {r["content"] for r in rows} == {"'=HYPERLINK(\"http://evil.example\")", "用中文回答"}  # live only; formula defused
    assert response["X-Total-Count"] == "2"
    assert client.get("/p/alice/records/export/?format=xlsx").status_code == 400
    assert login("charlie").get("/p/alice/records/export/?format=csv").status_code == 404


def test_export_link_keeps_the_current_filters(login, alice, make_record):
    make_record(alice, "x")
    body = login("alice").get("/p/alice/records/?type=work_fact&q=deploy").content.decode()
    link = body.split('id="export-csv" href="')[1].split('"')[0]
    assert "type=work_fact" in link and "q=deploy" in link and "format=csv" in link


def test_actor_labels():
    from apps.dashboard.templatetags.dashboard import actor_words

    assert actor_words("user:dana") == "dana"
    assert actor_words("token:mw_AbCdEfG:agent") == "agent token mw_AbCdEfG…"
    assert actor_words("token:laptop:worker") == "worker token “laptop”"
    assert actor_words("token:ci-runner") == "token “ci-runner”"
    assert actor_words("job:l2_organize:12") == "l2_organize job run #12"
    assert actor_words("scheduler") == "scheduler"


def test_plain_refusal_hides_field_paths():
    from apps.dashboard.views.common import plain_refusal

    r = plain_refusal({"code": "invalid_params", "message": "nothing was written: sceneWrites.0.filename: name is taken",
                       "details": [{"field": "sceneWrites.0.filename", "message": "name is taken"},
                                   {"field": "sceneWrites.1.meta", "message": "updated lies in the future"}]})
    assert r["sentence"] == "Please check the form: name is taken."
    assert r["points"] == ["name is taken", "updated lies in the future"]


def test_tombstone_reason_of_a_forget_request_is_shown(login, alice, make_record):
    record = make_record(alice, "The user's old phone number", deleted=True, metadata={"scope": "self", "tombstoneReason": "user-forget"})
    body = login("alice").get(f"/p/alice/records/{record.record_id}/").content.decode()
    assert "the user asked to forget it" in body and 'id="undo"' not in body  # no fix to undo: not one of ours


def test_linked_ids_and_labels_keep_untrusted_text_inert(login, alice, make_record, make_block):
    record = make_record(alice, "A plain record")
    block = make_block(alice, "xss.md", content=f'<img src=x onerror="alert(1)"> see {record.record_id} <script>alert(2)</script>',
                       members=[record.record_id])
    body = login("alice").get(f"/p/alice/scenes/{block.pk}/").content.decode()
    assert "onerror" not in body and "<script>alert" not in body
    assert f'href="/p/alice/records/{record.record_id}/"' in body

    from apps.dashboard.templatetags.dashboard import actor_label

    assert "<script>" not in actor_label('token:<script>alert(3)</script>')
