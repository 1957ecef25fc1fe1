"""`skill_manage` and `skill_view` (SPEC §3.17): thin shells over apps.skills.services."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from apps.skills import services
from apps.tools.errors import InvalidParams
from apps.tools.registry import ToolContext, ToolParams, tool

ACTION_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # action: (required fields, optional fields)
    "list": ((), ("category",)),
    "create": (("name", "category", "content"), ()),
    "edit": (("name", "content"), ()),
    "patch": (("name", "old_string", "new_string"), ("file_path",)),
    "delete": (("name",), ()),
    "write_file": (("name", "file_path", "file_content"), ()),
    "remove_file": (("name", "file_path"), ()),
    "pin": (("name",), ()),
    "unpin": (("name",), ()),
}
OPTIONAL_FIELDS = ("name", "category", "content", "old_string", "new_string", "file_path", "file_content")


class SkillManageParams(ToolParams):
    action: Literal["list", "create", "edit", "patch", "delete", "write_file", "remove_file", "pin", "unpin"] = Field(
        description="What to do; each action takes the fields listed in the tool description."
    )
    name: str | None = Field(None, description="Skill name = its folder name, [a-z0-9][a-z0-9-]{0,63}.")
    category: str | None = Field(None, description="create: the category folder (same rule as name); list: filter.")
    content: str | None = Field(None, description="create/edit: the whole SKILL.md, starting with YAML front matter.")
    old_string: str | None = Field(None, description="patch: text that occurs exactly once in the file.")
    new_string: str | None = Field(None, description="patch: replacement text (may be empty).")
    file_path: str | None = Field(
        None, description="write_file/remove_file (and optionally patch): path under references/, templates/, scripts/ or assets/."
    )
    file_content: str | None = Field(None, description="write_file: the file's full text.")

    def check_fields_for_action(self) -> None:
        required, optional = ACTION_FIELDS[self.action]
        details: list[dict[str, str]] = []
        for field_name in required:
            if getattr(self, field_name) is None:
                details.append({"field": field_name, "message": f"is required for action {self.action!r}"})
        for field_name in OPTIONAL_FIELDS:
            if field_name not in required and field_name not in optional and getattr(self, field_name) is not None:
                details.append({"field": field_name, "message": f"is not used by action {self.action!r}"})
        if details:
            allowed = ", ".join(required + tuple(f"{f}?" for f in optional)) or "no other fields"
            summary = "; ".join(f"{d['field']} {d['message']}" for d in details)
            raise InvalidParams(f"{summary} (action {self.action!r} takes: {allowed})", details=details)


DESCRIPTION = """
Manage skills (create, edit, delete, list). Skills are your procedural memory: reusable approaches for recurring
task types. General memory (USER.md, L1 records) is broad and declarative; skills are narrow and actionable.
Create when: a complex task succeeded (5+ calls), errors were overcome, a user-corrected approach worked, a
non-trivial workflow was discovered. Update when instructions are stale or wrong, or steps or pitfalls are missing.
If you used a skill and hit issues not covered by it, patch it immediately. New skills go to
profiles/<profile>/skills/<category>/<name>/SKILL.md. Pinned skills are protected from deletion only (edit and
write_file still work); unpin first to delete. Bundled skills (shipped with the product) cannot be changed at all.
Good skills include: concrete trigger conditions (When to Use), numbered steps with exact commands, a pitfalls
section, and verification steps. Use skill_view() to see format examples (e.g. the bundled skills).

Actions and their fields:
- list (category?)                      -> {skills: [...], categories, returned}
- create (name, category, content)      content = the whole SKILL.md: '---' YAML front matter '---' then the body.
  Front matter: name (= folder name), description (<=1024 chars); optional version, tags (list), related_skills (list).
- edit (name, content)                  full replace of SKILL.md (the name cannot change)
- patch (name, old_string, new_string, file_path?)  old_string must occur exactly once (else conflict with the count)
- delete (name)                         soft delete into the profile's skill trash; pinned -> conflict
- write_file (name, file_path, file_content)  file_path under references/, templates/, scripts/ or assets/
- remove_file (name, file_path)
- pin (name), unpin (name)
Names are folder names [a-z0-9][a-z0-9-]{0,63}, never paths. One file holds at most 1 MiB of text.
"""


@tool("skill_manage", params=SkillManageParams, min_role="agent", description=DESCRIPTION)
def skill_manage(ctx: ToolContext, params: SkillManageParams) -> dict[str, Any]:
    params.check_fields_for_action()
    profile, actor, p = ctx.profile, ctx.actor, params
    if p.action == "list":
        return services.skill_list(profile=profile, category=p.category)
    if p.action == "create":
        return services.skill_create(profile=profile, actor=actor, name=p.name, category=p.category, content=p.content)
    if p.action == "edit":
        return services.skill_edit(profile=profile, actor=actor, name=p.name, content=p.content)
    if p.action == "patch":
        return services.skill_patch(
            profile=profile, actor=actor, name=p.name, old_string=p.old_string, new_string=p.new_string, file_path=p.file_path
        )
    if p.action == "delete":
        return services.skill_delete(profile=profile, actor=actor, name=p.name)
    if p.action == "write_file":
        return services.skill_write_file(profile=profile, actor=actor, name=p.name, file_path=p.file_path, file_content=p.file_content)
    if p.action == "remove_file":
        return services.skill_remove_file(profile=profile, actor=actor, name=p.name, file_path=p.file_path)
    if p.action == "pin":
        return services.skill_pin(profile=profile, actor=actor, name=p.name)
    return services.skill_unpin(profile=profile, actor=actor, name=p.name)


class SkillViewParams(ToolParams):
    name: str = Field(description="Skill name (a profile skill or a bundled one).")
    file: str | None = Field(None, description="Optional support file path (e.g. references/api.md) to read instead of SKILL.md.")


@tool(
    "skill_view",
    params=SkillViewParams,
    min_role="agent",
    description=(
        "View the content of a skill's SKILL.md or support files. Use this to inspect a skill before deciding whether "
        "to update it. Without `file`: {name, category, content, files: [support file paths], pinned, bundled}. "
        "With `file` (a path from `files`): {name, file, content}."
    ),
)
def skill_view(ctx: ToolContext, params: SkillViewParams) -> dict[str, Any]:
    return services.skill_view(profile=ctx.profile, name=params.name, file=params.file)
