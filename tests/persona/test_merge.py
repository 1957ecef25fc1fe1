import pytest

from apps.accounts.models import AuditEvent
from apps.persona.services import (
    persona_changes,
    persona_edit,
    persona_import,
    persona_live_entries,
    persona_merge_all,
    persona_merge_change,
    persona_proposal_entries,
    persona_reject_change,
    persona_restore_version,
    persona_versions,
)
from apps.tools.errors import Conflict, InvalidParams, NotFound

from .conftest import set_live, state


def propose(profile):
    set_live(profile, ["Prefers concise answers", "Works in Go", "Lives in Berlin"])
    persona_edit(profile=profile, actor="job", action="update", target="in Go", content="Works in Go and Rust")
    persona_edit(profile=profile, actor="job", action="delete", target="Berlin")
    persona_edit(profile=profile, actor="job", action="add", content="Uses Neovim")


def change(profile, kind):
    return next(c for c in persona_changes(profile=profile)["changes"] if c["kind"] == kind)


def test_changes_list_adds_updates_and_deletes(alice):
    propose(alice)
    view = persona_changes(profile=alice)
    kinds = {c["kind"]: (c["before"], c["after"]) for c in view["changes"]}
    assert kinds == {"update": ("Works in Go", "Works in Go and Rust"), "delete": ("Lives in Berlin", None), "add": (None, "Uses Neovim")}
    assert view["live"] == ["Prefers concise answers", "Works in Go", "Lives in Berlin"]


def test_merge_all_makes_the_proposal_live_and_keeps_the_previous_version(alice):
    propose(alice)
    result = persona_merge_all(profile=alice, actor="user:ann")
    assert result["version"] == 2
    assert persona_live_entries(profile=alice) == ["Prefers concise answers", "Works in Go and Rust", "Uses Neovim"]
    versions = persona_versions(profile=alice)
    assert [v["number"] for v in versions] == [2, 1]
    assert versions[1]["entries"] == ["Prefers concise answers", "Works in Go", "Lives in Berlin"]
    assert persona_changes(profile=alice)["changes"] == []
    assert AuditEvent.objects.filter(profile=alice, action="persona_merge").count() == 1
    with pytest.raises(Conflict):
        persona_merge_all(profile=alice, actor="user:ann")


def test_accept_one_change_leaves_the_others_pending(alice):
    propose(alice)
    persona_merge_change(profile=alice, actor="user:ann", change_id=change(alice, "update")["id"])
    assert persona_live_entries(profile=alice) == ["Prefers concise answers", "Works in Go and Rust", "Lives in Berlin"]
    assert sorted(c["kind"] for c in persona_changes(profile=alice)["changes"]) == ["add", "delete"]
    persona_merge_change(profile=alice, actor="user:ann", change_id=change(alice, "delete")["id"])
    assert persona_live_entries(profile=alice) == ["Prefers concise answers", "Works in Go and Rust"]
    persona_merge_change(profile=alice, actor="user:ann", change_id=change(alice, "add")["id"])
    assert persona_live_entries(profile=alice) == ["Prefers concise answers", "Works in Go and Rust", "Uses Neovim"]
    assert [v["number"] for v in persona_versions(profile=alice)] == [4, 3, 2, 1]


def test_an_added_entry_lands_after_its_proposal_neighbour(alice):
    set_live(alice, ["first", "second", "third"])
    persona_edit(profile=alice, actor="job", action="add", content="new")
    persona_edit(profile=alice, actor="job", action="delete", target="third")
    persona_edit(profile=alice, actor="job", action="add", content="also new")
    persona_merge_change(profile=alice, actor="u", change_id=change(alice, "add")["id"])
    assert persona_live_entries(profile=alice) == ["first", "second", "third", "new"]


def test_accept_with_an_edit_first(alice):
    propose(alice)
    persona_merge_change(profile=alice, actor="u", change_id=change(alice, "add")["id"], text="Uses Neovim with LazyVim")
    assert persona_live_entries(profile=alice)[-1] == "Uses Neovim with LazyVim"
    assert "Uses Neovim with LazyVim" in persona_proposal_entries(profile=alice)
    assert all(c["kind"] != "add" for c in persona_changes(profile=alice)["changes"])
    with pytest.raises(InvalidParams):
        persona_merge_change(profile=alice, actor="u", change_id=change(alice, "update")["id"], text="two\nlines")
    with pytest.raises(InvalidParams):
        persona_merge_change(profile=alice, actor="u", change_id=change(alice, "delete")["id"], text="edited")


def test_reject_each_kind_restores_the_proposal(alice):
    propose(alice)
    for kind in ("update", "delete", "add"):
        persona_reject_change(profile=alice, actor="u", change_id=change(alice, kind)["id"])
    assert persona_changes(profile=alice)["changes"] == []
    assert persona_proposal_entries(profile=alice) == ["Prefers concise answers", "Works in Go", "Lives in Berlin"]
    assert [v["number"] for v in persona_versions(profile=alice)] == [1]  # USER.md untouched


def test_unknown_or_stale_change_ids_are_not_found_and_change_nothing(alice):
    propose(alice)
    before = state(alice)
    with pytest.raises(NotFound):
        persona_merge_change(profile=alice, actor="u", change_id="nope")
    with pytest.raises(NotFound):
        persona_reject_change(profile=alice, actor="u", change_id="nope")
    assert state(alice) == before


