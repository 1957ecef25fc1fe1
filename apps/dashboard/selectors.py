"""Read-only queries of the dashboard. Every query is scoped by profile and sized by the
page, never by the table (counts are aggregates; lists are paged)."""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.db.models import Count, Q, QuerySet
from django.db.models.functions import TruncDate
from django.utils import timezone

from apps.accounts.config import profile_setting
from apps.accounts.models import Profile
from apps.conversations.models import Cursor
from apps.hitstats.models import RecallHit, RecordHits
from apps.records.models import (
    ALL_TYPES,
    CHAT_TYPES,
    CODE_TYPES,
    SCOPES,
    TASK_STATES,
    L1Change,
    L1Record,
)
from apps.scenes.models import SceneBlock, SceneBlockMember, SceneEntry
from apps.search.models import IndexOp

# ---------------------------------------------------------------- overview


def types_for_mode(profile: Profile) -> tuple[str, ...]:
    return CHAT_TYPES if profile.mode == "chat" else CODE_TYPES


def record_counts(profile: Profile) -> dict[str, Any]:
    # COUNT(*), not COUNT(id): PostgreSQL then answers from an index holding type and
    # deleted (index-only scan) instead of reading every row for the id.
    rows = (
        L1Record.objects.filter(profile=profile)
        .values("type", "deleted")
        .annotate(n=Count("*"))
        .order_by()
    )
    live: Counter[str] = Counter()
    tombstoned = 0
    for row in rows:
        if row["deleted"]:
            tombstoned += row["n"]
        else:
            live[row["type"]] += row["n"]
    by_type = [(t, live.get(t, 0)) for t in types_for_mode(profile)]
    by_type += [(t, n) for t, n in sorted(live.items()) if t not in types_for_mode(profile)]
    return {"live": sum(live.values()), "tombstoned": tombstoned, "by_type": by_type}


def records_per_day(profile: Profile, *, days: int = 30) -> dict[date, int]:
    """Records created per UTC day over the last `days` days (one grouped query)."""
    return _per_day(L1Record.objects.filter(profile=profile), days=days)


def _per_day(qs: QuerySet, *, days: int) -> dict[date, int]:
    from django.db import connection
    from django.db.models import CharField
    from django.db.models.functions import Cast, Substr

    today = timezone.now().astimezone(UTC).date()
    since = datetime.combine(today - timedelta(days=days - 1), time.min, tzinfo=UTC)
    qs = qs.filter(created_at__gte=since)
    if connection.vendor == "sqlite":
        # SQLite stores UTC datetimes as ISO text: the day is its first 10 characters,
        # far cheaper than the per-row date cast TruncDate needs there.
        rows = qs.annotate(day=Substr(Cast("created_at", CharField()), 1, 10)).values("day").annotate(n=Count("id")).order_by()
        return {date.fromisoformat(row["day"]): row["n"] for row in rows}
    rows = qs.annotate(day=TruncDate("created_at", tzinfo=UTC)).values("day").annotate(n=Count("id")).order_by()
    return {row["day"]: row["n"] for row in rows}


def scene_counts(profile: Profile) -> dict[str, Any]:
    rows = SceneBlock.objects.filter(profile=profile, removed=False).values("archived").annotate(n=Count("id")).order_by()
    by = {row["archived"]: row["n"] for row in rows}
    cap = int(profile_setting(profile, "l2.maxScenes"))
    live = by.get(False, 0)
    return {"live": live, "archived": by.get(True, 0), "cap": cap, "pool": SceneEntry.objects.filter(profile=profile, merged_into__isnull=True).count()}


def open_tasks(profile: Profile, *, limit: int = 8) -> tuple[int, list[L1Record]]:
    qs = L1Record.objects.filter(profile=profile, deleted=False, type="work_task").filter(Q(task_state__isnull=True) | Q(task_state="open"))
    return qs.count(), list(qs.order_by("-created_at", "-id")[:limit])


def cursors(profile: Profile) -> list[Cursor]:
    return list(Cursor.objects.filter(profile=profile).order_by("kind"))


