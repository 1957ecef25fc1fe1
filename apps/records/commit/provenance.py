"""`l1_commit` phase 2: provenance and project attribution from the L0 rows (append-only
files, read outside the write lock)."""

from __future__ import annotations

from typing import Any

from apps.accounts.models import Profile
from apps.records.commit.validation import SERVER_METADATA, SOURCE_SUBAGENT, Item
from apps.records.models import SCOPES
from apps.records.normalize import normalize_path, path_key
from apps.records.project import evidence_problem, known_projects, project_candidate
from apps.records.writes import epoch_ms_to_iso


def resolve_provenance(profile: Profile, items: list[Item], source: str, ctx_session: str) -> None:
    """Find each record's L0 rows; subagent records without them are dropped."""
    from apps.conversations.services import l0_lookup_messages

    refs = sorted({ref for it in items if not it.tombstone for ref in (it.raw.source_message_ids or [])})
    found = l0_lookup_messages(profile=profile, refs=refs) if refs else {}
    for item in items:
        if item.tombstone:
            continue
        ids = list(dict.fromkeys(item.raw.source_message_ids or []))
        wanted_session = item.raw.sessionKey if source == SOURCE_SUBAGENT else ctx_session
        if not ids:
            if source == SOURCE_SUBAGENT:
                item.drop, item.drop_detail = "provenanceMissing", {"message": "source_message_ids is required in subagent mode"}
            continue
        sessions: list[str] = []
        for row in found.get(ids[0], []):
            key = row.get("sessionKey") or ""
            if key not in sessions and (not wanted_session or key == wanted_session):
                sessions.append(key)
        chosen = None
        for key in sessions:
            if all(any((r.get("sessionKey") or "") == key for r in found.get(ref, [])) for ref in ids):
                chosen = key
                break
        if chosen is None:
            if source == SOURCE_SUBAGENT:
                missing = [ref for ref in ids if not found.get(ref)]
                message = (
                    f"not found in L0: {', '.join(missing[:20])}" + (f" and {len(missing) - 20} more" if len(missing) > 20 else "") if missing
                    else "the references do not all belong to one session" + (f" ({wanted_session})" if wanted_session else "")
                )
                item.drop, item.drop_detail = "provenanceMissing", {"message": message}
            continue
        rows = {ref: next(r for r in found[ref] if (r.get("sessionKey") or "") == chosen) for ref in ids}
        item.rows = rows
        if source == SOURCE_SUBAGENT:
            item.session_key = chosen
            item.session_id = next((r.get("sessionId") for r in rows.values() if r.get("sessionId")), "") or ""
            item.cwd = next((r.get("cwd") for r in rows.values() if r.get("cwd")), "") or (item.raw.cwd or "")
            item.timestamps = sorted({t for t in (epoch_ms_to_iso(r.get("timestamp")) for r in rows.values()) if t})


def attribute_project(
    profile: Profile, item: Item, session_candidates: dict[str, dict[str, Any]], warnings: list[dict[str, Any]]
) -> tuple[dict[str, Any], str | None]:
    """The record's metadata with scope/project decided; and a confirmed project root."""
    meta = {k: v for k, v in (item.raw.metadata or {}).items() if k not in SERVER_METADATA}
    scope = meta.get("scope")
    project = meta.get("project")
    evidence = meta.pop("projectEvidence", None)

    def warn(message: str) -> None:
        warnings.append({"index": item.index, "message": message})

    if scope not in SCOPES:
        if scope is not None:
            warn(f"metadata.scope {scope!r} is not one of self|global|unknown: stored as unknown")
        scope = "unknown"
    confirmed = None
    if scope == "self":
        blank = project is None or (isinstance(project, str) and not project.strip())
        explicit = evidence is not None or not blank
        if explicit:
            problem = (
                f"metadata.project must be a string, got {type(project).__name__}" if not isinstance(project, str)
                else "metadata.projectEvidence was given without metadata.project" if not project.strip()
                else evidence_problem(project=project, evidence=evidence, source_ids=list(item.rows), rows_by_ref=item.rows)
            )
            if problem:
                warn(f"project evidence rejected, stored as unknown: {problem}")
                scope, project = "unknown", ""
            else:
                project = _project_spelling(profile, str(project), evidence)  # a str: evidence_problem refuses others
                meta["projectEvidence"] = evidence
                meta["projectSource"] = "l0-evidence"
                confirmed = project
        else:
            candidate = session_candidates.get(item.session_key) if item.session_key else None
            if candidate and candidate.get("flag"):
                project = candidate["project"]
                meta["projectSource"] = "session"
            else:
                warn("scope self without a usable project (no evidence and no flagged session candidate): stored as unknown")
                scope, project = "unknown", ""
    else:
        if (isinstance(project, str) and project.strip()) or evidence:
            warn(f"scope {scope} always stores an empty project; metadata.project/projectEvidence were cleared")
        project = ""
    meta["scope"] = scope
    meta["project"] = project
    return meta, confirmed


def _project_spelling(profile: Profile, project: str, evidence: list[dict[str, str]]) -> str:
    """The verified root as a known project spells it, else as the L0 evidence spells it
    (drive paths compare case-insensitively, so `c:/dev/b` may be `C:/dev/B` in L0)."""
    root = normalize_path(project) or project
    for known in known_projects(profile):
        if path_key(known) == path_key(root):
            return known
    for item in evidence:
        path = normalize_path(item["path"]) or ""
        if path_key(path[: len(root)]) == path_key(root):
            return path[: len(root)]
    return root


def session_candidates(profile: Profile, items: list[Item]) -> dict[str, dict[str, Any]]:
    from apps.conversations.services import l0_session_rows

    needed = set()
    for item in items:
        if item.tombstone or item.drop or not item.session_key:
            continue
        meta = item.raw.metadata or {}
        if meta.get("scope") == "self" and meta.get("project") in (None, "") and meta.get("projectEvidence") is None:
            needed.add(item.session_key)
    return {
        key: project_candidate(profile=profile, rows=l0_session_rows(profile=profile, session_key=key))
        for key in sorted(needed)
    }
