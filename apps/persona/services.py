"""L3 persona services (SPEC §1.5, §3.12, §3.13) and the human merge.

* `persona_live_text` — what every agent turn gets injected.
* `persona_edit` / `persona_cursor_commit` — the persona job's `l3_edit` / `l3_commit`.
* `persona_changes`, `persona_merge_all`, `persona_merge_change`, `persona_reject_change`,
  `persona_restore_version`, `persona_versions` — the dashboard's review and merge. Only
  these change `USER.md`, and each keeps the previous version.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from apps.accounts.config import profile_setting
from apps.accounts.locks import profile_write_lock
from apps.accounts.models import Profile
from apps.accounts.paths import PathOutsideProfile, confine, profile_dir, profile_subdir
from apps.accounts.services import audit_record
from apps.conversations.cursors import cursor_get, cursor_set
from apps.persona import document
from apps.persona.models import PersonaProposal, PersonaVersion
from apps.scenes.blocks import iso, parse_iso
from apps.scenes.models import SceneBlock
from apps.tools.errors import Conflict, NotFound, invalid_field

logger = logging.getLogger(__name__)

CURSOR_KIND = "l3"
EDIT_ACTIONS = ("add", "update", "delete")


# ----------------------------------------------------------------------- live text


def _live_version(profile: Profile) -> PersonaVersion | None:
    return PersonaVersion.objects.filter(profile=profile).order_by("-number").first()


def persona_live_entries(*, profile: Profile) -> list[str]:
    version = _live_version(profile)
    return list(version.entries) if version else []


def persona_live_text(*, profile: Profile) -> str:
    """The live `USER.md` text (entries separated by `§` lines); '' when there is none."""
    return document.render(persona_live_entries(profile=profile))


def persona_usage(*, profile: Profile, entries: list[str]) -> dict[str, int]:
    return {"chars": document.chars(entries), "limit": int(profile_setting(profile, "l3.charLimit"))}


# ------------------------------------------------------------------------ proposal


def _proposal_for_update(profile: Profile) -> PersonaProposal:
    """The profile's proposal row, or a fresh unsaved one (writers save it)."""
    return PersonaProposal.objects.filter(profile=profile).first() or PersonaProposal(profile=profile)


def _rebase(proposal: PersonaProposal, live: list[str], live_number: int) -> None:
    """Seed the proposal from the live document, keeping what it already held.

    A live entry the proposal deleted stays deleted, an entry it changed stays changed,
    its additions follow the live entries; a live entry added since the last seed is
    taken in. A proposal entry whose text is now live (the human accepted it) collapses
    into that live entry.
    """
    if proposal.base_version == live_number:
        return
    old_base = list(proposal.base or [])
    entries = [dict(e) for e in (proposal.entries or [])]
    by_origin = {e["origin"]: e for e in entries if e.get("origin") is not None}
    deleted = {b for b in old_base if b not in by_origin}
    rebased: list[dict[str, Any]] = []
    for text in live:
        if text in by_origin:
            rebased.append({"text": by_origin[text]["text"], "origin": text, "sources": list(by_origin[text].get("sources") or [])})
        elif text in deleted:
            continue
        else:
            rebased.append({"text": text, "origin": text})
    present = {e["text"] for e in rebased}
    live_set = set(live)
    for entry in entries:
        origin = entry.get("origin")
        if origin is not None and origin in live_set:
            continue  # placed above
        if entry["text"] in present or entry["text"] in live_set:
            continue
        rebased.append({"text": entry["text"], "origin": None, "sources": list(entry.get("sources") or [])})
        present.add(entry["text"])
    proposal.entries = rebased
    proposal.base = list(live)
    proposal.base_version = live_number


def _current(profile: Profile) -> tuple[PersonaProposal, list[str], int]:
    """The proposal rebased on the live document (not saved)."""
    version = _live_version(profile)
    live = list(version.entries) if version else []
    number = version.number if version else 0
    proposal = _proposal_for_update(profile)
    _rebase(proposal, live, number)
    return proposal, live, number


def persona_proposal_entries(*, profile: Profile) -> list[str]:
    """The `USER-temp.md` entries as they stand (what a merge of the whole would give)."""
    proposal = PersonaProposal.objects.filter(profile=profile).first()
    if proposal is None:
        return persona_live_entries(profile=profile)
    version = _live_version(profile)
    _rebase(proposal, list(version.entries) if version else [], version.number if version else 0)
    return [e["text"] for e in proposal.entries]


