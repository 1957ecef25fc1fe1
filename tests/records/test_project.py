"""Project attribution in l1_commit and l1_project_get (SPEC §3.2, §3.4)."""

from __future__ import annotations

import pytest

from apps.records.normalize import extract_paths, normalize_path, path_within
from tests.records.conftest import CURSOR, fail, msg, rec, record, snapshot


def selfrec(content: str, project: str | None = None, evidence: list | None = None, sources: list[str] | None = None, **extra) -> dict:
    meta: dict = {"scope": "self"}
    if project is not None:
        meta["project"] = project
    if evidence is not None:
        meta["projectEvidence"] = evidence
    return rec(content, sources=sources or ["m1"], metadata=meta, **extra)


@pytest.fixture
def rows(alice, l0):
    return l0(
        alice,
        msg(1, r"please fix C:\dev\B\src\file.ts and C:/dev/B/README.md", session="s1", cwd="C:/Users/me"),
        msg(2, "the cwd is the project here", session="s1", cwd="/home/me/proj"),
    )


@pytest.mark.parametrize(
    "project, path",
    [
        ("C:/dev/B", "C:/dev/B/src/file.ts"),
        ("C:/dev/B", r"C:\dev\B\src\file.ts"),
        (r"c:\dev\b", "/c/dev/B/src/file.ts"),
        ("/c/dev/B", "C:/dev/B/README.md"),
        ("C:/dev/B", "C:/dev/B/src"),
    ],
)
def test_valid_evidence_sets_project_from_l0_evidence(worker_api, alice, rows, project, path):
    body = worker_api.ok("l1_commit", records=[selfrec("B builds with vite and ships esm", project, [{"message_id": "m1", "path": path}])], cursor=CURSOR)
    meta = record(alice, body["stored"][0]).metadata
    assert meta["scope"] == "self" and meta["projectSource"] == "l0-evidence"
    assert meta["project"] == "C:/dev/B" and meta["projectEvidence"][0]["path"] == path
    assert body["projectWarnings"] == []


def test_confirmed_evidence_adds_the_project_to_known_projects_once(worker_api, alice, rows):
    item = selfrec("B builds with vite and ships esm", "C:/dev/B", [{"message_id": "m1", "path": "C:/dev/B/src/file.ts"}])
    worker_api.ok("l1_commit", records=[item], cursor=CURSOR)
    worker_api.ok("l1_commit", records=[{**item, "content": "B also runs vitest for unit tests"}], cursor=CURSOR)
    alice.refresh_from_db()
    assert alice.known_projects == ["C:/dev/B"]


def test_evidence_in_the_cwd_counts(worker_api, alice, rows):
    body = worker_api.ok("l1_commit", records=[selfrec("proj uses a makefile for builds", "/home/me/proj", [{"message_id": "m2", "path": "/home/me/proj"}], sources=["m2"])], cursor=CURSOR)
    assert record(alice, body["stored"][0]).metadata["project"] == "/home/me/proj"


@pytest.mark.parametrize(
    "project, evidence, fragment",
    [
        ("C:/dev/B", [{"message_id": "m9", "path": "C:/dev/B/src/file.ts"}], "source_message_ids"),
        ("C:/dev/B", [{"message_id": "m1", "path": "C:/dev/B/other.ts"}], "does not occur"),
        ("C:/dev/A", [{"message_id": "m1", "path": "C:/dev/B/src/file.ts"}], "not inside"),
        ("C:/dev/B", [], "projectEvidence"),
        ("C:/dev/B", None, "projectEvidence"),
        ("relative/B", [{"message_id": "m1", "path": "C:/dev/B/src/file.ts"}], "absolute"),
        ("C:/dev/B", [{"message_id": "m1"}], "message_id, path"),
        ("", [{"message_id": "m1", "path": "C:/dev/B/src/file.ts"}], "without metadata.project"),
    ],
)
def test_invalid_evidence_becomes_unknown_with_a_warning_and_never_the_session(worker_api, alice, l0, rows, project, evidence, fragment):
    # The session has a flagged candidate; invalid evidence must still not fall back to it.
    body = worker_api.ok("l1_commit", records=[selfrec("B builds with vite and ships esm", project, evidence)], cursor=CURSOR)
    meta = record(alice, body["stored"][0]).metadata
    assert meta["scope"] == "unknown" and meta["project"] == "" and "projectEvidence" not in meta and "projectSource" not in meta
    assert body["projectWarnings"][0]["index"] == 0 and fragment in body["projectWarnings"][0]["message"]
    alice.refresh_from_db()
    assert alice.known_projects == []


