"""Helpers of the skill tests: SKILL.md texts, on-disk snapshots, error assertions."""

from __future__ import annotations

from pathlib import Path

from apps.accounts.paths import profile_dir


def skill_md(name: str, description: str = "Deploy the thing safely", body: str | None = None, extra: str = "") -> str:
    body = body if body is not None else f"# {name}\n\n## When to Use\n- always\n\n## Steps\n1. run it\n"
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}"


def snapshot(profile) -> dict[str, object]:
    """Every file (with its bytes) and folder under the profile's data dir, except the lock file."""
    root = profile_dir(profile)
    state: dict[str, object] = {}
    if not root.exists():
        return state
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel == ".skills.lock":
            continue
        if path.is_symlink():
            state[rel] = ("link", str(path.readlink()))
        elif path.is_dir():
            state[rel] = "dir"
        else:
            state[rel] = path.read_bytes()
    return state


def skill_dir(profile, category: str, name: str) -> Path:
    return profile_dir(profile) / "skills" / category / name


def assert_error(response, status: int, code: str) -> dict:
    got_status, body = response
    assert got_status == status, (got_status, body)
    assert body["error"]["code"] == code, body
    return body["error"]
