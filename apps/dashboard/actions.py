"""The dashboard's changes, each one call of the owning app's service.

The services apply the same guards as the tools (a person is an admin only when granted
admin on the profile, which is what `force` needs) and write the audit events and
history. Nothing here writes a model; refusals come back as {code, message, details}."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.http import HttpRequest

from apps.accounts.config import profile_setting
from apps.accounts.locks import ProfileLocked
from apps.accounts.models import Profile
from apps.dashboard.access import ProfileView, actor_for
from apps.dashboard.views.common import plain_refusal, refusal_from
from apps.persona import services as persona_services
from apps.records import services as record_services
from apps.records.models import L1Record
from apps.scenes import services as scene_services
from apps.tools.errors import ToolError


@dataclass
class Outcome:
    ok: bool
    message: str = ""
    refusal: dict[str, Any] = field(default_factory=dict)
    result: Any = None
    details: list[str] = field(default_factory=list)
    redirect_record_id: str | None = None


def fix_min_evidence(profile: Profile) -> int:
    return int(profile_setting(profile, "l1.fixMinEvidenceChars"))


def _service_call(func: Any, **kwargs: Any) -> tuple[Any, dict[str, Any] | None]:
    try:
        return func(**kwargs), None
    except (ToolError, ProfileLocked) as exc:  # guard refusals, shown to the person as they are
        return None, refusal_from(exc)


def fix_record(request: HttpRequest, pv: ProfileView, record: L1Record, form: Any) -> Outcome:
    action = form.get("action", "rewrite")
    kwargs: dict[str, Any] = {
        "profile": pv.profile, "record_id": record.record_id, "action": action, "evidence": form.get("evidence", ""),
        "actor": actor_for(request), "reason": form.get("reason", "").strip() or None,
        "force": form.get("force") == "on", "is_admin": pv.is_admin, "tool": "dashboard",
    }
    if action == "rewrite":
        kwargs["new_content"] = form.get("newContent", "")
        if form.get("priority", "").strip():
            try:
                kwargs["priority"] = int(form["priority"])
            except ValueError:
                return Outcome(ok=False, refusal={"code": "invalid_params", "message": "priority: must be a whole number", "details": None})
    result, refusal = _service_call(record_services.record_fix, **kwargs)
    if refusal:
        return Outcome(ok=False, refusal=refusal)
    if action == "rewrite":
        return Outcome(ok=True, message=f"Rewrote {record.record_id} as {result.get('newRecordId')}.", result=result,
                       redirect_record_id=result.get("newRecordId"))
    return Outcome(ok=True, message=f"Tombstoned {record.record_id}.", result=result)


def set_task_state(request: HttpRequest, pv: ProfileView, ids: list[str], state: str, reason: str) -> Outcome:
    result, refusal = _service_call(
        record_services.record_set_task_state, profile=pv.profile, ids=ids, state=state, actor=actor_for(request),
        reason=reason.strip() or None, tool="dashboard",
    )
    if refusal:
        return Outcome(ok=False, refusal=refusal)
    applied, unchanged, failed = result["applied"], result["unchanged"], result["failed"]
    details = [f"{f['id']}: {f['reason']}" for f in failed]
    message = f"Task state {state}: {len(applied)} applied, {len(unchanged)} unchanged, {len(failed)} failed."
    if failed and not (applied or unchanged):
        return Outcome(ok=False, refusal={"code": "conflict", "message": message, "details": details}, result=result)
    return Outcome(ok=True, message=message, result=result, details=details)


def bulk_tombstone(request: HttpRequest, pv: ProfileView, ids: list[str], evidence: str, reason: str) -> Outcome:
    """Tombstone each selected record with the fix service (same evidence and guards as one
    record); one refusal does not stop the others, and each is reported."""
    done, details = [], []
    for record_id in ids:
        _, refusal = _service_call(
            record_services.record_fix, profile=pv.profile, record_id=record_id, action="tombstone", evidence=evidence,
            actor=actor_for(request), reason=reason.strip() or None, is_admin=pv.is_admin, tool="dashboard",
        )
        if refusal:
            details.append(f"{record_id}: {plain_refusal(refusal)['sentence']}")
        else:
            done.append(record_id)
    message = f"Tombstoned {len(done)} of {len(ids)} records."
    if not done:
        return Outcome(ok=False, refusal={"code": "conflict", "message": message, "details": details}, details=details)
    return Outcome(ok=True, message=message, details=details)


def restore_version(request: HttpRequest, pv: ProfileView, record: L1Record, form: Any) -> Outcome:
    try:
        change_id = int(form.get("change", ""))
    except ValueError:
        return Outcome(ok=False, refusal={"code": "invalid_params", "message": "change: pick a version to restore", "details": None})
    result, refusal = _service_call(
        record_services.record_restore_version, profile=pv.profile, record_id=record.record_id, change_id=change_id,
        actor=actor_for(request), tool="dashboard",
    )
    if refusal:
        return Outcome(ok=False, refusal=refusal)
    return Outcome(ok=True, message=f"Restored {record.record_id} to the state of change #{change_id}.", result=result)


def cited_messages(profile: Profile, refs: list[str]) -> list[dict[str, Any]]:
    """The L0 rows a record cites, each with its reference; a reference that resolves to no
    row is listed as missing rather than hidden."""
    if not refs:
        return []
    from apps.conversations.services import l0_lookup_messages

    found = l0_lookup_messages(profile=profile, refs=refs)
    out: list[dict[str, Any]] = []
    for ref in refs:
        rows = found.get(ref) or []
        if not rows:
            out.append({"ref": ref, "found": False, "row": None})
        for row in rows:
            out.append({"ref": ref, "found": True, "row": row})
    return out


def semantic_search(request: HttpRequest, pv: ProfileView, filters: Any, *, top_k: int = 20) -> dict[str, Any]:
    """The hybrid recall (dense + sparse, RRF, boosts) with its trace, for a person: every
    project's records are eligible (no caller project), and nothing counts as a hit."""
    from apps.search import services as search_services

    search_filters = search_services.Filters(
        types=[filters.type] if filters.type else None,
        scene_ids=[filters.scene] if filters.scene else None,
        scope_filter=False,
        hide_closed=False,
    )
    try:
        outcome = search_services.recall_search(pv.profile, filters.q, top_k=top_k, filters=search_filters)
    except Exception as exc:  # noqa: BLE001 — the page still renders and says why search failed
        return {"semantic": {"available": False, "message": f"semantic search failed: {exc}"}}
    records, trace = [], []
    for row, ranked in outcome.rows:
        item = {"recordId": row.record_id, "score": ranked.score, "content": row.content, "type": row.type,
                "priority": row.priority, "scene_name": row.scene_name}
        if row.type == "work_task":
            item["tag"] = row.task_state or "open"
        records.append(item)
        trace.append({"recordId": row.record_id, "denseRank": ranked.dense_rank, "sparseRank": ranked.sparse_rank,
                      "fused": ranked.fused, "boosts": ranked.boosts})
    return {"semantic": {"available": True, "records": records, "trace": trace, "degraded": outcome.degraded,
                         "reason": outcome.reason}}