def test_restore_a_previous_version_as_a_new_version(alice):
    propose(alice)
    persona_merge_all(profile=alice, actor="u")
    result = persona_restore_version(profile=alice, actor="u", number=1)
    assert result["version"] == 3
    assert persona_live_entries(profile=alice) == ["Prefers concise answers", "Works in Go", "Lives in Berlin"]
    assert [v["action"] for v in persona_versions(profile=alice)] == ["restore", "merge", "import"]
    with pytest.raises(NotFound):
        persona_restore_version(profile=alice, actor="u", number=99)
    with pytest.raises(Conflict):
        persona_restore_version(profile=alice, actor="u", number=3)


def test_a_new_run_rebases_on_a_changed_user_md_keeping_pending_changes(alice):
    set_live(alice, ["A", "B", "C"])
    persona_edit(profile=alice, actor="job", action="delete", target="B")
    persona_edit(profile=alice, actor="job", action="add", content="D")
    set_live(alice, ["A", "B", "C", "E"])  # a human changed USER.md meanwhile
    persona_edit(profile=alice, actor="job", action="update", target="E", content="E2")
    assert persona_proposal_entries(profile=alice) == ["A", "C", "E2", "D"]
    assert sorted((c["kind"], c["before"], c["after"]) for c in persona_changes(profile=alice)["changes"]) == [
        ("add", None, "D"), ("delete", "B", None), ("update", "E", "E2")]


def test_merge_services_are_isolated_per_profile(alice, bob):
    propose(alice)
    set_live(bob, ["bob"])
    with pytest.raises(NotFound):
        persona_merge_change(profile=bob, actor="u", change_id=change(alice, "add")["id"])
    persona_merge_all(profile=alice, actor="u")
    assert persona_live_entries(profile=bob) == ["bob"]


def test_import_reads_the_section_form(alice):
    persona_import(profile=alice, actor="import", user_md="One\n§\nTwo <!-- hidden -->\n§\n\n", user_temp_md="One\n§\nThree\n")
    assert persona_live_entries(profile=alice) == ["One", "Two"]
    assert [(c["kind"], c["before"], c["after"]) for c in persona_changes(profile=alice)["changes"]] == [("add", None, "Three"), ("delete", "Two", None)]


def test_files_mirror_the_database(alice, settings, django_capture_on_commit_callbacks):
    set_live(alice, ["Prefers concise answers"])
    with django_capture_on_commit_callbacks(execute=True):
        persona_edit(profile=alice, actor="job", action="add", content="Uses Neovim")
    root = settings.DATA_DIR / "profiles" / "alice"
    assert (root / "USER.md").read_text(encoding="utf-8") == "Prefers concise answers\n"
    assert (root / "USER-temp.md").read_text(encoding="utf-8") == "Prefers concise answers\n§\nUses Neovim\n"
    with django_capture_on_commit_callbacks(execute=True):
        persona_merge_all(profile=alice, actor="u")
    assert (root / "USER.md").read_text(encoding="utf-8") == "Prefers concise answers\n§\nUses Neovim\n"


def test_review_page_addressing_accepts_rejects_and_edits(alice):
    from apps.persona.models import PersonaProposal
    from apps.persona.services import persona_merge_entry

    propose(alice)
    texts = [e["text"] for e in PersonaProposal.objects.get(profile=alice).entries]
    persona_merge_entry(profile=alice, actor="u", decision="edit", kind="added", index=texts.index("Uses Neovim"), text="Uses Neovim daily")
    persona_merge_entry(profile=alice, actor="u", decision="reject", kind="deleted", text="Lives in Berlin")
    persona_merge_entry(profile=alice, actor="u", decision="accept", kind="updated", index=texts.index("Works in Go and Rust"))
    assert persona_live_entries(profile=alice) == ["Prefers concise answers", "Works in Go and Rust", "Lives in Berlin", "Uses Neovim daily"]
    assert persona_changes(profile=alice)["changes"] == []
    before = state(alice)
    with pytest.raises(NotFound):
        persona_merge_entry(profile=alice, actor="u", decision="accept", kind="added", index=0)
    with pytest.raises(InvalidParams):
        persona_merge_entry(profile=alice, actor="u", decision="maybe", kind="added", index=0)
    assert state(alice) == before


def test_mirror_never_writes_through_an_l3_folder_linked_to_another_profile(alice, bob, settings, django_capture_on_commit_callbacks):
    import os

    bob_l3 = settings.DATA_DIR / "profiles" / "bob" / "l3"
    bob_l3.mkdir(parents=True)
    (bob_l3 / "cursor.json").write_text('{"updated": "2026-01-01T00:00:00Z"}\n', encoding="utf-8")
    alice_root = settings.DATA_DIR / "profiles" / "alice"
    alice_root.mkdir(parents=True, exist_ok=True)
    os.symlink(bob_l3, alice_root / "l3")
    with django_capture_on_commit_callbacks(execute=True):
        persona_edit(profile=alice, actor="job", action="add", content="Uses Neovim")
    assert (bob_l3 / "cursor.json").read_text(encoding="utf-8") == '{"updated": "2026-01-01T00:00:00Z"}\n'
    assert persona_proposal_entries(profile=alice) == ["Uses Neovim"]
    assert (alice_root / "USER-temp.md").read_text(encoding="utf-8") == "Uses Neovim\n"


def test_import_yields_one_line_entries_whatever_the_line_endings(alice):
    persona_import(profile=alice, actor="import", user_md="One\r§\rTwo\u2028continued\r\n§\r\nThree\x00\n")
    entries = persona_live_entries(profile=alice)
    assert entries == ["One", "Two continued", "Three"]
    assert all(document_entry_ok(e) for e in entries)


def document_entry_ok(text):
    from apps.persona.document import entry_problem

    return entry_problem(text) is None
