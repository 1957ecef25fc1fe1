import pytest

from apps.accounts.models import AuditEvent
from apps.conversations.cursors import cursor_get
from apps.persona.services import persona_live_text, persona_proposal_entries
from tests import factories

from .conftest import set_live, state


def edit(api, **kw):
    return api.call("l3_edit", **kw)


def test_first_edit_seeds_the_proposal_from_user_md(worker_api, alice):
    set_live(alice, ["Prefers concise answers", "Works in Go"])
    body = worker_api.ok("l3_edit", action="add", content="Uses Neovim")
    assert body == {"success": True, "action": "add", "position": 3, "entryCount": 3,
                    "usage": {"chars": len("Prefers concise answers\n§\nWorks in Go\n§\nUses Neovim\n"), "limit": 1375}}
    assert persona_proposal_entries(profile=alice) == ["Prefers concise answers", "Works in Go", "Uses Neovim"]
    assert persona_live_text(profile=alice) == "Prefers concise answers\n§\nWorks in Go\n"  # never written by l3 tools


def test_update_and_delete_resolve_live_entries_by_fragment(worker_api, alice):
    set_live(alice, ["Prefers concise answers", "Works in Go", "Lives in Berlin"])
    body = worker_api.ok("l3_edit", action="update", target="in Go", content="Works in Go and Rust")
    assert body["position"] == 2 and body["entryCount"] == 3
    body = worker_api.ok("l3_edit", action="delete", target="Berlin")
    assert body["position"] == 3 and body["entryCount"] == 2
    assert persona_proposal_entries(profile=alice) == ["Prefers concise answers", "Works in Go and Rust"]


def test_target_matching_several_entries_conflicts_with_candidates(worker_api, alice):
    set_live(alice, ["Works in Go", "Works in Rust", "Likes tea"])
    before = state(alice)
    status, body = edit(worker_api, action="delete", target="Works in")
    assert status == 409 and body["error"]["code"] == "conflict"
    assert body["error"]["details"]["candidates"] == ["Works in Go", "Works in Rust"]
    assert state(alice) == before


def test_target_matching_nothing_conflicts_with_all_entries_as_candidates(worker_api, alice):
    set_live(alice, ["Works in Go", "Likes tea"])
    before = state(alice)
    status, body = edit(worker_api, action="update", target="coffee", content="Likes coffee")
    assert status == 409 and body["error"]["details"]["candidates"] == ["Works in Go", "Likes tea"]
    assert state(alice) == before


@pytest.mark.parametrize("content", [
    "two\nlines", "carriage\rreturn", "line\u2028separator", "next\x85line", "vertical\vtab", "form\ffeed",
    "nul\x00inside", "lone \ud800 surrogate",
    "has § inside", "hidden <!-- note -->", "closing --> only", "   ", "",
])
def test_bad_content_is_refused(worker_api, alice, content):
    set_live(alice, ["Works in Go"])
    before = state(alice)
    status, body = edit(worker_api, action="add", content=content)
    assert status == 400 and body["error"]["code"] == "invalid_params"
    assert state(alice) == before


@pytest.mark.parametrize("kw", [
    {"action": "add"},
    {"action": "update", "content": "x y z"},
    {"action": "update", "target": "Go"},
    {"action": "delete"},
    {"action": "delete", "target": "Go", "content": "x"},
    {"action": "add", "content": "new entry", "target": "Go"},
    {"action": "replace", "content": "x"},
])
def test_missing_or_extra_parameters_are_refused(worker_api, alice, kw):
    set_live(alice, ["Works in Go"])
    before = state(alice)
    status, body = edit(worker_api, **kw)
    assert status == 400, body
    assert state(alice) == before


def test_duplicate_entries_are_refused(worker_api, alice):
    set_live(alice, ["Works in Go", "Likes tea"])
    before = state(alice)
    assert edit(worker_api, action="add", content="Works in Go")[0] == 409
    assert edit(worker_api, action="update", target="tea", content="Works in Go")[0] == 409
    assert state(alice) == before


def test_budget_is_priced_as_merged_and_refuses_growth_past_the_limit(worker_api, alice):
    alice.settings = {"l3.charLimit": 40}
    alice.save()
    set_live(alice, ["a" * 20])  # 21 chars on disk
    # entries joined by "\n§\n" plus a final newline: 20 + 3 + 10 + 1 = 34
    assert worker_api.ok("l3_edit", action="add", content="b" * 10)["usage"] == {"chars": 34, "limit": 40}
    assert worker_api.ok("l3_edit", action="add", content="c" * 2)["usage"] == {"chars": 39, "limit": 40}
    worker_api.ok("l3_edit", action="delete", target="cc")
    before = state(alice)
    status, body = edit(worker_api, action="add", content="c" * 4)  # 34 + 3 + 4 = 41 > 40
    assert status == 409 and body["error"]["details"] == {"chars": 41, "limit": 40, "action": "add"}
    assert state(alice) == before
    body = worker_api.ok("l3_edit", action="update", target="bbb", content="c" * 4)
    assert body["usage"] == {"chars": 28, "limit": 40}


