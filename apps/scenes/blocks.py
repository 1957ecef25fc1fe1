"""Pure helpers for scene blocks: filenames, member references, body length, META form."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

FILENAME_MAX = 120
FILENAME_MAX_BYTES = 255  # NAME_MAX of common file systems, for the mirror and exports
FILENAME_PUNCT = "_.-"

META_START = "-----META-START-----"
META_END = "-----META-END-----"

# A member reference in a block body: an L1 id in round brackets, ASCII or full-width,
# several ids in one bracket separated by commas, e.g. "(l1_1732870000000_ab12)" or
# "（l1_1732870000000_ab12，l1_1732870000001_cd34）".
_ID = r"l1_[A-Za-z0-9_\-]+"
_REF_GROUP = re.compile(r"[(（]\s*(" + _ID + r"(?:\s*[,，;；]\s*" + _ID + r")*)\s*[)）]")
_ID_RE = re.compile(_ID)
_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")


def filename_problem(name: str) -> str | None:
    """Why `name` is not a valid block filename (SPEC §1.4), or None."""
    if not isinstance(name, str) or not name:
        return "a filename is required"
    if len(name) > FILENAME_MAX:
        return f"a filename has at most {FILENAME_MAX} characters (got {len(name)})"
    if "/" in name or "\\" in name:
        return "a filename is a bare name, never a path"
    if ".." in name:
        return "a filename must not contain '..'"
    if name.startswith("."):
        return "a filename must not start with '.'"
    if not name.endswith(".md") or len(name) == 3:
        return "a filename ends with '.md' after at least one character"
    bad = sorted({ch for ch in name[:-3] if not (ch.isalnum() or ch in FILENAME_PUNCT)})
    if bad:
        return "a filename may hold only letters, digits, '_', '.', '-' (not " + " ".join(repr(c) for c in bad) + ")"
    return None


def text_problem(value: str) -> str | None:
    """Why `value` cannot be stored as text (a NUL character or a lone surrogate: PostgreSQL
    refuses the first, UTF-8 files the second), or None."""
    if "\x00" in value:
        return "must not contain NUL (\\u0000) characters"
    if any("\ud800" <= ch <= "\udfff" for ch in value):
        return "must not contain lone UTF-16 surrogates (not valid Unicode text)"
    return None


def looks_like_path(name: str) -> bool:
    return isinstance(name, str) and ("/" in name or "\\" in name or ".." in name)


def referenced_ids(content: str) -> list[str]:
    """L1 ids named in `content` as `(memory ID)` references, in first-seen order."""
    seen: dict[str, None] = {}
    for group in _REF_GROUP.finditer(content or ""):
        for record_id in _ID_RE.findall(group.group(1)):
            seen.setdefault(record_id, None)
    return list(seen)


def strip_meta(content: str) -> str:
    """Drop a leading META block a caller may have pasted into a body."""
    text = content or ""
    stripped = text.lstrip("\ufeff")
    if stripped.lstrip().startswith(META_START):
        start = stripped.find(META_START)
        end = stripped.find(META_END, start)
        if end != -1:
            return stripped[end + len(META_END):].lstrip("\n")
    return text


def body_length(content: str) -> int:
    """Characters of substance in a body: META block and heading lines excluded, and
    whitespace not counted, so re-wrapping or re-indenting costs nothing."""
    total = 0
    for line in strip_meta(content).splitlines():
        if _HEADING.match(line):
            continue
        total += sum(1 for ch in line if not ch.isspace())
    return total


def parse_iso(value: Any) -> datetime | None:
    """An ISO 8601 date or date-time as an aware UTC datetime; None when unparseable."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:  # e.g. 0001-01-01T00:00+14:00 has no UTC time in range
        return None


def iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


# META keys beyond SPEC §7 that an export adds so a restore loses nothing: when the block
# was first written here, last written, archived and why. Readers that do not know them
# (TencentDB-Agent-Memory) ignore unknown keys; `archiveReason` is JSON text (it may span
# lines).
EXTRA_META_KEYS = ("firstWrittenAt", "writtenAt", "archivedAt", "archiveReason")


def render_file(*, meta: dict[str, Any], members: list[str], content: str, extra: dict[str, Any] | None = None) -> str:
    """A block file: the SPEC §7 META block (plus `extra` keys of EXTRA_META_KEYS), then the body."""
    summary = " ".join(str(meta.get("summary", "")).split())
    lines = [
        META_START,
        f"created: {meta.get('created') or ''}",
        f"updated: {meta.get('updated') or ''}",
        f"summary: {summary}",
        f"heat: {int(meta.get('heat') or 0)}",
        f"members: {', '.join(members)}",
    ]
    for key in EXTRA_META_KEYS:
        value = (extra or {}).get(key)
        if value is not None and value != "":
            lines.append(f"{key}: {json.dumps(value, ensure_ascii=False) if key == 'archiveReason' else value}")
    lines.append(META_END)
    body = content if content.endswith("\n") or not content else content + "\n"
    return "\n".join(lines) + "\n" + body


def meta_problem(text: str) -> tuple[int, str] | None:
    """(line, why) when a file that opens a META block has a broken one, else None. A file
    without META is a plain body (allowed)."""
    stripped = text.lstrip("\ufeff")
    if not stripped.startswith(META_START):
        return None
    lines = stripped.split("\n")
    if not any(line.strip() == META_END for line in lines[1:]):
        return 1, f"the META block opened here has no {META_END} line"
    for number, line in enumerate(lines[1:], start=2):
        if line.strip() == META_END:
            return None
        if not line.strip():
            continue
        key, sep, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if not sep or not key:
            return number, f"META line {line[:80]!r} is not 'key: value'"
        if key in ("created", "updated", "firstWrittenAt", "writtenAt", "archivedAt") and value and parse_iso(value) is None:
            return number, f"META {key} {value[:60]!r} is not an ISO 8601 time"
        if key == "heat" and value and not re.fullmatch(r"\d{1,10}", value):
            return number, f"META heat {value[:60]!r} is not a non-negative integer"
        if key == "members" and value and not all(_ID_RE.fullmatch(m.strip()) for m in value.split(",") if m.strip()):
            return number, "META members must be comma-separated L1 ids (l1_...)"
        if key == "archiveReason":
            try:
                json.loads(value)
            except ValueError:
                return number, "META archiveReason must be a JSON string"
    return None


def parse_file(text: str) -> tuple[dict[str, Any], list[str] | None, str]:
    """Read a block file back: (meta, members, body). A file without META is all body.
    `members` is None when the file has no `members:` line (a TencentDB-Agent-Memory
    block), so the caller can tell "no members" from "not recorded"."""
    stripped = text.lstrip("\ufeff")
    if not stripped.startswith(META_START):
        return {}, None, text
    end = stripped.find(META_END)
    if end == -1:
        return {}, None, text
    header = stripped[len(META_START):end]
    body = stripped[end + len(META_END):].lstrip("\n")
    meta: dict[str, Any] = {}
    members: list[str] | None = None
    for line in header.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        if key == "members":
            members = [m.strip() for m in value.split(",") if m.strip()]
        elif key == "heat":
            try:
                meta["heat"] = int(value)
            except ValueError:
                meta["heat"] = 0
        elif key in ("created", "updated", "summary", "firstWrittenAt", "writtenAt", "archivedAt"):
            meta[key] = value
        elif key == "archiveReason":
            try:
                meta[key] = str(json.loads(value))
            except ValueError:
                meta[key] = value
    return meta, members, body