def persona_proposal_text(*, profile: Profile) -> str:
    return document.render(persona_proposal_entries(profile=profile))


def _check_entry(text: Any, field_name: str) -> str:
    if not isinstance(text, str):
        raise invalid_field(field_name, "must be a string")
    cleaned = text.strip()
    problem = document.entry_problem(cleaned if cleaned else text)
    if problem:
        raise invalid_field(field_name, problem)
    return cleaned



def _resolve_target(texts: list[str], target: Any) -> int:
    if not isinstance(target, str) or not target.strip():
        raise invalid_field("target", "update and delete need a target: a fragment of exactly one entry")
    if "\n" in target:
        raise invalid_field("target", "must be one line")
    fragment = target.strip()
    matches = [i for i, text in enumerate(texts) if fragment in text]
    if len(matches) == 1:
        return matches[0]
    # An entry's whole text names it, even when it is also part of a longer entry
    # ("likes tea" / "likes tea and coffee"); otherwise such an entry could never be
    # targeted. Entries are unique, so a whole-text match is a single entry.
    whole = [i for i in matches if texts[i] == fragment]
    if len(whole) == 1:
        return whole[0]
    if not matches:
        raise Conflict(
            f"target {fragment!r} matches no entry of USER-temp.md; pick a fragment of one of the candidates",
            details={"target": fragment, "matches": 0, "candidates": list(texts)},
        )
    raise Conflict(
        f"target {fragment!r} matches {len(matches)} entries; pass a longer fragment that matches exactly one",
        details={"target": fragment, "matches": len(matches), "candidates": [texts[i] for i in matches]},
    )


MAX_SOURCES = 20


def _check_sources(profile: Profile, sources: Any) -> list[str]:
    """The L1 record ids an entry names as its sources: existing records of this profile."""
    from apps.records.selectors import record_ids_existing

    if not isinstance(sources, list) or not all(isinstance(s, str) and s.strip() for s in sources):
        raise invalid_field("sources", "must be a list of L1 record ids")
    ids = list(dict.fromkeys(s.strip() for s in sources))
    if len(ids) > MAX_SOURCES:
        raise invalid_field("sources", f"at most {MAX_SOURCES} record ids")
    unknown = [i for i in ids if i not in record_ids_existing(profile=profile, ids=ids)]
    if unknown:
        raise invalid_field("sources", f"no L1 record {', '.join(map(repr, unknown[:5]))} in this profile")
    return ids


def persona_edit(
    *, profile: Profile, actor: str, action: str, content: str | None = None, target: str | None = None,
    sources: list[str] | None = None,
) -> dict[str, Any]:
    """`l3_edit`: change exactly one entry of the proposal, within the budget (§3.12).
    An entry may name the L1 records it was drawn from (`sources`, SPEC §5)."""
    if action not in EDIT_ACTIONS:
        raise invalid_field("action", f"must be one of {', '.join(EDIT_ACTIONS)}")
    if sources is not None:
        if action == "delete":
            raise invalid_field("sources", "delete takes no sources")
        sources = _check_sources(profile, sources)
    if action in ("add", "update"):
        if content is None:
            raise invalid_field("content", f"{action} needs content: the single rule line")
        content = _check_entry(content, "content")
    elif content is not None:
        raise invalid_field("content", "delete takes no content")
    if action == "add" and target is not None:
        raise invalid_field("target", "add takes no target")
    limit = int(profile_setting(profile, "l3.charLimit"))
    with profile_write_lock(profile):
        proposal, _live, _number = _current(profile)
        entries = proposal.entries
        texts = [e["text"] for e in entries]
        chars_before = document.chars(texts)
        if action == "add":
            if content in texts:
                raise Conflict("USER-temp.md already holds this entry", details={"entry": content})
            entries.append({"text": content, "origin": None, "sources": sources or []})
            index = len(entries) - 1
            before_text, after_text = None, content
        else:
            index = _resolve_target(texts, target)
            before_text = entries[index]["text"]
            if action == "update":
                if content != before_text and content in texts:
                    raise Conflict("another entry of USER-temp.md already reads exactly this", details={"entry": content})
                kept = entries[index].get("sources") or []
                entries[index] = {"text": content, "origin": entries[index].get("origin"), "sources": sources if sources is not None else kept}
                after_text = content
            else:
                del entries[index]
                after_text = None
        new_texts = [e["text"] for e in entries]
        chars_after = document.chars(new_texts)
        if chars_after > limit and chars_after > chars_before:
            raise Conflict(
                f"USER.md after merging this proposal would have {chars_after} characters, over the limit of {limit}; "
                "delete or compress other entries first, then retry",
                details={"chars": chars_after, "limit": limit, "action": action},
            )
        now = timezone.now()
        if not proposal.run_open:
            proposal.run_open, proposal.run_started_at, proposal.runs = True, now, proposal.runs + 1
        proposal.entries = entries
        proposal.save()
        audit_record(
            profile=profile, actor=actor, tool="l3_edit", action=action, target_type="persona_entry", target_id=f"USER-temp.md#{index + 1}",
            before={"entry": before_text}, after={"entry": after_text},
            note={"position": index + 1, "run": proposal.runs, **({"sources": sources} if sources else {})},
        )
        _mirror_on_commit(profile)
    return {
        "success": True,
        "action": action,
        "position": index + 1,
        "entryCount": len(new_texts),
        "usage": {"chars": chars_after, "limit": limit},
    }