def pending_index_ops(profile: Profile) -> int:
    return IndexOp.objects.filter(profile=profile).count()


# ---------------------------------------------------------------- records list

SORT_LABELS = {
    "-created": "newest first", "created": "oldest first", "-updated": "recently changed",
    "updated": "least recently changed", "-priority": "highest priority", "priority": "lowest priority",
}
SORTS = {
    "-created": ("-created_at", "-id"),
    "created": ("created_at", "id"),
    "-updated": ("-updated_at", "-id"),
    "updated": ("updated_at", "id"),
    "-priority": ("-priority", "-created_at", "-id"),
    "priority": ("priority", "created_at", "id"),
}
STATUSES = ("live", "tombstoned", "all")


@dataclass
class RecordFilters:
    type: str = ""
    scope: str = ""
    project: str = ""
    scene: str = ""
    task_state: str = ""
    status: str = "live"
    date_from: date | None = None
    date_to: date | None = None
    q: str = ""
    sort: str = "-created"
    errors: list[str] = field(default_factory=list)

    @classmethod
    def from_query(cls, query: Any) -> RecordFilters:
        f = cls()
        f.type = query.get("type", "").strip()
        if f.type and f.type not in ALL_TYPES:
            f.errors.append(f"unknown type {f.type!r}")
            f.type = ""
        f.scope = query.get("scope", "").strip()
        if f.scope and f.scope not in SCOPES:
            f.errors.append(f"unknown scope {f.scope!r}")
            f.scope = ""
        f.project = query.get("project", "").strip()
        f.scene = query.get("scene", "").strip()
        f.task_state = query.get("task_state", "").strip()
        if f.task_state and f.task_state not in TASK_STATES:
            f.errors.append(f"unknown task state {f.task_state!r}")
            f.task_state = ""
        f.status = query.get("status", "live").strip() or "live"
        if f.status not in STATUSES:
            f.errors.append(f"unknown status {f.status!r}")
            f.status = "live"
        f.date_from = _parse_date(query.get("from", ""), "from", f.errors)
        f.date_to = _parse_date(query.get("to", ""), "to", f.errors)
        f.q = query.get("q", "").strip()
        f.sort = query.get("sort", "-created").strip() or "-created"
        if f.sort not in SORTS:
            f.errors.append(f"unknown sort {f.sort!r}")
            f.sort = "-created"
        return f


def _parse_date(raw: str, name: str, errors: list[str]) -> date | None:
    raw = (raw or "").strip()
    if not raw:
        return None
    try:
        return date.fromisoformat(raw)
    except ValueError:
        errors.append(f"{name}: {raw!r} is not a date (YYYY-MM-DD)")
        return None


LIST_FIELDS = ("id", "record_id", "content", "type", "priority", "scene_name", "metadata", "created_at", "version", "deleted", "task_state")


def filter_records(profile: Profile, f: RecordFilters) -> QuerySet[L1Record]:
    qs = L1Record.objects.filter(profile=profile)
    if f.status == "live":
        qs = qs.filter(deleted=False)
    elif f.status == "tombstoned":
        qs = qs.filter(deleted=True)
    if f.type:
        qs = qs.filter(type=f.type)
    if f.scope:
        qs = qs.filter(metadata__scope=f.scope)
    if f.project:
        qs = qs.filter(metadata__project=f.project)
    if f.scene:
        # By the pool entry's key (the FK index); a name that is no pool id matches scene_name.
        entry = SceneEntry.objects.filter(profile=profile, scene_id=f.scene).values_list("pk", flat=True).first()
        qs = qs.filter(scene_id=entry) if entry is not None else qs.filter(scene_name=f.scene)
    if f.task_state:
        qs = qs.filter(type="work_task")
        qs = qs.filter(Q(task_state="open") | Q(task_state__isnull=True) | Q(task_state="")) if f.task_state == "open" else qs.filter(task_state=f.task_state)
    if f.date_from:
        qs = qs.filter(created_at__gte=datetime.combine(f.date_from, time.min, tzinfo=UTC))
    if f.date_to:
        qs = qs.filter(created_at__lt=datetime.combine(f.date_to + timedelta(days=1), time.min, tzinfo=UTC))
    if f.q:
        words = f.q.split()[:8]
        if len(words) == 1 and words[0].startswith("l1_"):
            # A record id typed into the search box finds that record (or text naming it).
            qs = qs.filter(Q(record_id=words[0]) | Q(content__icontains=words[0]))
        else:
            for word in words:
                qs = qs.filter(_contains_word(word))
    return qs.order_by(*SORTS[f.sort])


