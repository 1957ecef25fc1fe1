"""Persona review: USER.md beside USER-temp.md entry by entry, accept all, accept /
reject / edit single entries through the persona services, budget, history and restore."""

from __future__ import annotations

from apps.accounts.models import AuditEvent
from apps.persona.services import (
    persona_edit,
    persona_import,
    persona_live_entries,
    persona_proposal_entries,
)


def _setup(profile):
    persona_import(profile=profile, actor="test", user_md="用户偏好中文回答\n§\nUses vim keybindings\n")
    persona_edit(profile=profile, actor="job", action="add", content="Works on memoryweb in Python")
    persona_edit(profile=profile, actor="job", action="update", target="vim", content="Uses vim keybindings everywhere")


def _index_of(client, kind: str) -> str:
    """The proposal index the review page gives the first entry of this kind."""
    body = client.get("/p/alice/persona/").content.decode()
    return body.split(f'data-kind="{kind}"')[1].split('name="index" value="')[1].split('"')[0]


def _kinds(body: str) -> list[str]:
    return [part.split('"')[0] for part in body.split('data-kind="')[1:]]


def test_review_shows_live_and_proposal_side_by_side(login, alice):
    _setup(alice)
    body = login("alice").get("/p/alice/persona/").content.decode()
    assert "用户偏好中文回答" in body and "Works on memoryweb in Python" in body
    assert sorted(_kinds(body)) == ["added", "unchanged", "updated"]
    assert "<ins> everywhere</ins>" in body  # the entry-level diff of the update
    assert "2 changes" in body


def test_accept_all_merges_and_records_a_version(login, alice):
    _setup(alice)
    client = login("alice")
    body = client.post("/p/alice/persona/merge-all/", follow=True).content.decode()
    assert "Merged the whole proposal" in body
    assert persona_live_entries(profile=alice) == persona_proposal_entries(profile=alice)
    assert "Works on memoryweb in Python" in persona_live_entries(profile=alice)
    assert AuditEvent.objects.filter(profile=alice, action="persona_merge", actor="user:alice").exists()
    assert "0 changes" in client.get("/p/alice/persona/").content.decode()


def test_accept_one_entry_leaves_the_other_pending(login, alice):
    _setup(alice)
    client = login("alice")
    added_index = _index_of(client, "added")
    client.post("/p/alice/persona/entry/", {"decision": "accept", "kind": "added", "index": added_index})
    live = persona_live_entries(profile=alice)
    assert "Works on memoryweb in Python" in live and "Uses vim keybindings" in live
    assert "1 change" in client.get("/p/alice/persona/").content.decode()


def test_reject_one_entry_drops_it_from_the_proposal(login, alice):
    _setup(alice)
    client = login("alice")
    index = _index_of(client, "updated")
    client.post("/p/alice/persona/entry/", {"decision": "reject", "kind": "updated", "index": index})
    assert "Uses vim keybindings everywhere" not in persona_proposal_entries(profile=alice)
    assert persona_live_entries(profile=alice) == ["用户偏好中文回答", "Uses vim keybindings"]


def test_edit_then_accept_and_htmx_partial_updates_budget(login, alice):
    _setup(alice)
    client = login("alice")
    index = _index_of(client, "added")
    response = client.post("/p/alice/persona/entry/", {"decision": "edit", "kind": "added", "index": index, "text": "Works on memoryweb (Django)"},
                           HTTP_HX_REQUEST="true")
    partial = response.content.decode()
    assert "<html" not in partial and 'id="budget"' in partial
    live = persona_live_entries(profile=alice)
    assert "Works on memoryweb (Django)" in live
    assert "v2" in partial.split("Merge history")[1]  # the history in the swapped region shows the new version
    from apps.persona import document

    assert f"live now {document.chars(live)}" in partial


def test_invalid_edit_is_refused_in_place(login, alice):
    _setup(alice)
    client = login("alice")
    index = _index_of(client, "added")
    before = persona_live_entries(profile=alice)
    response = client.post("/p/alice/persona/entry/", {"decision": "edit", "kind": "added", "index": index, "text": "two § parts"}, HTTP_HX_REQUEST="true")
    assert 'class="refusal"' in response.content.decode()
    assert persona_live_entries(profile=alice) == before


def test_history_restore(login, alice):
    _setup(alice)
    client = login("alice")
    client.post("/p/alice/persona/merge-all/")
    body = client.get("/p/alice/persona/").content.decode()
    assert 'name="version" value="1"' in body
    client.post("/p/alice/persona/restore/", {"version": "1"})
    assert persona_live_entries(profile=alice) == ["用户偏好中文回答", "Uses vim keybindings"]


def test_budget_over_limit_is_shown_red(login, alice):
    alice.settings = {"l3.charLimit": 40}
    alice.save()
    persona_import(profile=alice, actor="test", user_md="An entry that is already long enough to exceed the limit\n")
    body = login("alice").get("/p/alice/persona/").content.decode()
    assert 'class="gauge red"' in body


def test_no_proposal_is_explained(login, alice):
    assert "No proposal" in login("alice").get("/p/alice/persona/").content.decode()


def test_person_without_access_cannot_merge(login, alice):
    _setup(alice)
    before = persona_live_entries(profile=alice)
    assert login("charlie").post("/p/alice/persona/merge-all/").status_code == 404
    assert persona_live_entries(profile=alice) == before


def test_persona_requests_show_the_organizers_reason(login, alice):
    from apps.scenes.services import scene_commit

    scene_commit(profile=alice, actor="job:l2", cursor=None, persona_signal=True, persona_reason="用户多次提到偏好简洁回答 <b>x</b>",
                 scene_writes=[{"action": "create", "filename": "a.md", "content": "# A",
                                "meta": {"created": "2026-11-01T00:00:00Z", "updated": "2026-11-01T00:00:00Z", "summary": "a", "heat": 1}}])
    body = login("alice").get("/p/alice/persona/").content.decode()
    assert "用户多次提到偏好简洁回答 &lt;b&gt;x&lt;/b&gt;" in body and "job:l2" in body