def test_self_without_project_uses_a_flagged_session_candidate(worker_api, alice, l0):
    alice.known_projects = ["/repo/x"]
    alice.save()
    l0(alice, msg(1, "open /repo/x/a.py", session="sx"), msg(2, "and /repo/x/b.py too", session="sx"))
    body = worker_api.ok("l1_commit", records=[selfrec("x keeps settings in one file", sessionKey="sx")], cursor=CURSOR)
    meta = record(alice, body["stored"][0]).metadata
    assert (meta["scope"], meta["project"], meta["projectSource"]) == ("self", "/repo/x", "session")


def test_self_without_project_and_no_flag_becomes_unknown(worker_api, alice, l0):
    l0(alice, msg(1, "nothing with a path in it", session="sy", cwd=""))
    body = worker_api.ok("l1_commit", records=[selfrec("a self record with no usable project")], cursor=CURSOR)
    meta = record(alice, body["stored"][0]).metadata
    assert meta["scope"] == "unknown" and meta["project"] == ""
    assert body["projectWarnings"][0]["index"] == 0


@pytest.mark.parametrize("scope", ["global", "unknown"])
def test_global_and_unknown_always_store_an_empty_project(worker_api, alice, rows, scope):
    body = worker_api.ok("l1_commit", records=[rec("commit messages use the imperative mood", metadata={"scope": scope, "project": "C:/dev/B", "projectEvidence": [{"message_id": "m1", "path": "C:/dev/B"}]})], cursor=CURSOR)
    meta = record(alice, body["stored"][0]).metadata
    assert meta["scope"] == scope and meta["project"] == "" and "projectEvidence" not in meta
    assert body["projectWarnings"]


@pytest.mark.parametrize("metadata", [{}, {"scope": "team"}, {"scope": 3}])
def test_missing_or_invalid_scope_is_unknown(worker_api, alice, rows, metadata):
    body = worker_api.ok("l1_commit", records=[rec("a record without a sensible scope", metadata=metadata)], cursor=CURSOR)
    assert record(alice, body["stored"][0]).metadata["scope"] == "unknown"


# --- l1_project_get -------------------------------------------------------------------


def test_project_get_prefers_known_projects_by_longest_match(worker_api, alice, l0):
    alice.known_projects = ["C:/dev", "C:/dev/B"]
    alice.save()
    l0(alice, msg(1, r"look at C:\dev\B\src\a.ts", session="k", cwd="D:/bench"), msg(2, "and /c/dev/B/b.ts and C:/dev/B/c.ts", session="k", cwd="D:/bench"))
    body = worker_api.ok("l1_project_get", sessionKey="k")
    assert body["project"] == "C:/dev/B" and body["decidedBy"] == "known-projects"
    assert body["confidence"] == 0.75 and body["flag"] is True  # 3 of 4 mentions (cwd counted once)


def test_project_get_falls_back_to_cwd_and_path_majority(worker_api, alice, l0):
    l0(alice, msg(1, "edit /srv/app/main.go and /srv/app/util.go", session="c", cwd="/srv/app"))
    body = worker_api.ok("l1_project_get", sessionKey="c")
    assert body == {"project": "/srv/app", "flag": True, "confidence": 1.0, "decidedBy": "cwd"}
    l0(alice, msg(2, "see /home/u/proj/a.py and /home/u/proj/lib/b.py and /home/u/proj/c.py", session="p", cwd="/tmp/x"))
    body = worker_api.ok("l1_project_get", sessionKey="p")
    assert body["project"] == "/home/u/proj" and body["decidedBy"] == "path-majority" and body["confidence"] == 0.75


