"""`l2_commit` (SPEC §3.9): plan a batch of scene writes, check it, apply it with the
cursor under the profile's write lock; the dashboard's archive and restore shortcuts."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.accounts.config import profile_setting
from apps.accounts.locks import profile_write_lock
from apps.accounts.models import Profile
from apps.accounts.paths import PathOutsideProfile, confine, profile_dir
from apps.accounts.services import audit_record
from apps.conversations.cursors import cursor_get, cursor_set
from apps.pipeline import triggers
from apps.records.models import L1Record
from apps.scenes import blocks as B
from apps.scenes.models import (
    SceneBlock,
    SceneBlockBackup,
    SceneBlockMember,
    SceneCommit,
)
from apps.scenes.services.cursor import (
    CURSOR_KIND,
    _newest_change_id,
    resolve_l2_cursor,
    stored_l2_cursor,
)
from apps.tools.errors import Conflict, Forbidden, InvalidParams, NotFound, ToolError, invalid_field

ACTIONS = ("create", "update", "delete", "merge", "consolidate", "archive", "restore")
BODY_ACTIONS = ("create", "update", "merge", "consolidate")
CONSOLIDATE_MIN_SHARE = 0.5
FUTURE_SLACK = timedelta(minutes=5)  # clock skew allowed for meta times
HEAT_MAX = 2**31 - 1  # the largest value the heat column holds on every database


# ---------------------------------------------------------------------- l2_commit


@dataclass
class _Plan:
    index: int
    action: str
    filename: str
    sources: list[str] = field(default_factory=list)
    reason: str = ""
    meta: dict[str, Any] | None = None
    content: str = ""
    members: list[str] | None = None  # final member list (body actions)
    warnings: list[str] = field(default_factory=list)


class _Errors:
    def __init__(self) -> None:
        self.items: list[tuple[type[ToolError], str, str]] = []

    def add(self, kind: type[ToolError], field_name: str, message: str) -> None:
        self.items.append((kind, field_name, message))

    def raise_if_any(self) -> None:
        if not self.items:
            return
        kind = self.items[0][0]
        summary = "; ".join(f"{f}: {m}" for _, f, m in self.items[:5])
        if len(self.items) > 5:
            summary += f"; and {len(self.items) - 5} more"
        details = [{"field": f, "message": m, "code": k.code} for k, f, m in self.items]
        raise kind(f"nothing was written: {summary}", details=details)


def scene_count_warning(live: int, maximum: int) -> str:
    """SPEC §3.9 colours: yellow at ≥ max−3, orange at max−1, red at max."""
    if live >= maximum:
        return "red"
    if live >= maximum - 1:
        return "orange"
    if live >= maximum - 3:
        return "yellow"
    return "green"


def _check_meta(meta: Any, prefix: str, errors: _Errors) -> dict[str, Any] | None:
    if not isinstance(meta, dict):
        errors.add(InvalidParams, prefix, "meta {created, updated, summary, heat} is required for this action")
        return None
    ok = True
    out: dict[str, Any] = {}
    for key in ("created", "updated"):
        parsed = B.parse_iso(meta.get(key))
        if parsed is None:
            errors.add(InvalidParams, f"{prefix}.{key}", "must be an ISO 8601 date-time")
            ok = False
        out[key] = parsed
    if ok and out["updated"] < out["created"]:
        errors.add(InvalidParams, f"{prefix}.updated", "is before meta.created")
        ok = False
    if ok:
        # The persona job reads the blocks whose `updated` is after its cursor and then
        # moves the cursor to the newest one: a future time would make it skip every block
        # written with a real time afterwards.
        horizon = timezone.now() + FUTURE_SLACK
        for key in ("created", "updated"):
            if out[key] > horizon:
                errors.add(InvalidParams, f"{prefix}.{key}", f"{B.iso(out[key])} lies in the future; use the current time")
                ok = False
    summary = meta.get("summary")
    if not isinstance(summary, str):
        errors.add(InvalidParams, f"{prefix}.summary", "must be a string")
        ok = False
    elif "\n" in summary or "\r" in summary:
        errors.add(InvalidParams, f"{prefix}.summary", "must be one line")
        ok = False
    elif len(summary) > 1000:
        errors.add(InvalidParams, f"{prefix}.summary", "must be at most 1000 characters")
        ok = False
    elif B.text_problem(summary):
        errors.add(InvalidParams, f"{prefix}.summary", B.text_problem(summary) or "")
        ok = False
    out["summary"] = summary
    heat = meta.get("heat")
    if isinstance(heat, bool) or not isinstance(heat, int) or not 0 <= heat <= HEAT_MAX:
        errors.add(InvalidParams, f"{prefix}.heat", f"must be an integer from 0 to {HEAT_MAX}")
        ok = False
    out["heat"] = heat
    return out if ok else None


def _check_filename(name: Any, field_name: str, errors: _Errors, profile: Profile) -> bool:
    if isinstance(name, str) and B.looks_like_path(name):
        try:
            confine(profile_dir(profile) / "l2" / "scenes", name)
        except PathOutsideProfile:
            raise Forbidden(f"{field_name}: {name!r} resolves outside the profile", details=[{"field": field_name, "message": "outside the profile"}]) from None
    problem = B.filename_problem(name)
    if problem:
        errors.add(InvalidParams, field_name, problem)
        return False
    return True


def _snapshot(block: SceneBlock, members: list[str] | None = None) -> dict[str, Any]:
    return {
        "filename": block.filename,
        "meta": block.meta_dict(),
        "content": block.content,
        "members": members if members is not None else block.members,
        "archived": block.archived,
        "archivedAt": B.iso(block.archived_at),
        "archiveReason": block.archive_reason,
        "removed": block.removed,
    }


def scene_commit(
    *,
    profile: Profile,
    actor: str,
    scene_writes: list[dict[str, Any]],
    cursor: Any,
    persona_signal: bool = False,
    persona_reason: str = "",
    tool: str = "l2_commit",
) -> dict[str, Any]:
    """Apply a batch of scene writes and advance the L2 cursor, all or nothing (§3.9)."""
    new_cursor = resolve_l2_cursor(profile=profile, value=cursor) if cursor is not None else None
    if persona_reason and len(persona_reason) > 2000:
        raise invalid_field("personaReason", "must be at most 2000 characters")
    if persona_reason and B.text_problem(persona_reason):
        raise invalid_field("personaReason", B.text_problem(persona_reason) or "")
    with profile_write_lock(profile):
        now = timezone.now()
        maximum = int(profile_setting(profile, "l2.maxScenes"))
        live = {b.filename: b for b in SceneBlock.objects.filter(profile=profile, removed=False, archived=False).prefetch_related("member_rows")}
        archived = {b.filename: b for b in SceneBlock.objects.filter(profile=profile, removed=False, archived=True)}
        plans, errors = _plan_batch(profile=profile, writes=scene_writes, live=live, archived=archived, now=now)
        before_cursor = stored_l2_cursor(profile)
        if new_cursor is not None and new_cursor != before_cursor:
            newest = _newest_change_id(profile)
            if new_cursor > newest:
                errors.add(InvalidParams, "cursor", f"change id {new_cursor} is beyond the newest change of this profile ({newest})")
            elif new_cursor < before_cursor:
                errors.add(Conflict, "cursor", f"change id {new_cursor} is behind the stored L2 cursor {before_cursor}; read_l1_increment again")
        errors.raise_if_any()

        live_before = len(live)
        live_after = _live_count_after(plans, live)
        if live_after > maximum and live_after > live_before:
            raise Conflict(
                f"this batch would leave {live_after} live scene blocks, over the cap of {maximum}; nothing was written. "
                "Free slots first: consolidate blocks of the same project, or archive one block whose project is no "
                "longer evolving (call l2_archive_guide for the rules and facts), then retry.",
                details={"liveCount": live_before, "liveAfter": live_after, "maxScenes": maximum},
            )
        touched: set[int] = set()
        applied: list[dict[str, str]] = []
        warnings: list[str] = []
        l3_cursor = B.parse_iso(cursor_get(profile=profile, kind="l3").get("updated"))
        for plan in plans:
            if plan.meta and l3_cursor is not None and plan.meta["updated"] <= l3_cursor:
                warnings.append(
                    f"{plan.filename}: meta.updated {B.iso(plan.meta['updated'])} is not after the persona cursor "
                    f"{B.iso(l3_cursor)}; the persona job reads only blocks updated after it and will not see this change"
                )
        for plan in plans:
            touched |= _apply(profile=profile, actor=actor, tool=tool, plan=plan, live=live, archived=archived, now=now)
            applied.append({"action": plan.action, "filename": plan.filename})
            warnings.extend(plan.warnings)
        keep = max(int(profile_setting(profile, "l2.backupsPerBlock")), 1)
        for block_id in touched:
            stale = list(SceneBlockBackup.objects.filter(block_id=block_id).order_by("-id").values_list("id", flat=True)[keep:])
            if stale:
                SceneBlockBackup.objects.filter(id__in=stale).delete()
        after_cursor = new_cursor if new_cursor is not None else before_cursor
        if after_cursor != before_cursor:
            cursor_set(profile=profile, kind=CURSOR_KIND, value={"lastRecordId": after_cursor})
            audit_record(profile=profile, actor=actor, tool=tool, action="cursor", target_type="cursor", target_id=CURSOR_KIND,
                         before={"lastRecordId": before_cursor}, after={"lastRecordId": after_cursor})
        live_count = SceneBlock.objects.filter(profile=profile, removed=False, archived=False).count()
        SceneCommit.objects.create(
            profile=profile, actor=actor, applied=applied, cursor_before={"lastRecordId": before_cursor},
            cursor_after={"lastRecordId": after_cursor}, persona_signal=bool(persona_signal),
            persona_reason=persona_reason or "", live_count=live_count,
        )
        profile_id = profile.pk
        signal, reason = bool(persona_signal), persona_reason or ""
        transaction.on_commit(lambda: triggers.l2_committed(profile_id=profile_id, persona_signal=signal, reason=reason))
        transaction.on_commit(lambda: _mirror(profile))
    result: dict[str, Any] = {
        "success": True,
        "applied": applied,
        "liveCount": live_count,
        "maxScenes": maximum,
        "sceneCountWarning": scene_count_warning(live_count, maximum),
    }
    if warnings:
        result["warnings"] = warnings
    return result


def _mirror(profile: Profile) -> None:
    from apps.scenes.mirror import scene_mirror_sync

    scene_mirror_sync(profile=profile)


def _plan_batch(*, profile: Profile, writes: list[dict[str, Any]], live: dict[str, SceneBlock], archived: dict[str, SceneBlock], now) -> tuple[list[_Plan], _Errors]:
    errors = _Errors()
    plans: list[_Plan] = []
    claimed: dict[str, int] = {}
    archives = [i for i, w in enumerate(writes) if w.get("action") == "archive"]
    if len(archives) > 1:
        errors.add(InvalidParams, f"sceneWrites.{archives[1]}.action", f"at most one archive per batch (writes {', '.join(map(str, archives))} archive)")
    min_age = int(profile_setting(profile, "l2.archiveMinAgeDays"))
    block_max = int(profile_setting(profile, "l2.blockMaxChars"))
    for i, w in enumerate(writes):
        prefix = f"sceneWrites.{i}"
        action = w.get("action")
        if action not in ACTIONS:
            errors.add(InvalidParams, f"{prefix}.action", f"must be one of {', '.join(ACTIONS)}")
            continue
        filename = w.get("filename")
        if not _check_filename(filename, f"{prefix}.filename", errors, profile):
            continue
        sources = w.get("sources")
        plan = _Plan(index=i, action=action, filename=filename, reason=(w.get("reason") or "").strip())
        bad_text = [(key, B.text_problem(w[key])) for key in ("reason", "content") if isinstance(w.get(key), str)]
        bad_text = [(key, problem) for key, problem in bad_text if problem]
        if bad_text:
            for key, problem in bad_text:
                errors.add(InvalidParams, f"{prefix}.{key}", problem)
            continue
        if action in ("merge", "consolidate"):
            if not isinstance(sources, list) or len(sources) < 2:
                errors.add(InvalidParams, f"{prefix}.sources", f"{action} needs at least 2 source blocks")
                continue
            if len(set(sources)) != len(sources):
                errors.add(InvalidParams, f"{prefix}.sources", "names a block twice")
                continue
            if not all(_check_filename(s, f"{prefix}.sources.{j}", errors, profile) for j, s in enumerate(sources)):
                continue
            plan.sources = list(sources)
        elif sources:
            errors.add(InvalidParams, f"{prefix}.sources", f"sources are only used by merge and consolidate, not {action}")
            continue
        names = {filename, *plan.sources}
        clash = [n for n in sorted(names) if n in claimed]
        if clash:
            errors.add(InvalidParams, f"{prefix}.filename", f"{', '.join(clash)} already used by sceneWrites.{claimed[clash[0]]}; a block may appear in one write per batch")
            continue
        for n in names:
            claimed[n] = i

        if action in ("create", "merge", "consolidate", "restore") and len(filename.encode("utf-8")) > B.FILENAME_MAX_BYTES:
            plan.warnings.append(
                f"{filename}: the name is {len(filename.encode('utf-8'))} bytes in UTF-8; most file systems take at most "
                f"{B.FILENAME_MAX_BYTES}, so its file in the l2 folder and in exports cannot be written. A shorter name is safer."
            )
        if action == "create":
            if filename in live:
                errors.add(Conflict, f"{prefix}.filename", f"{filename} already exists; use update")
                continue
        elif action in ("update", "delete", "archive"):
            if filename not in live:
                if action == "archive" and filename in archived:
                    errors.add(Conflict, f"{prefix}.filename", f"{filename} is already archived")
                else:
                    hint = " (it is archived; restore it first)" if filename in archived else ""
                    errors.add(NotFound, f"{prefix}.filename", f"no live scene block {filename}{hint}")
                continue
        elif action == "restore":
            if filename not in archived:
                errors.add(NotFound, f"{prefix}.filename", f"no archived scene block {filename}")
                continue
            if filename in live:
                errors.add(Conflict, f"{prefix}.filename", f"a live block {filename} exists; rename or consolidate it before restoring")
                continue
        else:  # merge / consolidate
            missing = [s for s in plan.sources if s not in live]
            if missing:
                errors.add(NotFound, f"{prefix}.sources", f"no live scene block {', '.join(missing)}")
                continue
            if filename in live and filename not in plan.sources:
                errors.add(Conflict, f"{prefix}.filename", f"target {filename} exists and is not one of the sources")
                continue

        if action == "archive":
            if not plan.reason:
                errors.add(InvalidParams, f"{prefix}.reason", "archive requires a reason")
                continue
            block = live[filename]
            if block.created_at > now - timedelta(days=min_age):
                errors.add(Conflict, f"{prefix}.filename", f"{filename} is younger than {min_age} days (first written {B.iso(block.created_at)}); it cannot be archived yet")
                continue
            if filename in archived:
                errors.add(Conflict, f"{prefix}.filename", f"an archived block named {filename} already exists; consolidate instead")
                continue

        if action in BODY_ACTIONS:
            meta = _check_meta(w.get("meta"), f"{prefix}.meta", errors)
            content = w.get("content")
            if not isinstance(content, str) or not B.strip_meta(content).strip():
                errors.add(InvalidParams, f"{prefix}.content", f"{action} needs a non-empty Markdown body")
                continue
            if meta is None:
                continue
            plan.meta = meta
            plan.content = B.strip_meta(content)
            if len(plan.content) > block_max:
                plan.warnings.append(
                    f"{filename}: the body has {len(plan.content)} characters; read_scene_blocks returns only the first "
                    f"{block_max}, so a later update written from that read would drop the rest. Split the block or "
                    "compress it below the limit."
                )
            if not _plan_members(profile=profile, plan=plan, raw_members=w.get("members"), live=live, errors=errors, prefix=prefix):
                continue
            if action == "consolidate":
                sources_len = sum(B.body_length(live[s].content) for s in plan.sources)
                target_len = B.body_length(plan.content)
                if target_len < CONSOLIDATE_MIN_SHARE * sources_len:
                    errors.add(
                        Conflict, f"{prefix}.content",
                        f"the consolidated body has {target_len} characters, less than half of the sources' {sources_len} "
                        "(headings and meta excluded): an entry was probably dropped; keep every entry of the sources",
                    )
                    continue
        elif w.get("members") is not None:
            errors.add(InvalidParams, f"{prefix}.members", f"members are not used by {action}")
            continue
        plans.append(plan)
    return plans, errors


def _plan_members(*, profile: Profile, plan: _Plan, raw_members: Any, live: dict[str, SceneBlock], errors: _Errors, prefix: str) -> bool:
    refs = B.referenced_ids(plan.content)
    explicit: list[str] | None = None
    if raw_members is not None:
        if not isinstance(raw_members, list) or not all(isinstance(m, str) and m.strip() and not B.text_problem(m) for m in raw_members):
            errors.add(InvalidParams, f"{prefix}.members", "must be a list of L1 record ids")
            return False
        explicit = list(dict.fromkeys(m.strip() for m in raw_members))
    wanted = set(refs) | set(explicit or [])
    known = set(L1Record.objects.filter(profile=profile, record_id__in=wanted).values_list("record_id", flat=True)) if wanted else set()
    if explicit is not None:
        unknown = [m for m in explicit if m not in known]
        if unknown:
            errors.add(InvalidParams, f"{prefix}.members", f"unknown L1 record ids: {', '.join(unknown[:20])}")
            return False
    unknown_refs = [r for r in refs if r not in known]
    if unknown_refs:
        plan.warnings.append(f"{plan.filename}: content names unknown L1 ids, not added as members: {', '.join(unknown_refs[:20])}")
    previous: list[str] = []
    if plan.action == "update":
        previous = live[plan.filename].members
    elif plan.action in ("merge", "consolidate"):
        for source in plan.sources:
            previous.extend(live[source].members)
    if explicit is not None:
        if plan.action == "consolidate":
            dropped = sorted(set(previous) - set(explicit))
            if dropped:
                errors.add(Conflict, f"{prefix}.members", f"the members list drops members of the sources: {', '.join(dropped[:20])}")
                return False
        plan.members = explicit
    else:
        plan.members = list(dict.fromkeys([*previous, *(r for r in refs if r in known)]))
    return True


def _live_count_after(plans: list[_Plan], live: dict[str, SceneBlock]) -> int:
    count = len(live)
    for plan in plans:
        if plan.action in ("create", "restore"):
            count += 1
        elif plan.action in ("delete", "archive"):
            count -= 1
        elif plan.action in ("merge", "consolidate"):
            count -= len(plan.sources)
            count += 1
    return count


def _backup(block: SceneBlock, action: str) -> None:
    snap = _snapshot(block)
    SceneBlockBackup.objects.create(block=block, content=block.content, meta=snap["meta"], members=snap["members"], action=action)


def _set_members(block: SceneBlock, members: list[str]) -> None:
    current = set(block.member_rows.values_list("record_id", flat=True))
    wanted = set(members)
    if current - wanted:
        block.member_rows.filter(record_id__in=current - wanted).delete()
    SceneBlockMember.objects.bulk_create([SceneBlockMember(block=block, profile=block.profile, record_id=r) for r in members if r not in current])


def _apply(*, profile: Profile, actor: str, tool: str, plan: _Plan, live: dict[str, SceneBlock], archived: dict[str, SceneBlock], now) -> set[int]:
    touched: set[int] = set()

    def audit(action: str, block_name: str, before: Any, after: Any, note: Any = None) -> None:
        audit_record(profile=profile, actor=actor, tool=tool, action=action, target_type="scene_block", target_id=block_name,
                     before=before, after=after, note=note)

    if plan.action in ("create", "update"):
        meta = plan.meta or {}
        if plan.action == "create":
            block = SceneBlock(profile=profile, filename=plan.filename, meta_created=meta["created"], created_at=now)
            before = None
        else:
            block = live[plan.filename]
            before = _snapshot(block)
            _backup(block, "update")
            if meta["created"] != block.meta_created:
                plan.warnings.append(f"{plan.filename}: meta.created of an existing block is kept ({B.iso(block.meta_created)})")
        block.content = plan.content
        block.summary, block.heat, block.meta_updated, block.written_at = meta["summary"], meta["heat"], meta["updated"], now
        block.save()
        _set_members(block, plan.members or [])
        touched.add(block.pk)
        audit(plan.action, plan.filename, before, _snapshot(block), {"reason": plan.reason} if plan.reason else None)
    elif plan.action == "delete":
        block = live[plan.filename]
        before = _snapshot(block)
        _backup(block, "delete")
        block.removed, block.removed_at = True, now
        block.save()
        block.member_rows.all().delete()
        touched.add(block.pk)
        audit("delete", plan.filename, before, None, {"reason": plan.reason} if plan.reason else None)
    elif plan.action in ("merge", "consolidate"):
        meta = plan.meta or {}
        created = min([meta["created"], *(live[s].meta_created for s in plan.sources)])
        sources_before = {}
        for source in plan.sources:
            block = live[source]
            sources_before[source] = _snapshot(block)
            _backup(block, plan.action)
            touched.add(block.pk)
            if source != plan.filename:
                block.removed, block.removed_at = True, now
                block.save()
                block.member_rows.all().delete()
                audit(f"{plan.action}_source", source, sources_before[source], None, {"into": plan.filename, "reason": plan.reason})
        if plan.filename in plan.sources:
            target = live[plan.filename]
        else:
            target = SceneBlock(profile=profile, filename=plan.filename)
        target.created_at = min(live[s].created_at for s in plan.sources)
        target.meta_created = created
        target.content = plan.content
        target.summary, target.heat, target.meta_updated, target.written_at = meta["summary"], meta["heat"], meta["updated"], now
        target.save()
        _set_members(target, plan.members or [])
        touched.add(target.pk)
        audit(plan.action, plan.filename, sources_before.get(plan.filename), _snapshot(target),
              {"sources": plan.sources, "reason": plan.reason})
    elif plan.action == "archive":
        block = live[plan.filename]
        before = _snapshot(block)
        block.archived, block.archived_at, block.archive_reason = True, now, plan.reason
        block.save()
        audit("archive", plan.filename, before, _snapshot(block), {"reason": plan.reason})
    elif plan.action == "restore":
        block = archived[plan.filename]
        before = _snapshot(block)
        block.archived, block.archived_at = False, None
        block.save()
        audit("restore", plan.filename, before, _snapshot(block), {"reason": plan.reason} if plan.reason else None)
    return touched


# ------------------------------------------------------------ dashboard shortcuts


def scene_block_archive(*, profile: Profile, actor: str, filename: str, reason: str) -> dict[str, Any]:
    """Archive one live block (the dashboard's action); same guards as l2_commit."""
    return scene_commit(profile=profile, actor=actor, scene_writes=[{"action": "archive", "filename": filename, "reason": reason}],
                        cursor=None, tool="dashboard")


def scene_block_restore(*, profile: Profile, actor: str, filename: str, reason: str = "") -> dict[str, Any]:
    """Bring an archived block back (counts against the cap again)."""
    return scene_commit(profile=profile, actor=actor, scene_writes=[{"action": "restore", "filename": filename, "reason": reason}],
                        cursor=None, tool="dashboard")