def _contains_word(word: str) -> Q:
    """Case-insensitive substring match of one search word.

    A word without upper/lower case (Chinese, digits, punctuation) matches the same rows
    case-sensitively, and on PostgreSQL that skips an UPPER() of every row's content, the
    bulk of the cost when the trigram index cannot help (words under three characters).
    SQLite compiles both lookups to the same LIKE."""
    if word.upper() == word and word.lower() == word:
        return Q(content__contains=word)
    return Q(content__icontains=word)


def hits_for(profile: Profile, record_ids: list[str]) -> dict[str, RecordHits]:
    if not record_ids:
        return {}
    return {h.record_id: h for h in RecordHits.objects.filter(profile=profile, record_id__in=record_ids)}


def scene_choices(profile: Profile) -> list[SceneEntry]:
    return list(SceneEntry.objects.filter(profile=profile, merged_into__isnull=True).order_by("name").only("scene_id", "name"))


def project_choices(profile: Profile) -> list[str]:
    known = [p for p in (profile.known_projects or []) if isinstance(p, str)]
    seen = set(known)
    projects = list(known)
    for value in SceneEntry.objects.filter(profile=profile).exclude(project="").values_list("project", flat=True).distinct()[:200]:
        if value not in seen:
            seen.add(value)
            projects.append(value)
    return sorted(projects)


# ---------------------------------------------------------------- one record


def record_for_profile(profile: Profile, record_id: str) -> L1Record | None:
    return L1Record.objects.select_related("scene").filter(profile=profile, record_id=record_id).first()


@dataclass
class HistoryStep:
    change: L1Change
    content_diff: list[tuple[str, str]]
    field_changes: list[tuple[str, Any, Any]]


_HISTORY_FIELDS = ("type", "priority", "scene_name", "taskState", "deleted", "replacedBy", "version", "metadata")


def record_history(record: L1Record) -> list[HistoryStep]:
    changes = list(L1Change.objects.filter(record=record).order_by("id"))
    steps = []
    previous: dict[str, Any] = {}
    for change in changes:
        state = change.state or {}
        diff = word_diff(previous.get("content", ""), state.get("content", "")) if previous else []
        fields = [(k, previous.get(k), state.get(k)) for k in _HISTORY_FIELDS if previous and previous.get(k) != state.get(k)]
        steps.append(HistoryStep(change=change, content_diff=diff, field_changes=fields))
        previous = state
    return list(reversed(steps))


def word_diff(old: str, new: str) -> list[tuple[str, str]]:
    """Character-level diff as (op, text) runs: op is '=', '+' or '-'. Works for Chinese
    (no spaces to split on) as well as for English."""
    if old == new:
        return [("=", new)]
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    out: list[tuple[str, str]] = []
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            out.append(("=", old[a0:a1]))
        else:
            if a1 > a0:
                out.append(("-", old[a0:a1]))
            if b1 > b0:
                out.append(("+", new[b0:b1]))
    return out


def line_diff(old: str, new: str) -> list[tuple[str, str]]:
    out = []
    for line in difflib.ndiff((old or "").splitlines(), (new or "").splitlines()):
        op = line[:1]
        if op == "?":
            continue
        out.append(({"+": "+", "-": "-"}.get(op, "="), line[2:]))
    return out


