"""write_file / remove_file and file views: confinement to the four support folders."""

from __future__ import annotations

import os

import pytest

from apps.accounts.paths import profile_dir
from apps.skills import storage
from tests.skills.helpers import assert_error, skill_dir, snapshot


@pytest.fixture
def deploy(agent_api, create_skill):
    create_skill(agent_api)
    return skill_dir(agent_api.profile, "devops", "deploy")


def _write(api, path, content="text", name="deploy"):
    return api.call("skill_manage", action="write_file", name=name, file_path=path, file_content=content)


@pytest.mark.parametrize("folder", storage.SUPPORT_DIRS)
def test_write_file_in_each_support_folder(agent_api, deploy, folder):
    body = agent_api.ok("skill_manage", action="write_file", name="deploy", file_path=f"{folder}/sub/file.txt", file_content="héllo\n")
    assert body == {
        "success": True, "action": "write_file", "name": "deploy", "category": "devops",
        "file_path": f"{folder}/sub/file.txt", "bytes": len("héllo\n".encode()), "created": True, "changed": True,
    }
    assert (deploy / folder / "sub" / "file.txt").read_text() == "héllo\n"
    assert agent_api.ok("skill_view", name="deploy")["files"] == [f"{folder}/sub/file.txt"]
    assert agent_api.ok("skill_view", name="deploy", file=f"{folder}/sub/file.txt") == {
        "name": "deploy", "file": f"{folder}/sub/file.txt", "content": "héllo\n",
    }


def test_overwrite_keeps_the_previous_version_in_the_trash(agent_api, deploy):
    agent_api.ok("skill_manage", action="write_file", name="deploy", file_path="scripts/run.sh", file_content="v1")
    body = agent_api.ok("skill_manage", action="write_file", name="deploy", file_path="scripts/run.sh", file_content="v2")
    assert body["created"] is False and body["changed"] is True
    assert (deploy / "scripts" / "run.sh").read_text() == "v2"
    kept = list((profile_dir(agent_api.profile) / "skills-trash").rglob("run.sh"))
    assert [p.read_text() for p in kept] == ["v1"]
    same = agent_api.ok("skill_manage", action="write_file", name="deploy", file_path="scripts/run.sh", file_content="v2")
    assert same["changed"] is False
    assert len(list((profile_dir(agent_api.profile) / "skills-trash").rglob("run.sh"))) == 1


def test_remove_file_moves_it_to_the_trash_and_prunes_empty_folders(agent_api, deploy):
    agent_api.ok("skill_manage", action="write_file", name="deploy", file_path="references/deep/a.md", file_content="A")
    body = agent_api.ok("skill_manage", action="remove_file", name="deploy", file_path="references/deep/a.md")
    assert body["trash"].startswith("skills-trash/")
    assert not (deploy / "references").exists()
    trashed = profile_dir(agent_api.profile) / body["trash"] / "devops" / "deploy" / "references" / "deep" / "a.md"
    assert trashed.read_text() == "A"
    assert agent_api.ok("skill_view", name="deploy")["files"] == []


def test_remove_missing_file_is_not_found_and_folder_is_invalid(agent_api, deploy):
    error = assert_error(agent_api.call("skill_manage", action="remove_file", name="deploy", file_path="references/none.md"), 404, "not_found")
    assert error["details"]["files"] == []
    agent_api.ok("skill_manage", action="write_file", name="deploy", file_path="references/sub/a.md", file_content="A")
    before = snapshot(agent_api.profile)
    assert_error(agent_api.call("skill_manage", action="remove_file", name="deploy", file_path="references/sub"), 400, "invalid_params")
    assert snapshot(agent_api.profile) == before


@pytest.mark.parametrize(
    "path",
    ["../other/SKILL.md", "references/../../x.md", "references/../SKILL.md", "/etc/passwd", "\\windows\\x", "C:/x.md", "~/x.md",
     "..\\..\\bob\\x.md"],
)
def test_escaping_paths_are_forbidden_and_change_nothing(agent_api, deploy, path):
    before = snapshot(agent_api.profile)
    assert_error(_write(agent_api, path), 403, "forbidden")
    assert_error(agent_api.call("skill_manage", action="remove_file", name="deploy", file_path=path), 403, "forbidden")
    assert_error(agent_api.call("skill_view", name="deploy", file=path), 403, "forbidden")
    assert snapshot(agent_api.profile) == before


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("SKILL.md", "edit or patch"),
        ("notes.md", "must be inside one of"),
        ("docs/notes.md", "must be inside one of"),
        ("references", "names a support folder"),
        ("references/", "empty or '.' segment"),
        ("references//a.md", "empty or '.' segment"),
        ("references/./a.md", "empty or '.' segment"),
        ("references/.env", "hidden"),
        ("scripts/.git/config", "hidden"),
        ("references\\a.md", "separator"),
        ("references/a\nb.md", "characters other than"),
        ("references/a/b/c/d/e/f.md", "deeper than"),
        ("references/" + "a" * 129, "longer than"),
        ("references/" + "记" * 100 + ".md", "bytes in UTF-8"),
    ],
)
def test_paths_outside_the_support_folders_are_invalid_params(agent_api, deploy, path, fragment):
    before = snapshot(agent_api.profile)
    error = assert_error(_write(agent_api, path), 400, "invalid_params")
    assert error["details"][0]["field"] == "file_path"
    assert fragment in error["message"]
    assert snapshot(agent_api.profile) == before