def persona_cursor_get(*, profile: Profile) -> dict[str, Any]:
    return cursor_get(profile=profile, kind=CURSOR_KIND)


def persona_cursor_commit(*, profile: Profile, actor: str, cursor: str) -> dict[str, Any]:
    """`l3_commit`: advance the L3 cursor and close the run. Never writes `USER.md`."""
    parsed = parse_iso(cursor)
    if parsed is None:
        raise invalid_field("cursor", "must be the ISO 8601 `updated` time of the newest scene block processed")
    value = iso(parsed)
    # The cursor selects the blocks the next run reads (meta.updated after it): one past
    # every block would make the next runs skip blocks written with an earlier `updated`.
    # A cursor that does not move forward is checked only for going backwards, below.
    stored = parse_iso(cursor_get(profile=profile, kind=CURSOR_KIND).get("updated"))
    newest_block = SceneBlock.objects.filter(profile=profile).aggregate(m=Max("meta_updated"))["m"]
    if stored is not None and parsed <= stored:
        pass
    elif newest_block is not None and parsed > newest_block:
        raise invalid_field("cursor", f"no scene block was updated at {value} or later (newest: {iso(newest_block)}); "
                                 "pass the newest meta.updated among the blocks processed")
    elif newest_block is None and parsed > timezone.now() + timedelta(minutes=5):
        raise invalid_field("cursor", "lies in the future")
    with profile_write_lock(profile):
        previous = cursor_get(profile=profile, kind=CURSOR_KIND)
        previous_time = parse_iso(previous.get("updated"))
        if previous_time is not None and parsed < previous_time:
            raise Conflict(
                f"cursor {value} is older than the stored L3 cursor {iso(previous_time)}",
                details={"stored": iso(previous_time), "given": value},
            )
        cursor_set(profile=profile, kind=CURSOR_KIND, value={"updated": value})
        proposal = PersonaProposal.objects.filter(profile=profile).first()
        edited = bool(proposal and proposal.run_open)
        if proposal is not None and proposal.run_open:
            proposal.run_open = False
            proposal.save(update_fields=["run_open", "updated_at"])
        audit_record(
            profile=profile, actor=actor, tool="l3_commit", action="cursor", target_type="cursor", target_id=CURSOR_KIND,
            before=previous or None, after={"updated": value}, note={"runEdited": edited},
        )
        _mirror_on_commit(profile)
    return {"success": True, "cursor": {"updated": value}, "previous": previous.get("updated"), "runEdited": edited}


# ------------------------------------------------------------------- human review


def _change_id(kind: str, before: str | None, after: str | None) -> str:
    digest = hashlib.sha256(f"{kind}\x00{before or ''}\x00{after or ''}".encode()).hexdigest()
    return digest[:12]