def related_records(record: L1Record, history: list[HistoryStep]) -> dict[str, list[L1Record]]:
    """The records this one replaced (named in its history notes: `replaces` of a commit,
    `rewrittenFrom` of a fix) and the record that replaced it."""
    replaced_ids: list[str] = []
    for step in history:
        note = step.change.note if isinstance(step.change.note, dict) else {}
        replaced_ids += [i for i in note.get("replaces") or [] if isinstance(i, str)]
        if isinstance(note.get("rewrittenFrom"), str):
            replaced_ids.append(note["rewrittenFrom"])
    fields = ("record_id", "content", "version", "deleted")
    replaced = list(L1Record.objects.filter(profile_id=record.profile_id, record_id__in=set(replaced_ids)).only(*fields))
    successor = None
    if record.replaced_by:
        successor = L1Record.objects.filter(profile_id=record.profile_id, record_id=record.replaced_by).only(*fields).first()
    return {"replaced": replaced, "successor": [successor] if successor else []}


def record_recalls(profile: Profile, record_id: str, *, limit: int = 20) -> list[RecallHit]:
    return list(
        RecallHit.objects.filter(profile=profile, record_id=record_id).select_related("event").order_by("-id")[:limit]
    )


def record_blocks(profile: Profile, record_id: str) -> list[SceneBlock]:
    return list(
        SceneBlock.objects.filter(profile=profile, member_rows__record_id=record_id).order_by("archived", "filename").distinct()
    )


def is_scene_member(profile: Profile, record_id: str) -> bool:
    return SceneBlockMember.objects.filter(profile=profile, record_id=record_id, block__removed=False).exists()


# ---------------------------------------------------------------- persona, jobs, health


def persona_summary(profile: Profile) -> dict[str, Any]:
    from apps.persona import document
    from apps.persona.models import PersonaProposal, PersonaVersion

    live = PersonaVersion.objects.filter(profile=profile).order_by("-number").first()
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


def recent_jobs(profile: Profile, *, limit: int = 10) -> list[Any]:
    from apps.pipeline.models import JobRun

    return list(JobRun.objects.filter(profile=profile).order_by("-id")[:limit])


def health_checks() -> dict[str, dict[str, Any]]:
    from django.db import connection

    from apps.tools.registry import health_checks as registered

    checks: dict[str, dict[str, Any]] = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = {"ok": True, "vendor": connection.vendor}
    except Exception as exc:  # noqa: BLE001 — health must answer whatever is broken
        checks["database"] = {"ok": False, "error": str(exc)}
    for name, func in registered().items():
        try:
            checks[name] = dict(func())
        except Exception as exc:  # noqa: BLE001 — one failing check must not hide the others
            checks[name] = {"ok": False, "error": str(exc)}
    return checks


# ---------------------------------------------------------------- conversations (L0)


def l0_sessions(profile: Profile):
    """One row per conversation (session) of the L0 index, newest activity first."""
    from django.db.models import Max, Min

    from apps.conversations.models import L0Message

    return (
        L0Message.objects.filter(profile=profile)
        .values("session_hash", "session_key")
        .annotate(messages=Count("id"), first_shard=Min("shard"), last_shard=Max("shard"), last_ts=Max("timestamp"))
        .order_by("-last_shard", "-last_ts", "session_key")
    )


def l0_counts(profile: Profile) -> dict[str, int]:
    from apps.conversations.models import L0Message, L0ShardState

    agg = L0Message.objects.filter(profile=profile).aggregate(messages=Count("id"), sessions=Count("session_hash", distinct=True))
    return {"messages": agg["messages"] or 0, "sessions": agg["sessions"] or 0,
            "shards": L0ShardState.objects.filter(profile=profile).count()}


def l0_session_entries(profile: Profile, session_key: str) -> QuerySet:
    """The session's rows in the L0 location index, in shard/line order (unread)."""
    import hashlib

    from apps.conversations.models import L0Message

    session_hash = hashlib.sha1(session_key.encode("utf-8")).hexdigest()  # the index's documented key
    return L0Message.objects.filter(profile=profile, session_hash=session_hash, session_key=session_key).order_by("shard", "offset")


