"""Normalisation shared by the L1 services: content keys and filesystem paths.

Content key (exact-duplicate detection): NFKC, casefold, every run of whitespace
collapsed to one space, punctuation and symbols trimmed from both ends, then SHA-256.
So "Use pnpm." and "  use   PNPM " are duplicates; "use pnpm 8" and "use pnpm" are not.

Paths (project attribution, `l1_project_get`, known projects): one canonical form so that
`C:\\dev\\x`, `c:/dev/x`, `/c/dev/x` (Git Bash) and `/mnt/c/dev/x` (WSL) compare equal.
Drive paths are written `C:/dev/x` and compared case-insensitively (Windows file systems
are); POSIX paths keep their case. `.`/`..` segments are resolved lexically, trailing
slashes dropped. A relative path has no canonical form (None).
"""

from __future__ import annotations

import hashlib
import posixpath
import re
import unicodedata

_WS = re.compile(r"\s+")


def _is_edge_junk(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch)[0] in ("P", "S")


def normalize_content(text: str) -> str:
    text = unicodedata.normalize("NFKC", text or "").casefold()
    text = _WS.sub(" ", text)
    start, end = 0, len(text)
    while start < end and _is_edge_junk(text[start]):
        start += 1
    while end > start and _is_edge_junk(text[end - 1]):
        end -= 1
    return text[start:end]


def content_key(text: str) -> str:
    return hashlib.sha256(normalize_content(text).encode("utf-8")).hexdigest()


# --- paths -----------------------------------------------------------------------------

_DRIVE = re.compile(r"^([A-Za-z]):(?:/|$)")
_GIT_BASH = re.compile(r"^/(?:mnt/)?([A-Za-z])(?:/|$)")


def normalize_path(raw: str | None) -> str | None:
    """Canonical absolute form of `raw`, or None when it is not an absolute path."""
    if not isinstance(raw, str):
        return None
    text = raw.strip().strip("\"'`").strip()
    if not text:
        return None
    text = text.replace("\\", "/")
    drive = None
    match = _DRIVE.match(text)
    if match:
        drive = match.group(1).upper()
        rest = text[2:]
    else:
        match = _GIT_BASH.match(text)
        if match:
            drive = match.group(1).upper()
            rest = text[match.end(0) - (1 if match.group(0).endswith("/") else 0):]
        elif text.startswith("/"):
            rest = text
        else:
            return None
    rest = posixpath.normpath("/" + rest.lstrip("/"))
    if rest.startswith("//"):
        rest = "/" + rest.lstrip("/")
    if drive:
        return f"{drive}:{rest}" if rest != "/" else f"{drive}:/"
    return rest


def path_key(normalized: str) -> str:
    """Comparison key of a normalised path (drive paths compare case-insensitively)."""
    if _DRIVE.match(normalized):
        return normalized.casefold()
    return normalized


def path_within(child: str | None, root: str | None) -> bool:
    """True when normalised `child` is `root` or lies below it (component boundary)."""
    if not child or not root:
        return False
    c, r = path_key(child), path_key(root)
    if c == r:
        return True
    prefix = r if r.endswith("/") else r + "/"
    return c.startswith(prefix)


# Absolute paths inside free text. Windows drive paths (either slash), and POSIX paths of
# at least two components (so a "/help" command or a lone "/" is not a path). A path stops
# at whitespace, quotes, brackets, and CJK text or punctuation.
_STOP = "\\s\"'`<>|*?,;()\\[\\]{}\u3000-\u303f\u3400-\u9fff\uff00-\uffef"
_WIN_PATH = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]:[\\/][^:" + _STOP + r"]*")
_POSIX_PATH = re.compile(r"(?<![A-Za-z0-9_.:/\\~-])/[^:/" + _STOP + r"]+(?:/[^:/" + _STOP + r"]+)+/?")
_TRAILING = ".,:;!?)]}>'\"。，、；：！？）"


def extract_paths(text: str | None) -> list[str]:
    """Absolute paths mentioned in `text`, normalised, in order of appearance."""
    if not text:
        return []
    found: list[tuple[int, str]] = []
    for pattern in (_WIN_PATH, _POSIX_PATH):
        for match in pattern.finditer(text):
            raw = match.group(0).rstrip(_TRAILING)
            normalized = normalize_path(raw)
            if normalized and normalized not in ("/",) and not re.fullmatch(r"[A-Z]:/", normalized):
                found.append((match.start(), normalized))
    found.sort()
    return [path for _, path in found]


def nul_fields(value: object, where: str) -> list[str]:
    """Dotted paths of the strings in `value` (recursively; object keys too) that hold a NUL
    character: PostgreSQL text and jsonb cannot store one, so such input is refused up
    front, naming the field, on every database alike."""
    found: list[str] = []
    if isinstance(value, str):
        if "\x00" in value:
            found.append(where)
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and "\x00" in key:
                found.append(where)
            else:
                found.extend(nul_fields(item, f"{where}.{key}"))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found.extend(nul_fields(item, f"{where}.{index}"))
    return found


def refuse_nul(fields: dict[str, object]) -> None:
    """Raise invalid_params listing every field of `fields` ({name: value}) holding NUL."""
    from apps.tools.errors import InvalidParams

    bad = [path for name, value in fields.items() for path in nul_fields(value, name)]
    if bad:
        details = [{"field": path, "message": "must not contain NUL characters"} for path in bad]
        raise InvalidParams("; ".join(f"{d['field']}: {d['message']}" for d in details[:5]), details=details)


# The call context (X-Memory-Session / -Session-Id / -Cwd or `_context`) is stored with
# records and rules loads; it may be as long as what the L0 ingest accepts, no longer.
CONTEXT_LIMITS = {"sessionKey": 512, "sessionId": 512, "cwd": 4096}


def refuse_bad_context(*, session_key: str = "", session_id: str = "", cwd: str = "") -> None:
    """invalid_params for a call context holding NUL or longer than the L0 limits."""
    from apps.tools.errors import InvalidParams

    values = {"sessionKey": session_key, "sessionId": session_id, "cwd": cwd}
    refuse_nul({f"_context.{name}": value for name, value in values.items()})
    details = [
        {"field": f"_context.{name}", "message": f"is longer than {CONTEXT_LIMITS[name]} characters"}
        for name, value in values.items()
        if value and len(value) > CONTEXT_LIMITS[name]
    ]
    if details:
        raise InvalidParams("; ".join(f"{d['field']}: {d['message']}" for d in details), details=details)


MAX_METADATA_DEPTH = 32


def nesting_depth(value: object) -> int:
    """How deeply lists and objects nest in `value` (a scalar is 0). Iterative, so a
    pathological input cannot exhaust the interpreter's stack."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = list(item.values())
        elif isinstance(item, (list, tuple)):
            children = list(item)
        else:
            deepest = max(deepest, depth)
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1) for child in children)
    return deepest