def _changes_of(proposal: PersonaProposal) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    claimed = set()
    for position, entry in enumerate(proposal.entries, start=1):
        origin = entry.get("origin")
        if origin is None:
            out.append({"id": _change_id("add", None, entry["text"]), "kind": "add", "before": None, "after": entry["text"], "position": position})
        else:
            claimed.add(origin)
            if entry["text"] != origin:
                out.append({"id": _change_id("update", origin, entry["text"]), "kind": "update", "before": origin, "after": entry["text"], "position": position})
    for text in proposal.base:
        if text not in claimed:
            out.append({"id": _change_id("delete", text, None), "kind": "delete", "before": text, "after": None, "position": None})
    return out


def persona_changes(*, profile: Profile) -> dict[str, Any]:
    """The proposal as a list of changes against `USER.md`, for review."""
    proposal, live, number = _current(profile)
    texts = [e["text"] for e in proposal.entries]
    return {
        "liveVersion": number,
        "live": live,
        "proposal": texts,
        "changes": _changes_of(proposal),
        "usage": persona_usage(profile=profile, entries=texts),
        "runOpen": proposal.run_open,
    }


def _new_version(*, profile: Profile, actor: str, entries: list[str], action: str, note: Any, previous: int) -> PersonaVersion:
    version = PersonaVersion.objects.create(profile=profile, number=previous + 1, entries=list(entries), action=action, actor=actor, note=note)
    return version


def _after_live_change(*, profile: Profile, proposal: PersonaProposal, live: list[str], number: int) -> None:
    """Point the proposal at the new live version without touching its pending changes."""
    proposal.base = list(live)
    proposal.base_version = number
    proposal.save()


def persona_merge_all(*, profile: Profile, actor: str) -> dict[str, Any]:
    """Accept the whole proposal: `USER.md` becomes `USER-temp.md`."""
    with profile_write_lock(profile):
        proposal, live, number = _current(profile)
        texts = [e["text"] for e in proposal.entries]
        changes = _changes_of(proposal)
        if not changes:
            raise Conflict("USER-temp.md holds no change against USER.md", details={"liveVersion": number})
        version = _new_version(profile=profile, actor=actor, entries=texts, action="merge", note={"changes": len(changes)}, previous=number)
        proposal.entries = [{"text": t, "origin": t} for t in texts]
        _after_live_change(profile=profile, proposal=proposal, live=texts, number=version.number)
        audit_record(profile=profile, actor=actor, tool="dashboard", action="persona_merge", target_type="persona", target_id="USER.md",
                     before={"version": number, "entries": live}, after={"version": version.number, "entries": texts}, note={"changes": changes})
        _mirror_on_commit(profile)
    return {"success": True, "version": version.number, "entries": texts, "usage": persona_usage(profile=profile, entries=texts)}


def _find_change(proposal: PersonaProposal, change_id: str) -> dict[str, Any]:
    for change in _changes_of(proposal):
        if change["id"] == change_id:
            return change
    raise NotFound(f"no pending change {change_id!r} in USER-temp.md (it may have been merged or changed)", details={"id": change_id})


def _insert_after_predecessor(proposal: PersonaProposal, live: list[str], text: str) -> list[str]:
    """Insert `text` into the live list after the live entry that precedes it in the proposal."""
    result = list(live)
    anchor = None
    for entry in proposal.entries:
        if entry["text"] == text and entry.get("origin") is None:
            break
        if entry.get("origin") in result:
            anchor = entry["origin"]
    index = result.index(anchor) + 1 if anchor is not None else 0
    # Live entries the proposal deletes stood between the anchor and the addition.
    claimed = {e.get("origin") for e in proposal.entries}
    while index < len(result) and result[index] not in claimed:
        index += 1
    result.insert(index, text)
    return result


