"""SKILL.md front matter (SPEC §1.7): parse and validate.

A SKILL.md is `---`, a YAML mapping, `---`, then the Markdown body. Every problem is
reported as invalid_params naming the field (`content.front_matter.<key>`), so an agent
can fix exactly what is wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from apps.tools.errors import InvalidParams, invalid_field

NAME_PATTERN = r"[a-z0-9][a-z0-9-]{0,63}"
NAME_RE = re.compile(NAME_PATTERN + r"\Z")
DESCRIPTION_MAX_CHARS = 1024
VERSION_MAX_CHARS = 64
TAG_MAX_CHARS = 64
TAGS_MAX = 32
RELATED_MAX = 32
ALLOWED_KEYS = ("name", "description", "version", "tags", "related_skills")
REQUIRED_KEYS = ("name", "description")
_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")


@dataclass(frozen=True)
class FrontMatter:
    name: str
    description: str
    version: str | int | float | None = None
    tags: list[str] = field(default_factory=list)
    related_skills: list[str] = field(default_factory=list)
    body: str = ""

    def summary(self) -> dict[str, Any]:
        return {
            "description": self.description,
            "version": self.version,
            "tags": list(self.tags),
            "related_skills": list(self.related_skills),
        }


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses duplicate keys instead of silently keeping the last one."""


def _construct_unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            duplicate = key in seen
        except TypeError:
            raise yaml.constructor.ConstructorError(None, None, "a key is not a plain string", key_node.start_mark) from None
        if duplicate:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)



def split_front_matter(content: str, *, field_name: str = "content") -> tuple[str, str]:
    """Return (yaml text, body). The first line must be `---`; the block ends at the next `---` line."""
    lines = content.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n") != "---":
        raise invalid_field(field_name, "SKILL.md must start with a '---' line opening the YAML front matter")
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r\n") == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise invalid_field(field_name, "the YAML front matter is not closed by a '---' line")


def _check_name_value(value: Any, field_name: str) -> str:
    if not isinstance(value, str):
        raise invalid_field(field_name, f"must be a string, got {type(value).__name__}")
    if not NAME_RE.match(value):
        raise invalid_field(field_name, f"{value!r} must match {NAME_PATTERN} (lowercase letters, digits and '-', at most 64 chars)")
    return value


def _check_string_list(value: Any, field_name: str, *, max_items: int, item_check) -> list[str]:
    if not isinstance(value, list):
        raise invalid_field(field_name, f"must be a list of strings, got {type(value).__name__}")
    if len(value) > max_items:
        raise invalid_field(field_name, f"has {len(value)} items; at most {max_items} allowed")
    items: list[str] = []
    for index, item in enumerate(value):
        checked = item_check(item, f"{field_name}.{index}")
        if checked in items:
            raise invalid_field(f"{field_name}.{index}", f"{checked!r} is listed twice")
        items.append(checked)
    return items


def _breaks_line(value: str) -> bool:
    """True when `value` holds any line break str.splitlines() knows (\\n, \\r, U+2028, U+0085...)."""
    return any(ch in _LINE_BREAKS for ch in value)


def _check_tag(value: Any, field_name: str) -> str:
    if not isinstance(value, str):
        raise invalid_field(field_name, f"must be a string, got {type(value).__name__}")
    if not value.strip():
        raise invalid_field(field_name, "must not be empty")
    if len(value) > TAG_MAX_CHARS or _breaks_line(value):
        raise invalid_field(field_name, f"must be one line of at most {TAG_MAX_CHARS} characters")
    return value


def parse_front_matter(content: str, *, expected_name: str, field_name: str = "content") -> FrontMatter:
    """Validate a whole SKILL.md text; `expected_name` is the skill's folder name."""
    yaml_text, body = split_front_matter(content, field_name=field_name)
    prefix = f"{field_name}.front_matter"
    try:
        data = yaml.load(yaml_text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise invalid_field(prefix, f"is not valid YAML{where}: {problem}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise invalid_field(prefix, f"must be a YAML mapping of keys to values, got {type(data).__name__}")
    unknown = [str(key) for key in data if key not in ALLOWED_KEYS]
    if unknown:
        raise invalid_field(
            f"{prefix}.{unknown[0]}",
            f"unknown key(s) {', '.join(repr(k) for k in unknown)}; allowed keys are {', '.join(ALLOWED_KEYS)}",
        )
    for key in REQUIRED_KEYS:
        if key not in data or data[key] is None:
            raise invalid_field(f"{prefix}.{key}", "is required")
    name = _check_name_value(data["name"], f"{prefix}.name")
    if name != expected_name:
        raise invalid_field(f"{prefix}.name", f"{name!r} must equal the skill's folder name {expected_name!r}")
    description = data["description"]
    if not isinstance(description, str):
        raise invalid_field(f"{prefix}.description", f"must be a string, got {type(description).__name__}")
    if not description.strip():
        raise invalid_field(f"{prefix}.description", "must not be empty")
    if len(description) > DESCRIPTION_MAX_CHARS:
        raise invalid_field(f"{prefix}.description", f"is {len(description)} characters; at most {DESCRIPTION_MAX_CHARS} allowed")
    version = data.get("version")
    if version is not None:
        if isinstance(version, bool) or not isinstance(version, (str, int, float)):
            raise invalid_field(f"{prefix}.version", f"must be a string or a number, got {type(version).__name__}")
        if isinstance(version, str) and (not version.strip() or len(version) > VERSION_MAX_CHARS or _breaks_line(version)):
            raise invalid_field(f"{prefix}.version", f"must be one non-empty line of at most {VERSION_MAX_CHARS} characters")
    tags = data.get("tags")
    tags = [] if tags is None else _check_string_list(tags, f"{prefix}.tags", max_items=TAGS_MAX, item_check=_check_tag)
    related = data.get("related_skills")
    related = (
        []
        if related is None
        else _check_string_list(related, f"{prefix}.related_skills", max_items=RELATED_MAX, item_check=_check_name_value)
    )
    if not body.strip():
        raise invalid_field(field_name, "the skill has no body after the front matter (write the instructions there)")
    return FrontMatter(
        name=name, description=description, version=version, tags=tags, related_skills=related, body=body
    )


def read_summary(content: str, *, expected_name: str) -> tuple[dict[str, Any], str | None]:
    """Front matter of a stored SKILL.md for listings; never raises.

    Returns (summary, problem). A skill edited on disk by hand may be malformed; it is
    still listed, with the problem shown, so it can be found and fixed.
    """
    try:
        return parse_front_matter(content, expected_name=expected_name).summary(), None
    except InvalidParams as exc:
        return {"description": "", "version": None, "tags": [], "related_skills": []}, exc.message