def test_project_get_flag_needs_two_mentions_and_confidence(worker_api, alice, l0):
    l0(alice, msg(1, "one path /a/b/c.py only", session="one", cwd=""))
    body = worker_api.ok("l1_project_get", sessionKey="one")
    assert body["flag"] is False and body["confidence"] == 1.0 and "note" in body
    l0(alice, msg(2, "/x/y/z/1.py /x/y/z/2.py /q/r/s/1.py /q/r/s/2.py", session="split", cwd=""))
    body = worker_api.ok("l1_project_get", sessionKey="split")
    assert body["flag"] is False and body["confidence"] == 0.5


def test_project_get_unknown_session_answers_flag_false_with_note(worker_api):
    body = worker_api.ok("l1_project_get", sessionKey="never-seen")
    assert body["flag"] is False and body["decidedBy"] == "none" and body["project"] == "" and body["note"]


def test_project_get_is_for_workers(agent_api):
    fail(agent_api, "l1_project_get", 403, "forbidden", sessionKey="x")


def test_project_get_is_read_only(worker_api, alice, l0):
    l0(alice, msg(1, "edit /srv/app/main.go and /srv/app/util.go", session="c", cwd="/srv/app"))
    before = snapshot(alice)
    worker_api.ok("l1_project_get", sessionKey="c")
    assert snapshot(alice) == before


# --- the normaliser -------------------------------------------------------------------


@pytest.mark.parametrize("raw", [r"C:\dev\x", "c:/dev/x/", "/c/dev/x", "/mnt/c/dev/x", "C:/dev/./y/../x", "C:\\\\dev\\x"])
def test_path_forms_normalise_to_one(raw):
    assert normalize_path(raw) == "C:/dev/x"


def test_drive_paths_compare_case_insensitively_posix_paths_do_not():
    assert path_within(normalize_path("c:/DEV/X/a"), normalize_path("C:/dev/x"))
    assert not path_within("/Home/u", "/home/u")
    assert not path_within("/home/user2", "/home/user")
    assert normalize_path("relative/path") is None


def test_extract_paths_skips_urls_and_commands():
    text = "see https://example.com/a/b, run /help, edit 在/home/u/p/a.py里 and (C:\\dev\\x\\y.ts)."
    assert extract_paths(text) == ["/home/u/p/a.py", "C:/dev/x/y.ts"]


def test_known_projects_editor_normalises_and_rejects_relative_paths(alice):
    from apps.records.project import known_projects_set
    from apps.tools.errors import InvalidParams

    assert known_projects_set(profile=alice, roots=[r"c:\dev\B", "/c/dev/b", "/srv/app/"], actor="user:ann") == ["C:/dev/B", "/srv/app"]
    alice.refresh_from_db()
    assert alice.known_projects == ["C:/dev/B", "/srv/app"]
    with pytest.raises(InvalidParams):
        known_projects_set(profile=alice, roots=["relative/x"], actor="user:ann")
    alice.refresh_from_db()
    assert alice.known_projects == ["C:/dev/B", "/srv/app"]
    assert alice.audit_events.filter(action="known_projects_set").count() == 1


def test_project_get_answers_for_every_session_key_the_l0_ingest_accepts(worker_api, alice, l0):
    from apps.conversations.ingest import MAX_KEY_CHARS

    key = "k" * MAX_KEY_CHARS
    l0(alice, msg(1, "edit /srv/app/main.go and /srv/app/util.go", session=key, cwd="/srv/app"))
    assert worker_api.ok("l1_project_get", sessionKey=key)["project"] == "/srv/app"
    status, body = worker_api.call("l1_project_get", sessionKey=key + "k")
    assert status == 400 and body["error"]["details"][0]["field"] == "sessionKey"
