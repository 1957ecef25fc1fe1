"""Skills in and out of the SPEC §7 layout (`skills/<category>/<name>/...`) and their pins.

The import goes through the skill services (create, write_file, pin), so every rule of
the skills app holds for imported skills too; `skill_problem` runs the same checks
beforehand so that a bad folder is refused before any skill is written."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apps.accounts.models import Profile
from apps.skills import storage
from apps.skills.frontmatter import parse_front_matter
from apps.skills.models import SkillPin
from apps.skills.services import skill_create, skill_pin, skill_write_file
from apps.tools.errors import ToolError


@dataclass
class SkillFolder:
    category: str
    name: str
    content: str  # SKILL.md
    files: dict[str, str] = field(default_factory=dict)  # support path -> text


def skills_export(*, profile: Profile) -> tuple[list[tuple[str, bytes]], list[str]]:
    """(files as (path under skills/, bytes), pinned names) of the profile's own skills;
    bundled skills ship with the product and are not exported."""
    out: list[tuple[str, bytes]] = []
    for location in storage.iter_skills(storage.skills_root(profile), bundled=False):
        prefix = f"{location.category}/{location.name}"
        out.append((f"{prefix}/{storage.SKILL_FILE}", location.skill_file.read_bytes()))
        for relative in storage.support_files(location.path):
            out.append((f"{prefix}/{relative}", (location.path / relative).read_bytes()))
    pins = list(SkillPin.objects.filter(profile=profile).order_by("name").values_list("name", flat=True))
    return out, pins


def skill_problem(folder: SkillFolder) -> str | None:
    """Why the skill services would refuse this folder, or None."""
    try:
        storage.check_name(folder.category, "category")
        storage.check_name(folder.name)
        parse_front_matter(folder.content, expected_name=folder.name)
        for path in folder.files:
            storage.check_support_path(path)
    except ToolError as exc:
        return exc.message
    return None


def skills_restore(*, profile: Profile, actor: str, folders: list[SkillFolder], pins: list[str]) -> dict[str, Any]:
    """Create the skills the profile lacks (an existing name is skipped), then pin."""
    present = {loc.name for loc in storage.iter_skills(storage.skills_root(profile), bundled=False)}
    counts = {"skills": 0, "files": 0, "skipped": 0, "pinned": 0}
    for folder in folders:
        if folder.name in present:
            counts["skipped"] += 1
            continue
        skill_create(profile=profile, actor=actor, name=folder.name, category=folder.category, content=folder.content, tool="import")
        for path, text in sorted(folder.files.items()):
            skill_write_file(profile=profile, actor=actor, name=folder.name, file_path=path, file_content=text, tool="import")
            counts["files"] += 1
        counts["skills"] += 1
        present.add(folder.name)
    already = set(SkillPin.objects.filter(profile=profile).values_list("name", flat=True))
    for name in pins:
        if name in present and name not in already:
            skill_pin(profile=profile, actor=actor, name=name, tool="import")
            counts["pinned"] += 1
    return counts
