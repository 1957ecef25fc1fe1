"""Read-only queries over L1 records (dashboard, tools and the rules driver).

Every query is scoped by profile and sized by the page, never by the table (counts are
aggregates; lists are paged)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.db.models import Count, Max, Q, QuerySet

from apps.accounts.models import Profile
from apps.accounts.paths import PathOutsideProfile, confine, profile_dir
from apps.records.commit.validation import mode_types
from apps.records.models import ALL_TYPES, SCOPES, TASK_STATES, L1Change, L1Record
from apps.records.writes import iso_ms
from apps.scenes.services.cursor import resolve_l2_cursor, stored_l2_cursor
from apps.tools.errors import Forbidden, NotFound, invalid_field


def record_get(*, profile: Profile, record_id: str) -> L1Record:
    record = record_find(profile, record_id)
    if record is None:
        raise NotFound(f"no record {record_id!r} in this profile")
    return record


def record_find(profile: Profile, record_id: str) -> L1Record | None:
    return L1Record.objects.select_related("scene").filter(profile=profile, record_id=record_id).first()


def record_changes(record: L1Record) -> list[L1Change]:
    """The record's changes, oldest first (the one source of its history)."""
    return list(L1Change.objects.filter(profile_id=record.profile_id, record=record).order_by("id"))


def record_history(*, profile: Profile, record_id: str) -> list[dict[str, Any]]:
    """Every change of one record, oldest first: `{changeId, action, actor, at, state, note}`
    (`state` is the full record after the change; `note` holds evidence, reasons, links)."""
    record = record_get(profile=profile, record_id=record_id)
    return [
        {"changeId": c.pk, "action": c.action, "actor": c.actor, "at": iso_ms(c.created_at), "state": c.state, "note": c.note}
        for c in record_changes(record)
    ]


def record_lineage(*, profile: Profile, record_id: str) -> dict[str, Any]:
    """The records this one replaced (directly) and the record that replaced it."""
    record = record_get(profile=profile, record_id=record_id)
    replaced = list(
        L1Record.objects.filter(profile=profile, replaced_by=record_id).order_by("created_at").values_list("record_id", flat=True)
    )
    return {"recordId": record_id, "replaces": replaced, "replacedBy": record.replaced_by or None}


def related_records(record: L1Record, changes: list[L1Change]) -> dict[str, list[L1Record]]:
    """The records this one replaced (named in its history notes: `replaces` of a commit,
    `rewrittenFrom` of a fix) and the record that replaced it."""
    replaced_ids: list[str] = []
    for change in changes:
        note = change.note if isinstance(change.note, dict) else {}
        replaced_ids += [i for i in note.get("replaces") or [] if isinstance(i, str)]
        if isinstance(note.get("rewrittenFrom"), str):
            replaced_ids.append(note["rewrittenFrom"])
    fields = ("record_id", "content", "version", "deleted")
    replaced = list(L1Record.objects.filter(profile_id=record.profile_id, record_id__in=set(replaced_ids)).only(*fields))
    successor = None
    if record.replaced_by:
        successor = L1Record.objects.filter(profile_id=record.profile_id, record_id=record.replaced_by).only(*fields).first()
    return {"replaced": replaced, "successor": [successor] if successor else []}


def records_by_id(profile: Profile, record_ids: list[str], *, fields: tuple[str, ...] = ("record_id", "content", "type", "deleted")) -> dict[str, L1Record]:
    if not record_ids:
        return {}
    return {r.record_id: r for r in L1Record.objects.filter(profile=profile, record_id__in=set(record_ids)).only(*fields)}


# ---------------------------------------------------------------- counts


def types_for_mode(profile: Profile) -> tuple[str, ...]:
    return mode_types(profile)


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


def profile_records(profile: Profile) -> QuerySet[L1Record]:
    """Every record of the profile, live or not (for per-day charts)."""
    return L1Record.objects.filter(profile=profile)


def open_tasks(profile: Profile, *, limit: int = 8) -> tuple[int, list[L1Record]]:
    qs = L1Record.objects.filter(profile=profile, deleted=False, type="work_task").filter(Q(task_state__isnull=True) | Q(task_state="open"))
    return qs.count(), list(qs.order_by("-created_at", "-id")[:limit])