def test_shrinking_edits_pass_when_user_md_is_already_over_the_limit(worker_api, alice):
    alice.settings = {"l3.charLimit": 10}
    alice.save()
    set_live(alice, ["a" * 20, "b" * 20])
    assert edit(worker_api, action="add", content="c")[0] == 409
    body = worker_api.ok("l3_edit", action="delete", target="bbb")
    assert body["usage"]["chars"] == 21


def test_edits_are_audited(worker_api, alice):
    set_live(alice, ["Works in Go"])
    worker_api.ok("l3_edit", action="update", target="Go", content="Works in Go daily")
    event = AuditEvent.objects.get(profile=alice, tool="l3_edit")
    assert (event.action, event.before, event.after) == ("update", {"entry": "Works in Go"}, {"entry": "Works in Go daily"})


def test_l3_commit_advances_the_cursor_and_closes_the_run(worker_api, alice):
    worker_api.ok("l3_edit", action="add", content="Likes tea")
    body = worker_api.ok("l3_commit", cursor="2026-11-20T10:00:00+08:00")
    assert body["cursor"] == {"updated": "2026-11-20T02:00:00Z"} and body["runEdited"] is True
    assert cursor_get(profile=alice, kind="l3") == {"updated": "2026-11-20T02:00:00Z"}
    body = worker_api.ok("l3_commit", cursor="2026-11-20T02:00:00Z")  # a run that changed nothing
    assert body["runEdited"] is False and body["previous"] == "2026-11-20T02:00:00Z"
    assert persona_live_text(profile=alice) == ""


def test_l3_commit_refuses_bad_or_older_cursors(worker_api, alice):
    worker_api.ok("l3_commit", cursor="2026-11-20T00:00:00Z")
    before = state(alice)
    assert worker_api.call("l3_commit", cursor="not a time")[0] == 400
    assert worker_api.call("l3_commit", cursor="2026-11-19T00:00:00Z")[0] == 409
    assert worker_api.call("l3_commit")[0] == 400
    assert state(alice) == before


def test_agent_role_may_not_call_l3_tools(agent_api):
    assert agent_api.call("l3_edit", action="add", content="x")[0] == 403
    assert agent_api.call("l3_commit", cursor="2026-11-20T00:00:00Z")[0] == 403


def test_profiles_are_isolated(worker_api, make_api, alice, bob):
    set_live(bob, ["Bob likes chess"])
    status, body = edit(worker_api, action="delete", target="chess")
    assert status == 409 and body["error"]["details"]["candidates"] == []
    make_api(bob, "worker").ok("l3_edit", action="add", content="Bob likes go")
    assert persona_proposal_entries(profile=alice) == []
    assert persona_proposal_entries(profile=bob) == ["Bob likes chess", "Bob likes go"]


def test_user_md_endpoint_serves_markdown(agent_api, alice, make_api, bob, client):
    set_live(alice, ["Prefers concise answers", "用中文回答"])
    set_live(bob, ["bob"])
    response = agent_api.client.get("/api/v1/persona/USER.md", **agent_api.headers())
    assert response.status_code == 200 and response["Content-Type"].startswith("text/markdown")
    assert response.content.decode("utf-8") == "Prefers concise answers\n§\n用中文回答\n"
    assert client.get("/api/v1/persona/USER.md").status_code == 401
    bob_api = make_api(bob, "agent")
    assert bob_api.client.get("/api/v1/persona/USER.md", **bob_api.headers()).content == b"bob\n"


def test_user_md_endpoint_is_empty_without_a_persona_and_listed_in_openapi(agent_api, client):
    response = agent_api.client.get("/api/v1/persona/USER.md", **agent_api.headers())
    assert response.status_code == 200 and response.content == b""
    doc = client.get("/api/v1/openapi.json").json()
    assert "get" in doc["paths"]["/api/v1/persona/USER.md"]


def test_l3_commit_cursor_may_not_pass_the_newest_scene_block(worker_api, alice):
    from datetime import UTC, datetime

    from apps.scenes.models import SceneBlock

    SceneBlock.objects.create(profile=alice, filename="a.md", content="x", meta_created=datetime(2026, 1, 1, tzinfo=UTC),
                              meta_updated=datetime(2026, 2, 1, tzinfo=UTC))
    before = state(alice)
    status, body = worker_api.call("l3_commit", cursor="2026-02-01T00:00:01Z")
    assert status == 400 and "2026-02-01T00:00:00Z" in body["error"]["message"]
    assert state(alice) == before
    assert worker_api.ok("l3_commit", cursor="2026-02-01T00:00:00Z")["cursor"] == {"updated": "2026-02-01T00:00:00Z"}


def test_l3_commit_without_blocks_refuses_a_future_cursor(worker_api, alice):
    assert worker_api.call("l3_commit", cursor="2999-01-01T00:00:00Z")[0] == 400


