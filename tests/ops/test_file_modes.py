"""Data files are 0600 and folders 0700, through the umask every entry point gets from
the settings (manage.py, the WSGI server, Celery, the test runner)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from apps.accounts.paths import profile_dir
from tests.skills.helpers import skill_md

ROOT = Path(__file__).resolve().parents[2]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _env(data: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "MEMORYWEB_PROCESS"))}
    return {**env, "MEMORYWEB_DATA_DIR": str(data)}


def test_database_file_and_data_dir_are_private(tmp_path):
    data = tmp_path / "fresh"
    subprocess.run([sys.executable, str(ROOT / "manage.py"), "migrate", "-v", "0"], env=_env(data), cwd=ROOT,
                   check=True, timeout=300)
    assert _mode(data) == 0o700
    assert _mode(data / "memoryweb.sqlite3") == 0o600
    assert _mode(data / "secret_key") == 0o600


def test_an_existing_open_data_dir_is_closed_at_start(tmp_path):
    data = tmp_path / "old"
    data.mkdir()
    data.chmod(0o755)
    subprocess.run([sys.executable, str(ROOT / "manage.py"), "check"], env=_env(data), cwd=ROOT, check=True,
                   timeout=120, capture_output=True)
    assert _mode(data) == 0o700


def test_l0_shards_and_skill_files_are_private(agent_api, alice):
    status, body = agent_api.post("/api/v1/l0/messages", {"messages": [
        {"role": "user", "content": "Remember that the staging database lives on db-stage-2.", "sessionKey": "s1", "id": "m1"}]})
    assert status == 200, body
    shards = list((profile_dir(alice) / "l0").glob("*.jsonl"))
    assert shards and all(_mode(p) == 0o600 for p in shards)
    assert _mode(profile_dir(alice) / "l0") == 0o700 and _mode(profile_dir(alice)) == 0o700
    agent_api.ok("skill_manage", action="create", name="deploy", category="devops", content=skill_md("deploy"))
    files = [p for p in (profile_dir(alice) / "skills").rglob("*") if p.is_file()]
    dirs = [p for p in (profile_dir(alice) / "skills").rglob("*") if p.is_dir()]
    assert any(p.name == "SKILL.md" for p in files)
    assert all(_mode(p) == 0o600 for p in files), {str(p): oct(_mode(p)) for p in files}
    assert all(_mode(p) == 0o700 for p in dirs), {str(p): oct(_mode(p)) for p in dirs}
