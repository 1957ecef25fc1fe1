"""L3 in and out of the SPEC §7 layout: `USER.md`, `USER-temp.md`, and (for a lossless
restore) every `USER.md` version and the proposal with its entry origins and sources."""

from __future__ import annotations

from typing import Any

from apps.accounts.models import Profile
from apps.accounts.services import audit_record
from apps.persona import document
from apps.persona.models import PersonaProposal, PersonaVersion
from apps.persona.services import (
    _mirror_on_commit,
    persona_import,
    persona_live_entries,
)
from apps.scenes.blocks import iso, parse_iso


def persona_export(*, profile: Profile) -> dict[str, Any]:
    """{versions: [...oldest first], proposal: {...} | None}."""
    versions = [
        {"number": v.number, "entries": list(v.entries), "action": v.action, "actor": v.actor, "note": v.note,
         "createdAt": iso(v.created_at)}
        for v in PersonaVersion.objects.filter(profile=profile).order_by("number")
    ]
    row = PersonaProposal.objects.filter(profile=profile).first()
    proposal = None
    if row is not None:
        proposal = {"entries": list(row.entries or []), "base": list(row.base or []), "baseVersion": row.base_version,
                    "runOpen": row.run_open, "runStartedAt": iso(row.run_started_at), "runs": row.runs}
    return {"versions": versions, "proposal": proposal}


def persona_version_problem(version: Any) -> str | None:
    if not isinstance(version, dict):
        return "a version is a JSON object"
    number = version.get("number")
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        return f"number must be a positive integer, got {number!r}"
    entries = version.get("entries")
    if not isinstance(entries, list):
        return f"version {number}: entries must be a list"
    for entry in entries:
        problem = document.entry_problem(entry)
        if problem:
            return f"version {number}: {problem}"
    if version.get("createdAt") is not None and parse_iso(version.get("createdAt")) is None:
        return f"version {number}: createdAt must be an ISO 8601 time"
    return None


def persona_restore_all(
    *, profile: Profile, actor: str, versions: list[dict[str, Any]] | None, proposal: dict[str, Any] | None,
    user_md: str | None, user_temp_md: str | None,
) -> dict[str, Any]:
    """Restore the persona inside the caller's transaction. A profile without any version
    gets the exported versions back with their numbers and times, and the proposal as it
    was; otherwise (or without a history) `USER.md` is imported as a new version unless it
    is already the live text (so a re-run changes nothing)."""
    has_history = PersonaVersion.objects.filter(profile=profile).exists()
    if versions and not has_history:
        created = []
        for v in sorted(versions, key=lambda v: v["number"]):
            created.append((PersonaVersion.objects.create(
                profile=profile, number=v["number"], entries=list(v["entries"]), action=str(v.get("action") or "import")[:32],
                actor=str(v.get("actor") or actor)[:200], note=v.get("note"),
            ), v))
        for row, v in created:
            if parse_iso(v.get("createdAt")):
                PersonaVersion.objects.filter(pk=row.pk).update(created_at=parse_iso(v.get("createdAt")))
        if proposal is not None:
            PersonaProposal.objects.update_or_create(profile=profile, defaults={
                "entries": list(proposal.get("entries") or []), "base": list(proposal.get("base") or []),
                "base_version": proposal.get("baseVersion"), "run_open": bool(proposal.get("runOpen", False)),
                "run_started_at": parse_iso(proposal.get("runStartedAt")), "runs": int(proposal.get("runs") or 0),
            })
        audit_record(profile=profile, actor=actor, tool="import", action="persona_import", target_type="persona", target_id="USER.md",
                     before=None, after={"versions": len(created)})
        _mirror_on_commit(profile)
        return {"versions": len(created), "skipped": 0}
    if user_md is None:
        return {"versions": 0, "skipped": 0}
    if has_history and document.parse(user_md) == persona_live_entries(profile=profile):
        return {"versions": 0, "skipped": 1}
    persona_import(profile=profile, actor=actor, user_md=user_md, user_temp_md=user_temp_md)
    return {"versions": 1, "skipped": 0}