def l0_rows_for(profile: Profile, entries: list[Any]) -> list[dict[str, Any]]:
    """Read just these rows from their shards (seek + one line each); a row whose shard
    changed under the index is shown as unreadable rather than dropped."""
    from apps.conversations.services import l0_read_row

    rows = []
    for entry in entries:
        row = l0_read_row(profile=profile, shard=entry.shard, offset=entry.offset, length=entry.length)
        full = dict(row or {})
        full.setdefault("role", entry.role)
        full.setdefault("content", "")
        full.update(sourceFile=entry.shard, sourceLine=entry.line, messageRef=entry.ref, unreadable=row is None)
        rows.append(full)
    return rows


def l0_shards(profile: Profile) -> list[dict[str, Any]]:
    from apps.conversations.models import L0ShardState

    return list(L0ShardState.objects.filter(profile=profile).order_by("-shard").values("shard", "indexed_bytes", "indexed_lines"))


# ---------------------------------------------------------------- scenes (L2)


def scene_blocks(profile: Profile) -> dict[str, list[SceneBlock]]:
    blocks = list(
        SceneBlock.objects.filter(profile=profile, removed=False)
        .annotate(member_count=Count("member_rows"))
        .order_by("-heat", "filename")
    )
    return {"live": [b for b in blocks if not b.archived], "archived": [b for b in blocks if b.archived]}


def scene_pool(profile: Profile) -> list[SceneEntry]:
    return list(SceneEntry.objects.filter(profile=profile).select_related("merged_into").order_by("-use_count", "scene_id"))


def block_for_profile(profile: Profile, block_id: int) -> SceneBlock | None:
    return SceneBlock.objects.filter(profile=profile, pk=block_id).first()


def block_members(block: SceneBlock) -> list[dict[str, Any]]:
    ids = list(block.member_rows.order_by("record_id").values_list("record_id", flat=True))
    records = {r.record_id: r for r in L1Record.objects.filter(profile_id=block.profile_id, record_id__in=ids).only("record_id", "content", "type", "deleted")}
    return [{"record_id": i, "record": records.get(i)} for i in ids]


def block_backups(block: SceneBlock, *, limit: int = 20) -> list[dict[str, Any]]:
    backups = list(block.backups.order_by("-id")[:limit])
    out = []
    newer = block.content
    for b in backups:
        out.append({"backup": b, "diff": line_diff(b.content, newer)})
        newer = b.content
    return out


# ---------------------------------------------------------------- hit statistics


def hit_totals(profile: Profile) -> dict[str, Any]:
    from django.db.models import Sum

    agg = RecordHits.objects.filter(profile=profile).aggregate(total=Sum("hits"), invalid=Sum("invalid_hits"), recalled=Count("id", filter=Q(hits__gt=0)))
    hits, invalid = agg["total"] or 0, agg["invalid"] or 0
    return {"hits": hits, "invalid": invalid, "effective": hits - invalid, "recalled": agg["recalled"] or 0,
            "invalid_ratio": (invalid / hits) if hits else 0.0}


def _with_records(profile: Profile, rows: list[RecordHits]) -> list[dict[str, Any]]:
    records = {r.record_id: r for r in L1Record.objects.filter(profile=profile, record_id__in=[h.record_id for h in rows]).only("record_id", "content", "type", "deleted")}
    return [{"hits": h, "record": records.get(h.record_id)} for h in rows]


def _ranked_hits(profile: Profile, ordering: tuple[str, ...], limit: int) -> list[RecordHits]:
    """The first `limit` recalled hit rows by `ordering` (over eff = hits - invalid_hits).

    Ranked on the keys alone, which the (profile, hits, invalid_hits, record_id) index
    covers, then only the winning rows are read: sorting whole rows would read every
    recalled row of the table first."""
    from django.db.models import F

    pks = list(
        RecordHits.objects.filter(profile=profile, hits__gt=0).annotate(eff=F("hits") - F("invalid_hits"))
        .order_by(*ordering).values_list("pk", flat=True)[:limit]
    )
    by_pk = RecordHits.objects.in_bulk(pks)
    return [by_pk[pk] for pk in pks if pk in by_pk]


def most_effective(profile: Profile, *, limit: int = 15) -> list[dict[str, Any]]:
    return _with_records(profile, _ranked_hits(profile, ("-eff", "-hits", "record_id"), limit))


