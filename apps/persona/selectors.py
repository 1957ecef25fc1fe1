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