# ---------------------------------------------------------------- scenes


def scene_archive(request: HttpRequest, pv: ProfileView, block: Any, reason: str) -> Outcome:
    if not reason.strip():
        return Outcome(ok=False, refusal={"code": "invalid_params", "message": "reason: say why the block is archived", "details": None})
    _, refusal = _service_call(scene_services.scene_block_archive, profile=pv.profile, actor=actor_for(request),
                               filename=block.filename, reason=reason.strip())
    if refusal:
        return Outcome(ok=False, refusal=refusal)
    return Outcome(ok=True, message=f"Archived {block.filename}.")


def scene_restore(request: HttpRequest, pv: ProfileView, block: Any) -> Outcome:
    _, refusal = _service_call(scene_services.scene_block_restore, profile=pv.profile, actor=actor_for(request), filename=block.filename)
    if refusal:
        return Outcome(ok=False, refusal=refusal)
    return Outcome(ok=True, message=f"Restored {block.filename}.")


# ---------------------------------------------------------------- persona


def _persona_call(request: HttpRequest, pv: ProfileView, func: Any, **kwargs: Any) -> tuple[Any, dict[str, Any] | None]:
    return _service_call(func, profile=pv.profile, actor=actor_for(request), **kwargs)


def persona_merge_all(request: HttpRequest, pv: ProfileView) -> Outcome:
    result, refusal = _persona_call(request, pv, persona_services.persona_merge_all)
    if refusal:
        return Outcome(ok=False, refusal=refusal)
    return Outcome(ok=True, message="Merged the whole proposal into USER.md.", result=result)


def persona_entry(request: HttpRequest, pv: ProfileView, form: Any) -> Outcome:
    decision = form.get("decision", "")
    if decision not in ("accept", "reject", "edit"):
        return Outcome(ok=False, refusal={"code": "invalid_params", "message": "decision must be accept, reject or edit", "details": None})
    raw_index = form.get("index", "")
    index = int(raw_index) if raw_index.lstrip("-").isdigit() else None
    kwargs: dict[str, Any] = {"decision": decision, "index": index, "kind": form.get("kind", ""), "text": form.get("text", "")}
    result, refusal = _persona_call(request, pv, persona_services.persona_merge_entry, **kwargs)
    if refusal:
        return Outcome(ok=False, refusal=refusal)
    verb = {"accept": "Accepted", "reject": "Rejected", "edit": "Edited and accepted"}[decision]
    return Outcome(ok=True, message=f"{verb} one entry.", result=result)


def persona_restore(request: HttpRequest, pv: ProfileView, raw_version: str) -> Outcome:
    if not str(raw_version).isdigit():
        return Outcome(ok=False, refusal={"code": "invalid_params", "message": "version: pick a version to restore", "details": None})
    result, refusal = _persona_call(request, pv, persona_services.persona_restore, number=int(raw_version))
    if refusal:
        return Outcome(ok=False, refusal=refusal)
    return Outcome(ok=True, message=f"Restored USER.md to version {raw_version}.", result=result)