def test_symlink_inside_a_skill_is_never_followed(agent_api, deploy, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    os.symlink(outside, deploy / "references")
    before = snapshot(agent_api.profile)
    assert_error(_write(agent_api, "references/secret.txt", "overwritten"), 403, "forbidden")
    assert_error(agent_api.call("skill_view", name="deploy", file="references/secret.txt"), 403, "forbidden")
    assert_error(agent_api.call("skill_manage", action="remove_file", name="deploy", file_path="references/secret.txt"), 403, "forbidden")
    assert (outside / "secret.txt").read_text() == "secret"
    assert agent_api.ok("skill_view", name="deploy")["files"] == []
    assert snapshot(agent_api.profile) == before


def test_symlinked_file_is_not_listed_or_read(agent_api, deploy, tmp_path):
    (tmp_path / "target.txt").write_text("outside")
    (deploy / "assets").mkdir()
    os.symlink(tmp_path / "target.txt", deploy / "assets" / "link.txt")
    assert agent_api.ok("skill_view", name="deploy")["files"] == []
    assert_error(agent_api.call("skill_view", name="deploy", file="assets/link.txt"), 403, "forbidden")


def test_writing_over_a_folder_or_under_a_file_is_conflict(agent_api, deploy):
    agent_api.ok("skill_manage", action="write_file", name="deploy", file_path="references/a/b.md", file_content="B")
    before = snapshot(agent_api.profile)
    assert_error(_write(agent_api, "references/a"), 409, "conflict")
    assert_error(_write(agent_api, "references/a/b.md/c.md"), 409, "conflict")
    assert snapshot(agent_api.profile) == before


def test_support_file_over_the_size_limit_is_payload_too_large(agent_api, deploy):
    before = snapshot(agent_api.profile)
    error = assert_error(_write(agent_api, "assets/big.txt", "x" * (storage.MAX_FILE_BYTES + 1)), 413, "payload_too_large")
    assert error["details"] == {"field": "file_content", "bytes": storage.MAX_FILE_BYTES + 1, "limit": storage.MAX_FILE_BYTES}
    assert snapshot(agent_api.profile) == before
    assert _write(agent_api, "assets/max.txt", "x" * storage.MAX_FILE_BYTES)[0] == 200


def test_skill_total_size_and_file_count_are_capped(agent_api, deploy, monkeypatch):
    monkeypatch.setattr(storage, "MAX_FILES_PER_SKILL", 2)
    _write(agent_api, "references/1.md")
    _write(agent_api, "references/2.md")
    error = assert_error(_write(agent_api, "references/3.md"), 409, "conflict")
    assert error["details"]["limit"] == 2
    assert _write(agent_api, "references/2.md", "replacing is fine")[0] == 200
    monkeypatch.setattr(storage, "MAX_SKILL_BYTES", 400)
    before = snapshot(agent_api.profile)
    error = assert_error(_write(agent_api, "references/1.md", "y" * 400), 409, "conflict")
    assert error["details"]["limit"] == 400
    assert snapshot(agent_api.profile) == before


def test_a_cjk_file_name_of_255_bytes_is_written(agent_api, deploy):
    name = "记" * 83 + ".md"  # 249 + 3 = 252 bytes
    assert _write(agent_api, "references/" + name, "内容")[0] == 200
    assert (deploy / "references" / name).read_text(encoding="utf-8") == "内容"


def test_binary_file_placed_on_disk_cannot_be_viewed_as_text(agent_api, deploy):
    (deploy / "assets").mkdir()
    (deploy / "assets" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    assert agent_api.ok("skill_view", name="deploy")["files"] == ["assets/logo.png"]
    error = assert_error(agent_api.call("skill_view", name="deploy", file="assets/logo.png"), 400, "invalid_params")
    assert "not UTF-8" in error["message"]


def test_view_of_missing_file_is_not_found_and_lists_files(agent_api, deploy):
    _write(agent_api, "templates/t.md")
    error = assert_error(agent_api.call("skill_view", name="deploy", file="templates/none.md"), 404, "not_found")
    assert error["details"]["files"] == ["templates/t.md"]
    assert agent_api.ok("skill_view", name="deploy", file="SKILL.md")["content"].startswith("---\nname: deploy\n")