def persona_merge_change(*, profile: Profile, actor: str, change_id: str, text: str | None = None) -> dict[str, Any]:
    """Accept one change of the proposal into `USER.md`, optionally edited first (`text`)."""
    with profile_write_lock(profile):
        proposal, live, number = _current(profile)
        change = _find_change(proposal, change_id)
        if text is not None:
            if change["kind"] == "delete":
                raise invalid_field("text", "a deletion has no text to edit")
            text = _check_entry(text, "text")
        accepted = text if text is not None else change["after"]
        if change["kind"] == "add":
            if accepted in live:
                raise Conflict("USER.md already holds this entry", details={"entry": accepted})
            new_live = _insert_after_predecessor(proposal, live, change["after"])
            new_live[new_live.index(change["after"])] = accepted
            for entry in proposal.entries:
                if entry.get("origin") is None and entry["text"] == change["after"]:
                    entry["text"], entry["origin"] = accepted, accepted
                    break
        elif change["kind"] == "update":
            if accepted != change["before"] and accepted in live:
                raise Conflict("USER.md already holds this entry", details={"entry": accepted})
            new_live = [accepted if t == change["before"] else t for t in live]
            for entry in proposal.entries:
                if entry.get("origin") == change["before"]:
                    entry["text"], entry["origin"] = accepted, accepted
                    break
        else:
            new_live = [t for t in live if t != change["before"]]
        version = _new_version(profile=profile, actor=actor, entries=new_live, action="merge_entry",
                               note={"change": change, "editedText": text}, previous=number)
        _after_live_change(profile=profile, proposal=proposal, live=new_live, number=version.number)
        audit_record(profile=profile, actor=actor, tool="dashboard", action="persona_merge_entry", target_type="persona", target_id="USER.md",
                     before={"version": number, "entry": change["before"]}, after={"version": version.number, "entry": accepted if change["kind"] != "delete" else None},
                     note={"change": change, "edited": text is not None})
        _mirror_on_commit(profile)
    return {"success": True, "version": version.number, "change": change, "entries": new_live, "usage": persona_usage(profile=profile, entries=new_live)}


def persona_reject_change(*, profile: Profile, actor: str, change_id: str) -> dict[str, Any]:
    """Drop one change from the proposal; `USER.md` is untouched."""
    with profile_write_lock(profile):
        proposal, _live, _number = _current(profile)
        change = _find_change(proposal, change_id)
        entries = proposal.entries
        if change["kind"] == "add":
            entries = [e for e in entries if not (e.get("origin") is None and e["text"] == change["after"])]
        elif change["kind"] == "update":
            for entry in entries:
                if entry.get("origin") == change["before"]:
                    entry["text"] = change["before"]
        else:
            # Put the live entry back where it sits among its live neighbours.
            base = proposal.base
            position = base.index(change["before"])
            earlier = set(base[:position])
            index = 0
            for i, entry in enumerate(entries):
                if entry.get("origin") in earlier:
                    index = i + 1
            entries.insert(index, {"text": change["before"], "origin": change["before"]})
        proposal.entries = entries
        proposal.save()
        audit_record(profile=profile, actor=actor, tool="dashboard", action="persona_reject_entry", target_type="persona", target_id="USER-temp.md",
                     before={"change": change}, after=None)
        _mirror_on_commit(profile)
    return {"success": True, "change": change, "proposal": [e["text"] for e in entries]}


_KIND_ALIASES = {"add": "add", "added": "add", "update": "update", "updated": "update", "delete": "delete", "deleted": "delete"}


def persona_merge_entry(
    *, profile: Profile, actor: str, decision: str, kind: str, index: int | None = None, text: str = ""
) -> dict[str, Any]:
    """One review decision on one proposal entry, addressed the way the review page shows it:
    an added/updated entry by its 0-based index in `USER-temp.md`, a deleted entry by its text.
    `decision`: accept, reject, or edit (accept with `text` as the entry)."""
    if decision not in ("accept", "reject", "edit"):
        raise invalid_field("decision", "must be accept, reject or edit")
    change_kind = _KIND_ALIASES.get(kind)
    if change_kind is None:
        raise invalid_field("kind", "must be added, updated or deleted")
    proposal = PersonaProposal.objects.filter(profile=profile).first()
    if change_kind == "delete":
        wanted_before, wanted_after = (text or "").strip(), None
    else:
        entries = proposal.entries if proposal else []
        if index is None or not 0 <= index < len(entries):
            raise NotFound(f"no entry {index} in USER-temp.md", details={"index": index})
        wanted_before, wanted_after = entries[index].get("origin"), entries[index]["text"]
    pending = persona_changes(profile=profile)["changes"]
    match = next((c for c in pending if c["kind"] == change_kind and c["after"] == wanted_after
                  and (change_kind == "add" or c["before"] == wanted_before)), None)
    if match is None:
        raise NotFound("that change is no longer pending in USER-temp.md; reload the review", details={"kind": kind, "index": index})
    if decision == "reject":
        return persona_reject_change(profile=profile, actor=actor, change_id=match["id"])
    edited = text if decision == "edit" else None
    return persona_merge_change(profile=profile, actor=actor, change_id=match["id"], text=edited)


