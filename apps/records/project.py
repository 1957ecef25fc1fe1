"""Project attribution (SPEC §3.2 "Project attribution", §3.4 `l1_project_get`).

Every path comparison goes through `apps.records.normalize` so drive letters, backslashes,
Git-Bash and WSL forms are one path.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from apps.accounts.models import Profile
from apps.accounts.services import audit_record
from apps.records.normalize import extract_paths, normalize_path, path_key, path_within

FLAG_MIN_MENTIONS = 2
FLAG_MIN_CONFIDENCE = 0.6
# Preference when two roots have the same number of mentions.
_SOURCE_RANK = {"known-projects": 0, "cwd": 1, "path-majority": 2}


def known_projects(profile: Profile) -> list[str]:
    out: list[str] = []
    for raw in profile.known_projects or []:
        normalized = normalize_path(raw)
        if normalized and all(path_key(normalized) != path_key(p) for p in out):
            out.append(normalized)
    return out


def known_project_root(profile: Profile, path: str, roots: list[str] | None = None) -> str | None:
    """The longest known project containing `path` (normalised), if any."""
    best = None
    for root in roots if roots is not None else known_projects(profile):
        if path_within(path, root) and (best is None or len(root) > len(best)):
            best = root
    return best


def known_project_add(*, profile: Profile, root: str, actor: str, tool: str) -> bool:
    """Add a confirmed project root (inside the caller's write transaction)."""
    normalized = normalize_path(root)
    if not normalized:
        return False
    fresh = Profile.objects.filter(pk=profile.pk).values_list("known_projects", flat=True).first() or []
    if any(path_key(normalize_path(p) or p) == path_key(normalized) for p in fresh):
        return False
    updated = [*fresh, normalized]
    Profile.objects.filter(pk=profile.pk).update(known_projects=updated)
    profile.known_projects = updated
    audit_record(
        profile=profile, actor=actor, tool=tool, action="known_project_add", target_type="profile",
        target_id=profile.slug, before={"known_projects": list(fresh)}, after={"known_projects": updated},
    )
    return True


def _heuristic_root(path: str) -> str:
    """A project-like root for a path outside known projects and the workbench: the first
    three components (`/home/u/proj`, `C:/dev/proj`), or the path's directory if shorter."""
    drive = path[:2] if len(path) > 1 and path[1] == ":" else ""
    parts = [p for p in path[len(drive):].split("/") if p]
    if parts and "." in parts[-1]:
        parts = parts[:-1]  # a file name is not a root
    depth = 2 if drive else 3
    kept = parts[:depth]
    return (drive + "/" + "/".join(kept)) if kept else (drive + "/")


def project_candidate(*, profile: Profile, rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Decide a session's candidate project from its L0 rows (SPEC §3.4)."""
    roots_known = known_projects(profile)
    mentions: list[tuple[str, str]] = []  # (root, source)
    seen_cwds: set[str] = set()
    row_count = 0
    for row in rows:
        row_count += 1
        cwd = normalize_path(row.get("cwd") or "")
        paths = extract_paths(row.get("content") if isinstance(row.get("content"), str) else "")
        if cwd and path_key(cwd) not in seen_cwds:
            seen_cwds.add(path_key(cwd))
            paths.append(cwd)  # each distinct workbench counts once
        for path in paths:
            known = known_project_root(profile, path, roots_known)
            if known:
                mentions.append((known, "known-projects"))
            elif cwd and path_within(path, cwd):
                mentions.append((cwd, "cwd"))
            else:
                mentions.append((_heuristic_root(path), "path-majority"))
    if row_count == 0:
        return {"project": "", "flag": False, "confidence": 0.0, "decidedBy": "none",
                "note": "no L0 rows for this session in this profile"}
    if not mentions:
        return {"project": "", "flag": False, "confidence": 0.0, "decidedBy": "none",
                "note": "the session's rows mention no absolute path"}
    counts: Counter[str] = Counter()
    sources: dict[str, str] = {}
    display: dict[str, str] = {}
    for root, source in mentions:
        key = path_key(root)
        counts[key] += 1
        display.setdefault(key, root)
        if key not in sources or _SOURCE_RANK[source] < _SOURCE_RANK[sources[key]]:
            sources[key] = source
    winner = min(counts, key=lambda k: (-counts[k], _SOURCE_RANK[sources[k]], -len(k), k))
    total = len(mentions)
    confidence = round(counts[winner] / total, 4)
    flag = counts[winner] >= FLAG_MIN_MENTIONS and confidence >= FLAG_MIN_CONFIDENCE
    result: dict[str, Any] = {
        "project": display[winner], "flag": flag, "confidence": confidence, "decidedBy": sources[winner],
    }
    if not flag:
        result["note"] = (
            f"{counts[winner]} of {total} path mentions fall under {display[winner]}; a usable candidate needs "
            f"at least {FLAG_MIN_MENTIONS} mentions and confidence {FLAG_MIN_CONFIDENCE}"
        )
    return result


def session_project(*, profile: Profile, session_key: str) -> dict[str, Any]:
    from apps.conversations.services import l0_session_rows

    if not session_key:
        return {"project": "", "flag": False, "confidence": 0.0, "decidedBy": "none", "note": "no sessionKey given"}
    return project_candidate(profile=profile, rows=l0_session_rows(profile=profile, session_key=session_key))


def _mentions_in(row: dict[str, Any]) -> list[str]:
    content = row.get("content") if isinstance(row.get("content"), str) else ""
    out = extract_paths(content)
    cwd = normalize_path(row.get("cwd") or "")
    if cwd:
        out.append(cwd)
    return out


def evidence_problem(
    *, project: str, evidence: Any, source_ids: list[str], rows_by_ref: dict[str, dict[str, Any]]
) -> str | None:
    """Why explicit project evidence fails, or None when it holds (SPEC §3.2)."""
    root = normalize_path(project)
    if not root:
        return f"metadata.project {project!r} is not an absolute path"
    if not isinstance(evidence, list) or not evidence:
        return "metadata.project needs metadata.projectEvidence: [{message_id, path}]"
    for n, item in enumerate(evidence):
        if not isinstance(item, dict) or set(item) != {"message_id", "path"} or not all(isinstance(item[k], str) for k in item):
            return f"projectEvidence[{n}] must be {{message_id, path}} strings"
        message_id, raw_path = item["message_id"], item["path"]
        if message_id not in source_ids:
            return f"projectEvidence[{n}].message_id {message_id!r} is not in this record's source_message_ids"
        row = rows_by_ref.get(message_id)
        if row is None:
            return f"projectEvidence[{n}].message_id {message_id!r} was not found in L0"
        path = normalize_path(raw_path)
        if not path:
            return f"projectEvidence[{n}].path {raw_path!r} is not an absolute path"
        content = row["content"] if isinstance(row.get("content"), str) else ""
        literal = raw_path.strip() and (raw_path.strip() in content or raw_path.strip() in (row.get("cwd") or ""))
        if not literal and not any(path_within(m, path) for m in _mentions_in(row)):
            return f"projectEvidence[{n}].path {raw_path!r} does not occur in message {message_id!r} (content or cwd)"
        if not path_within(path, root):
            return f"projectEvidence[{n}].path {raw_path!r} is not inside the candidate project {root}"
    return None


def known_projects_set(*, profile: Profile, roots: list[str], actor: str, tool: str = "dashboard") -> list[str]:
    """Replace the profile's known projects (the dashboard's editor). Every root must be an
    absolute path; they are stored normalised, de-duplicated, in the given order."""
    from apps.accounts.locks import profile_write_lock
    from apps.tools.errors import invalid_field

    cleaned: list[str] = []
    for n, raw in enumerate(roots):
        normalized = normalize_path(raw)
        if not normalized:
            raise invalid_field(f"roots.{n}", f"{raw!r} is not an absolute path")
        if all(path_key(normalized) != path_key(p) for p in cleaned):
            cleaned.append(normalized)
    with profile_write_lock(profile):
        before = Profile.objects.filter(pk=profile.pk).values_list("known_projects", flat=True).first() or []
        Profile.objects.filter(pk=profile.pk).update(known_projects=cleaned)
        profile.known_projects = cleaned
        audit_record(
            profile=profile, actor=actor, tool=tool, action="known_projects_set", target_type="profile",
            target_id=profile.slug, before={"known_projects": list(before)}, after={"known_projects": cleaned},
        )
    return cleaned