def test_the_stored_l3_cursor_is_accepted_again_even_past_every_block(worker_api, alice):
    from apps.conversations.cursors import cursor_set

    cursor_set(profile=alice, kind="l3", value={"updated": "2026-05-01T00:00:00Z"})
    from datetime import UTC, datetime

    from apps.scenes.models import SceneBlock

    SceneBlock.objects.create(profile=alice, filename="a.md", content="x", meta_created=datetime(2026, 1, 1, tzinfo=UTC),
                              meta_updated=datetime(2026, 2, 1, tzinfo=UTC))
    assert worker_api.ok("l3_commit", cursor="2026-05-01T00:00:00Z")["cursor"] == {"updated": "2026-05-01T00:00:00Z"}


def test_an_entry_contained_in_a_longer_one_is_targeted_by_its_whole_text(worker_api, alice):
    set_live(alice, ["Likes tea", "Likes tea and coffee"])
    before = state(alice)
    status, body = edit(worker_api, action="delete", target="Likes te")
    assert status == 409 and body["error"]["details"]["matches"] == 2
    assert state(alice) == before
    body = worker_api.ok("l3_edit", action="update", target="Likes tea", content="Likes green tea")
    assert body["position"] == 1
    assert persona_proposal_entries(profile=alice) == ["Likes green tea", "Likes tea and coffee"]
    worker_api.ok("l3_edit", action="delete", target="Likes tea and coffee")
    assert persona_proposal_entries(profile=alice) == ["Likes green tea"]


def test_budget_exactly_at_the_limit_passes_and_one_more_character_is_refused(worker_api, alice):
    alice.settings = {"l3.charLimit": 30}
    alice.save()
    set_live(alice, ["a" * 10])  # 11 on disk
    # 11 + 3 ("\n§\n" before the new entry) + 16 = 30: exactly the limit
    assert worker_api.ok("l3_edit", action="add", content="b" * 16)["usage"] == {"chars": 30, "limit": 30}
    before = state(alice)
    status, body = edit(worker_api, action="update", target="bbb", content="b" * 17)
    assert status == 409 and body["error"]["details"] == {"chars": 31, "limit": 30, "action": "update"}
    assert state(alice) == before
    status, body = edit(worker_api, action="add", content="c")
    assert status == 409 and body["error"]["details"]["chars"] == 34
    assert state(alice) == before
    assert worker_api.ok("l3_edit", action="update", target="bbb", content="c" * 16)["usage"]["chars"] == 30


def test_l3_commit_cursor_without_a_utc_equivalent_is_invalid(worker_api, alice):
    before = state(alice)
    status, body = worker_api.call("l3_commit", cursor="0001-01-01T00:00:00+14:00")
    assert status == 400 and body["error"]["details"][0]["field"] == "cursor"
    assert state(alice) == before


def _records(profile, n):
    from django.utils import timezone

    now = timezone.now()
    return [
        factories.make_record(profile, f"record number {i}", record_id=f"l1_17670000000{i:02d}_ab{i:02d}", type="work_method",
                              created_at=now).record_id
        for i in range(n)
    ]


def test_an_entry_keeps_the_records_it_was_drawn_from(worker_api, alice):
    from apps.persona.models import PersonaProposal

    set_live(alice, ["Prefers concise answers"])
    ids = _records(alice, 3)
    worker_api.ok("l3_edit", action="add", content="Reviews diffs before every commit", sources=ids[:2])
    worker_api.ok("l3_edit", action="add", content="Writes commit messages in English")
    entries = PersonaProposal.objects.get(profile=alice).entries
    by_text = {e["text"]: e for e in entries}
    assert by_text["Reviews diffs before every commit"]["sources"] == ids[:2]
    assert by_text["Writes commit messages in English"]["sources"] == []
    worker_api.ok("l3_edit", action="update", target="Reviews diffs", content="Reviews every diff before committing")
    assert {e["text"]: e for e in PersonaProposal.objects.get(profile=alice).entries}["Reviews every diff before committing"]["sources"] == ids[:2]
    worker_api.ok("l3_edit", action="update", target="Reviews every diff", content="Reviews every diff before a commit", sources=[ids[2]])
    assert {e["text"]: e for e in PersonaProposal.objects.get(profile=alice).entries}["Reviews every diff before a commit"]["sources"] == [ids[2]]
    assert AuditEvent.objects.filter(profile=alice, tool="l3_edit", action="add").order_by("id").first().note["sources"] == ids[:2]


@pytest.mark.parametrize("sources, message", [
    (["l1_1767000000000_none"], "no L1 record"),
    ([f"l1_17670000000{i:02d}_ab{i:02d}" for i in range(21)], "at most 20"),
    ([""], "must be a list"),
])
def test_bad_sources_are_refused(worker_api, alice, sources, message):
    _records(alice, 2)
    before = state(alice)
    status, body = edit(worker_api, action="add", content="Uses Neovim", sources=sources)
    assert status == 400 and body["error"]["code"] == "invalid_params" and message in body["error"]["message"]
    assert state(alice) == before