def persona_restore(*, profile: Profile, actor: str, number: int) -> dict[str, Any]:
    """Alias of `persona_restore_version` (the dashboard's name)."""
    return persona_restore_version(profile=profile, actor=actor, number=number)


def persona_versions(*, profile: Profile) -> list[dict[str, Any]]:
    """Every `USER.md` version, newest first (the first is live)."""
    return [
        {"number": v.number, "action": v.action, "actor": v.actor, "at": iso(v.created_at), "entries": list(v.entries),
         "chars": document.chars(list(v.entries)), "note": v.note}
        for v in PersonaVersion.objects.filter(profile=profile).order_by("-number")
    ]


def persona_restore_version(*, profile: Profile, actor: str, number: int) -> dict[str, Any]:
    """Make an earlier `USER.md` version live again (as a new version; nothing is lost)."""
    with profile_write_lock(profile):
        old = PersonaVersion.objects.filter(profile=profile, number=number).first()
        if old is None:
            raise NotFound(f"no USER.md version {number}", details={"number": number})
        proposal, live, current = _current(profile)
        if number == current:
            raise Conflict(f"version {number} is already live", details={"number": number})
        version = _new_version(profile=profile, actor=actor, entries=list(old.entries), action="restore",
                               note={"restoredFrom": number}, previous=current)
        # The pending proposal is re-seeded on the restored text, keeping its own changes.
        _rebase(proposal, list(old.entries), version.number)
        proposal.save()
        audit_record(profile=profile, actor=actor, tool="dashboard", action="persona_restore", target_type="persona", target_id="USER.md",
                     before={"version": current, "entries": live}, after={"version": version.number, "entries": list(old.entries)},
                     note={"restoredFrom": number})
        _mirror_on_commit(profile)
    return {"success": True, "version": version.number, "restoredFrom": number, "entries": list(old.entries)}


def persona_import(*, profile: Profile, actor: str, user_md: str, user_temp_md: str | None = None) -> dict[str, Any]:
    """Load `USER.md` (and optionally `USER-temp.md`) texts, e.g. from an export folder.
    The imported `USER.md` becomes a new version; a proposal text becomes the proposal."""
    live = document.parse(user_md)
    with profile_write_lock(profile):
        proposal, current_live, current = _current(profile)
        version = _new_version(profile=profile, actor=actor, entries=live, action="import", note=None, previous=current)
        if user_temp_md is not None:
            temp = document.parse(user_temp_md)
            proposal.entries = [{"text": t, "origin": t if t in live else None} for t in temp]
            proposal.base = list(live)
            proposal.base_version = version.number
        else:
            _rebase(proposal, live, version.number)
        proposal.save()
        audit_record(profile=profile, actor=actor, tool="import", action="persona_import", target_type="persona", target_id="USER.md",
                     before={"version": current, "entries": current_live}, after={"version": version.number, "entries": live})
        _mirror_on_commit(profile)
    return {"success": True, "version": version.number, "entries": live}


# --------------------------------------------------------------------------- mirror


def _mirror_on_commit(profile: Profile) -> None:
    transaction.on_commit(lambda: persona_mirror_sync(profile=profile))


def persona_mirror_sync(*, profile: Profile) -> None:
    """Write `USER.md`, `USER-temp.md` and `l3/cursor.json` under the profile folder."""
    try:
        root = profile_dir(profile)
        root.mkdir(parents=True, exist_ok=True)
        files = {
            root / "USER.md": persona_live_text(profile=profile),
            root / "USER-temp.md": persona_proposal_text(profile=profile),
        }
        l3_dir = profile_subdir(profile, "l3")
        try:
            confine(root, "l3")  # a folder linked elsewhere (another profile's l3) is never written through
        except PathOutsideProfile:
            logger.error("profile %s: l3/ is a link outside the profile; l3/cursor.json is not mirrored", profile.slug)
        else:
            files[l3_dir / "cursor.json"] = json.dumps(persona_cursor_get(profile=profile) or {}) + "\n"
        for path, text in files.items():
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
    except Exception:  # the mirror is a convenience copy; the database is the truth
        logger.exception("could not mirror persona files of profile %s", profile.slug)