def least_effective(profile: Profile, *, limit: int = 15) -> list[dict[str, Any]]:
    """Recalled records that helped least: most invalid hits relative to hits."""
    return _with_records(profile, _ranked_hits(profile, ("eff", "-invalid_hits", "record_id"), limit))


def recalls_per_day(profile: Profile, *, days: int = 30) -> dict[date, int]:
    from apps.hitstats.models import RecallEvent

    return _per_day(RecallEvent.objects.filter(profile=profile), days=days)


def never_recalled(profile: Profile) -> QuerySet[L1Record]:
    from django.db.models import Exists, OuterRef

    # A correlated probe of the (profile, record_id) unique index: the page stops early.
    recalled = RecordHits.objects.filter(profile=profile, record_id=OuterRef("record_id"), hits__gt=0)
    return L1Record.objects.filter(profile=profile, deleted=False).filter(~Exists(recalled)).order_by("created_at", "id")


def never_recalled_count(profile: Profile) -> int:
    """The size of `never_recalled`, as live records minus the live records with a hit.

    Record ids are unique per profile in both tables, so the difference is exact. Both
    counts stay inside indexes: the live count in (profile, deleted, type), the recalled
    ids come from (profile, hits, invalid_hits, record_id) and each probes
    (profile, record_id, deleted). One NOT IN pass over every live record read each row
    of the table instead."""
    live = L1Record.objects.filter(profile=profile, deleted=False)
    recalled = RecordHits.objects.filter(profile=profile, hits__gt=0).values("record_id")
    return live.count() - live.filter(record_id__in=recalled).count()


def recent_recalls(profile: Profile, *, limit: int = 20) -> list[Any]:
    from apps.hitstats.models import RecallEvent

    return list(RecallEvent.objects.filter(profile=profile).order_by("-id")[:limit])


# ---------------------------------------------------------------- persona (L3)


def persona_diff(profile: Profile) -> dict[str, Any]:
    """USER.md beside USER-temp.md, entry by entry: each proposal entry is an addition (no
    origin), an update (text differs from its origin) or unchanged; a live entry that no
    proposal entry claims is a deletion."""
    from apps.persona import document
    from apps.persona.models import PersonaProposal, PersonaVersion

    live_version = PersonaVersion.objects.filter(profile=profile).order_by("-number").first()
    live = list(live_version.entries) if live_version else []
    proposal = PersonaProposal.objects.filter(profile=profile).first()
    rows: list[dict[str, Any]] = []
    proposed_entries: list[dict[str, Any]] = list(proposal.entries) if proposal else []
    claimed = set()
    for index, entry in enumerate(proposed_entries):
        text, origin = entry.get("text", ""), entry.get("origin")
        if origin is None:
            kind = "added"
        elif origin != text:
            kind = "updated"
        else:
            kind = "unchanged"
        if origin is not None:
            claimed.add(origin)
        rows.append({"index": index, "kind": kind, "text": text, "origin": origin,
                     "diff": word_diff(origin, text) if kind == "updated" else None})
    base = list(proposal.base) if proposal else []
    deleted = [t for t in base if t not in claimed]
    for text in deleted:
        rows.append({"index": None, "kind": "deleted", "text": text, "origin": text, "diff": None})
    limit = int(profile_setting(profile, "l3.charLimit"))
    proposed_texts = [e.get("text", "") for e in proposed_entries]
    return {
        "live": live,
        "live_version": live_version,
        "proposal": proposal,
        "rows": rows,
        "changes": sum(1 for r in rows if r["kind"] != "unchanged"),
        "live_chars": document.chars(live),
        "merged_chars": document.chars(proposed_texts) if proposal else document.chars(live),
        "limit": limit,
        "stale": bool(proposal and live_version and proposal.base_version not in (None, live_version.number)),
    }


def persona_versions(profile: Profile, *, limit: int = 30) -> list[Any]:
    from apps.persona.models import PersonaVersion

    return list(PersonaVersion.objects.filter(profile=profile).order_by("-number")[:limit])