# ---------------------------------------------------------------- the filtered list

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
        f.date_from = parse_day(query.get("from", ""), "from", f.errors)
        f.date_to = parse_day(query.get("to", ""), "to", f.errors)
        f.q = query.get("q", "").strip()
        f.sort = query.get("sort", "-created").strip() or "-created"
        if f.sort not in SORTS:
            f.errors.append(f"unknown sort {f.sort!r}")
            f.sort = "-created"
        return f


def parse_day(raw: str, name: str, errors: list[str]) -> date | None:
    """A YYYY-MM-DD filter value (a UTC day); a bad one is named in `errors` and ignored."""
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
        # The stored generated column (records 0007), indexed with the live flag and the
        # default order: the JSON lookup read every row's metadata for the page's count.
        qs = qs.filter(scope_key=f.scope)
    if f.project:
        qs = qs.filter(metadata__project=f.project)
    if f.scene:
        from apps.scenes.models import SceneEntry

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


def project_choices(profile: Profile) -> list[str]:
    from apps.scenes.models import SceneEntry

    known = [p for p in (profile.known_projects or []) if isinstance(p, str)]
    seen = set(known)
    projects = list(known)
    for value in SceneEntry.objects.filter(profile=profile).exclude(project="").values_list("project", flat=True).distinct()[:200]:
        if value not in seen:
            seen.add(value)
            projects.append(value)
    return sorted(projects)


# ---------------------------------------------------------------- provenance


def records_from_messages(profile: Profile, session_key: str, refs: list[str]) -> dict[str, list[L1Record]]:
    """The records (every version, live or not) that cite each of these L0 message refs,
    among the records of that session (a record keeps the session it was drawn from)."""
    wanted = set(refs)
    out: dict[str, list[L1Record]] = {}
    if not wanted:
        return out
    rows = (
        L1Record.objects.filter(profile=profile, session_key=session_key)
        .only("record_id", "content", "type", "deleted", "version", "source_message_ids")
        .order_by("created_at", "id")
    )
    for record in rows:
        for ref in record.source_message_ids or []:
            if ref in wanted:
                out.setdefault(ref, []).append(record)
    return out


def record_versions(profile: Profile, record: L1Record, *, limit: int = 20) -> list[L1Record]:
    """The chain of versions this record belongs to, oldest first: the records it replaced
    (by rewrite or by a commit's `replaces`, followed back), itself, and its successors."""
    chain: dict[str, L1Record] = {record.record_id: record}
    frontier = [record]
    while frontier and len(chain) < limit:
        current = frontier.pop()
        older = related_records(current, record_changes(current))["replaced"]
        older += list(L1Record.objects.filter(profile=profile, replaced_by=current.record_id)[:limit])
        for old in older:
            if old.record_id not in chain:
                chain[old.record_id] = old
                frontier.append(old)
    successor = record
    while successor.replaced_by and len(chain) < limit:
        nxt = record_find(profile, successor.replaced_by)
        if nxt is None or nxt.record_id in chain:
            break
        chain[nxt.record_id] = nxt
        successor = nxt
    return sorted(chain.values(), key=lambda r: (r.version, r.created_at))


def facet_counts(profile: Profile, f: RecordFilters) -> dict[str, dict[str, int]]:
    """Counts next to the filter values (as Django admin's facets): for each of type,
    status and task state, how many records each value would give with the other filters
    as they are.

    One grouped query over (type, deleted, task_state) with those three filters cleared,
    which the (profile, type, task_state, deleted) index covers when no other filter is
    set; the three facets are then summed from its rows."""
    from dataclasses import replace

    base = filter_records(profile, replace(f, type="", status="all", task_state="", errors=[])).order_by()
    rows = list(base.values("type", "deleted", "task_state").annotate(n=Count("*")))

    def status_ok(deleted: bool) -> bool:
        return f.status == "all" or (f.status == "tombstoned") == deleted

    def task_of(row: dict[str, Any]) -> str:
        return row["task_state"] if row["task_state"] in ("done", "dropped") else "open"

    def task_ok(row: dict[str, Any]) -> bool:
        return not f.task_state or (row["type"] == "work_task" and task_of(row) == f.task_state)

    by_type: Counter[str] = Counter()
    by_status: Counter[str] = Counter()
    by_task: Counter[str] = Counter()
    for row in rows:
        if status_ok(row["deleted"]) and task_ok(row):
            by_type[row["type"]] += row["n"]
        if (not f.type or row["type"] == f.type) and task_ok(row):
            by_status["tombstoned" if row["deleted"] else "live"] += row["n"]
        if row["type"] == "work_task" and f.type in ("", "work_task") and status_ok(row["deleted"]):
            by_task[task_of(row)] += row["n"]
    return {
        "type": dict(by_type),
        "status": {"live": by_status["live"], "tombstoned": by_status["tombstoned"], "all": by_status["live"] + by_status["tombstoned"]},
        "task_state": {state: by_task[state] for state in TASK_STATES},
    }


