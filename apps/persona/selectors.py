"""Read-only queries over `USER.md` versions and the `USER-temp.md` proposal, for the
dashboard's review. Which proposal entry is an addition, an update or a deletion is
decided by the persona services' own rule (`_changes_of`), the one the merge applies."""

from __future__ import annotations

from typing import Any

from apps.accounts.config import profile_setting
from apps.accounts.models import Profile
from apps.persona import document
from apps.persona.models import PersonaProposal, PersonaVersion
from apps.persona.services import _changes_of

_KIND_NAMES = {"add": "added", "update": "updated", "delete": "deleted"}


def live_version(profile: Profile) -> PersonaVersion | None:
    return PersonaVersion.objects.filter(profile=profile).order_by("-number").first()


def persona_summary(profile: Profile) -> dict[str, Any]:
    live = live_version(profile)
    proposal = PersonaProposal.objects.filter(profile=profile).first()
    live_entries = list(live.entries) if live else []
    return {
        "live_entries": len(live_entries),
        "live_chars": document.chars(live_entries),
        "version": live.number if live else None,
        "proposal_entries": len(proposal.entries) if proposal else 0,
        "has_proposal": bool(proposal and proposal.entries),
        "limit": int(profile_setting(profile, "l3.charLimit")),
    }


def entry_sources(entry: dict[str, Any]) -> list[str]:
    """The L1 record ids a proposal entry names as its sources (absent = none)."""
    raw = entry.get("sources") if isinstance(entry, dict) else None
    return [s for s in raw if isinstance(s, str) and s] if isinstance(raw, list) else []


def persona_review(profile: Profile) -> dict[str, Any]:
    """USER.md beside USER-temp.md, entry by entry: each proposal entry is `added`,
    `updated` or `unchanged`; a live entry no proposal entry claims is `deleted`."""
    live_v = live_version(profile)
    live = list(live_v.entries) if live_v else []
    proposal = PersonaProposal.objects.filter(profile=profile).first()
    entries: list[dict[str, Any]] = list(proposal.entries) if proposal else []
    changes = _changes_of(proposal) if proposal else []
    by_position = {c["position"]: c for c in changes if c["position"] is not None}
    rows: list[dict[str, Any]] = []
    for index, entry in enumerate(entries):
        change = by_position.get(index + 1)
        rows.append({"index": index, "kind": _KIND_NAMES[change["kind"]] if change else "unchanged",
                     "text": entry.get("text", ""), "origin": entry.get("origin"), "sources": entry_sources(entry)})
    for change in changes:
        if change["kind"] == "delete":
            rows.append({"index": None, "kind": "deleted", "text": change["before"], "origin": change["before"], "sources": []})
    proposed_texts = [e.get("text", "") for e in entries]
    return {
        "live": live,
        "live_version": live_v,
        "proposal": proposal,
        "rows": rows,
        "changes": sum(1 for r in rows if r["kind"] != "unchanged"),
        "live_chars": document.chars(live),
        "merged_chars": document.chars(proposed_texts) if proposal else document.chars(live),
        "limit": int(profile_setting(profile, "l3.charLimit")),
        "stale": bool(proposal and live_v and proposal.base_version not in (None, live_v.number)),
    }


def persona_versions(profile: Profile, *, limit: int = 30) -> list[PersonaVersion]:
    return list(PersonaVersion.objects.filter(profile=profile).order_by("-number")[:limit])


def persona_rejections(profile: Profile, *, limit: int = 30) -> list[dict[str, Any]]:
    """Proposal changes a person rejected, newest first: who, when, and the change (the
    persona services keep each as a `persona_reject_entry` audit event)."""
    from apps.accounts.models import AuditEvent

    events = AuditEvent.objects.filter(profile=profile, action="persona_reject_entry").order_by("-id")[:limit]
    out = []
    for event in events:
        change = (event.before or {}).get("change") if isinstance(event.before, dict) else None
        if isinstance(change, dict):
            out.append({"actor": event.actor, "at": event.created_at, "kind": _KIND_NAMES.get(change.get("kind"), change.get("kind")),
                        "before": change.get("before"), "after": change.get("after")})
    return out


def entry_proposers(profile: Profile, texts: list[str], *, scan: int = 500) -> dict[str, dict[str, Any]]:
    """For each proposal entry text, the last `l3_edit` that wrote it: actor (a job run is
    `job:l3_persona:<run>`), when, and the run id when the actor names one."""
    from apps.accounts.models import AuditEvent

    wanted = set(texts)
    found: dict[str, dict[str, Any]] = {}
    events = AuditEvent.objects.filter(profile=profile, tool="l3_edit", action__in=("add", "update")).order_by("-id")[:scan]
    for event in events:
        text = (event.after or {}).get("entry") if isinstance(event.after, dict) else None
        if text in wanted and text not in found:
            parts = event.actor.split(":")
            run = int(parts[2]) if len(parts) == 3 and parts[0] == "job" and parts[2].isdigit() else None
            found[text] = {"actor": event.actor, "at": event.created_at, "run": run}
    return found


def entries_citing(profile: Profile, record_ids: set[str]) -> list[dict[str, Any]]:
    """Proposal entries that name any of these records as a source, with whether the text
    is live in USER.md."""
    proposal = PersonaProposal.objects.filter(profile=profile).first()
    if proposal is None or not record_ids:
        return []
    live_v = live_version(profile)
    live = set(live_v.entries) if live_v else set()
    out = []
    for index, entry in enumerate(proposal.entries or []):
        sources = entry_sources(entry)
        if record_ids.intersection(sources):
            out.append({"index": index, "text": entry.get("text", ""), "sources": sources, "live": entry.get("text") in live})
    return out


def proposal_entry(profile: Profile, index: int) -> dict[str, Any] | None:
    proposal = PersonaProposal.objects.filter(profile=profile).first()
    entries = list(proposal.entries or []) if proposal else []
    if not 0 <= index < len(entries):
        return None
    entry = entries[index]
    live_v = live_version(profile)
    return {"index": index, "text": entry.get("text", ""), "origin": entry.get("origin"), "sources": entry_sources(entry),
            "live": entry.get("text") in (live_v.entries if live_v else [])}


def proposal_entry_texts(profile: Profile) -> list[str]:
    """The text of every entry of the `USER-temp.md` proposal ([] when there is none)."""
    proposal = PersonaProposal.objects.filter(profile=profile).first()
    return [str(e.get("text", "")) for e in (proposal.entries if proposal else []) or [] if isinstance(e, dict)]


def live_entry_texts(profile: Profile) -> list[str]:
    """The entries of the live `USER.md`."""
    live = live_version(profile)
    return list(live.entries) if live else []