def facets_are_cheap(f: RecordFilters) -> bool:
    """Whether the facet query stays inside an index: not with a word search, a scope or
    project filter (the facets' (type, deleted, task state) index does not hold them, so
    the facets would read every row of the scope) or a date range, each of which makes it
    one more scan of the rows the page's own count already read."""
    return not (f.q or f.scope or f.project or f.date_from or f.date_to)


EXPORT_LIMIT = 10_000
EXPORT_FIELDS = ("record_id", "type", "content", "priority", "scene_name", "metadata", "task_state", "deleted",
                 "version", "created_at", "updated_at", "replaced_by", "source_message_ids")


def export_rows(profile: Profile, f: RecordFilters, *, limit: int = EXPORT_LIMIT) -> list[dict[str, Any]]:
    """The filtered list as plain rows (the export's columns), at most `limit`."""
    rows = []
    for r in filter_records(profile, f).only(*EXPORT_FIELDS)[:limit]:
        rows.append({
            "recordId": r.record_id, "type": r.type, "content": r.content, "priority": r.priority,
            "scene": r.scene_name, "scope": r.scope, "project": r.project,
            "taskState": (r.task_state or "open") if r.type == "work_task" else None,
            "deleted": r.deleted, "version": r.version, "replacedBy": r.replaced_by or None,
            "createdAt": iso_ms(r.created_at), "updatedAt": iso_ms(r.updated_at),
            "sourceMessageIds": list(r.source_message_ids or []),
        })
    return rows


def changes_after(profile: Profile, change_id: int) -> int:
    """How many L1 changes the profile has after `change_id` (what the L2 cursor has not read)."""
    return L1Change.objects.filter(profile=profile, id__gt=change_id).count()


# ---------------------------------------------------------------- never recalled


def never_recalled(profile: Profile) -> QuerySet[L1Record]:
    """Live records no recall has returned, oldest first."""
    from django.db.models import Exists, OuterRef

    from apps.hitstats.models import RecordHits

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
    from apps.hitstats.models import RecordHits

    live = L1Record.objects.filter(profile=profile, deleted=False)
    recalled = RecordHits.objects.filter(profile=profile, hits__gt=0).values("record_id")
    return live.count() - live.filter(record_id__in=recalled).count()


# The tombstone reason of a record the user asked to forget (l1_commit tombstone items
# and the extractor's forget handling write it to metadata["tombstoneReason"]).
FORGET_REASON = "user-forget"


def records_forgotten(*, profile: Profile, limit: int = 200) -> list[L1Record]:
    """Tombstoned records the user asked to forget, newest first. Their content is for
    matching only: nothing a caller shows may repeat it."""
    return list(
        L1Record.objects.filter(profile=profile, deleted=True, metadata__tombstoneReason=FORGET_REASON)
        .order_by("-updated_at")[: max(1, limit)]
    )


def record_ids_existing(*, profile: Profile, ids: list[str]) -> set[str]:
    """Which of `ids` name L1 records of this profile (live or tombstoned)."""
    return set(L1Record.objects.filter(profile=profile, record_id__in=list(ids)).values_list("record_id", flat=True))


# ---------------------------------------------------------------- read_l1_increment

MAX_INCREMENT = 200


def l1_increment_read(*, profile: Profile, cursor: Any = None, max_records: int = 50, l1_dir: str | None = None) -> dict[str, Any]:
    """Records changed after the L2 cursor, each once at its newest state, in the order of
    their newest change (SPEC §3.8). Tombstones are included. The cursor is the scene
    organizer's (`apps.scenes.services.cursor`); the records and their changes are ours."""
    if not isinstance(max_records, int) or isinstance(max_records, bool) or not 1 <= max_records <= MAX_INCREMENT:
        raise invalid_field("maxRecords", f"must be between 1 and {MAX_INCREMENT}")
    if l1_dir is not None and l1_dir.strip():
        # The records live in the database; a directory is accepted for compatibility
        # with the seed's call shape, but only one inside the calling profile.
        try:
            confine(profile_dir(profile), l1_dir)
        except PathOutsideProfile as exc:
            raise Forbidden(f"l1Dir: {exc}", details=[{"field": "l1Dir", "message": str(exc)}]) from None
    after = (
        stored_l2_cursor(profile)
        if cursor is None or (isinstance(cursor, str) and not cursor.strip())
        else resolve_l2_cursor(profile=profile, value=cursor)
    )
    newest = (
        L1Change.objects.filter(profile=profile, id__gt=after)
        .values("record")
        .annotate(last=Max("id"))
        .order_by("last")
    )
    total = newest.count()
    page = list(newest[:max_records])
    by_pk = {r.pk: r for r in L1Record.objects.filter(profile=profile, pk__in=[row["record"] for row in page]).select_related("scene")}
    records = []
    for row in page:
        record = by_pk[row["record"]]
        data = record.as_dict()
        data["changeId"] = row["last"]
        records.append(data)
    next_cursor = page[-1]["last"] if page else after
    return {
        "records": records,
        "nextCursor": str(next_cursor),
        "totalNew": total,
        "returned": len(records),
        "truncated": total > len(records),
    }


# ---------------------------------------------------------------- the rules driver's reads


def records_with_ids(*, profile: Profile, record_ids: Iterable[str]) -> dict[str, L1Record]:
    """Full rows, live or tombstoned, by record id (ids that name no record are absent)."""
    ids = set(record_ids)
    if not ids:
        return {}
    return {r.record_id: r for r in L1Record.objects.filter(profile=profile, record_id__in=ids)}


def live_records_recent(*, profile: Profile, limit: int, since: datetime | None = None) -> list[tuple[str, str, list[str], str]]:
    """`(record_id, content, source_message_ids, session_key)` of the newest live records
    (updated at or after `since`), newest first, at most `limit`."""
    qs = L1Record.objects.filter(profile=profile, deleted=False)
    if since is not None:
        qs = qs.filter(updated_at__gte=since)
    rows = qs.order_by("-updated_at").values_list("record_id", "content", "source_message_ids", "session_key")[: max(1, limit)]
    return [(rid, content, list(sources or []), session or "") for rid, content, sources, session in rows]


def live_record_ids_containing_any(*, profile: Profile, texts: Iterable[str], limit: int = 20) -> set[str]:
    """Live records whose content contains one of `texts` (any case), newest first, at most
    `limit`: one query (one scan) for all of them."""
    needles = [t.strip() for t in texts if t.strip()]
    if not needles:
        return set()
    match = Q()
    for needle in dict.fromkeys(needles):
        match |= Q(content__icontains=needle)
    qs = L1Record.objects.filter(profile=profile, deleted=False).filter(match).order_by("-updated_at")
    return set(qs.values_list("record_id", flat=True)[: max(1, limit)])


def live_records_by_content_key(*, profile: Profile, keys: Iterable[str]) -> dict[str, L1Record]:
    """Live records whose normalised content has one of `keys` (`normalize.content_key`),
    one per key (the newest), in one query: an exact repeat needs no embedding to be known."""
    wanted = set(keys)
    if not wanted:
        return {}
    out: dict[str, L1Record] = {}
    for record in L1Record.objects.filter(profile=profile, deleted=False, content_key__in=wanted).order_by("-updated_at"):
        out.setdefault(record.content_key, record)
    return out


def scene_pks_of_records(*, profile: Profile, record_ids: Iterable[str]) -> set[int]:
    """The scene-pool entries (primary keys) the given records were attributed to."""
    ids = set(record_ids)
    if not ids:
        return set()
    rows = L1Record.objects.filter(profile=profile, record_id__in=ids, scene__isnull=False).values_list("scene_id", flat=True)
    return {int(pk) for pk in rows}


def scene_member_records(*, profile: Profile, scene_pks: Iterable[int]) -> list[L1Record]:
    """Live records attributed to any of the given scene-pool entries, oldest first."""
    pks = set(scene_pks)
    if not pks:
        return []
    return list(L1Record.objects.filter(profile=profile, deleted=False, scene_id__in=pks).order_by("created_at", "id"))


def live_records_of_types(*, profile: Profile, record_ids: Iterable[str], types: Iterable[str]) -> list[L1Record]:
    """Live records among `record_ids` whose type is one of `types`."""
    ids, kinds = set(record_ids), set(types)
    if not ids or not kinds:
        return []
    return list(L1Record.objects.filter(profile=profile, record_id__in=ids, deleted=False, type__in=kinds))
