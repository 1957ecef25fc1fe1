"""Hit statistics (SPEC §1.6): hits per recalled record, invalid hits, the recall log,
the per-turn recall budget and the `hit-stats.json` export."""

from __future__ import annotations

import atexit
import json
import logging
import os
import tempfile
import threading
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from apps.accounts.models import Profile
from apps.accounts.paths import confine, profile_dir, profile_subdir
from apps.accounts.services import audit_record
from apps.hitstats.models import RecallBudget, RecallEvent, RecallHit, RecordHits

logger = logging.getLogger(__name__)

HIT_STATS_FILE = "hit-stats.json"


class BudgetExceeded(Exception):
    def __init__(self, used: int, limit: int):
        super().__init__(f"recall budget of {limit} calls per turn is used up ({used} calls)")
        self.used = used
        self.limit = limit


def recall_budget_take(*, profile: Profile, session_key: str, turn: str, limit: int) -> int:
    """Count one recall call of this session turn; raises BudgetExceeded past `limit`.

    Without a turn id there is no turn to count against, so nothing is limited."""
    if not turn:
        return 0
    key = RecallBudget.key_of(session_key, turn)
    with transaction.atomic():
        try:
            with transaction.atomic():
                RecallBudget.objects.get_or_create(profile=profile, turn_key=key, defaults={"session_key": session_key, "turn": turn})
        except IntegrityError:  # a concurrent first call created it
            pass
        budget = RecallBudget.objects.select_for_update().get(profile=profile, turn_key=key)
        if budget.calls >= limit:
            raise BudgetExceeded(budget.calls, limit)
        RecallBudget.objects.filter(pk=budget.pk).update(calls=F("calls") + 1)
        return budget.calls + 1


def recall_budget_release(*, profile: Profile, session_key: str, turn: str) -> None:
    """Give back the call `recall_budget_take` counted when the recall then failed: the
    budget counts answered recalls only."""
    if not turn:
        return
    RecallBudget.objects.filter(profile=profile, turn_key=RecallBudget.key_of(session_key, turn), calls__gt=0).update(calls=F("calls") - 1)


def hits_record(
    *, profile: Profile, query: str, results: list[tuple[str, float]], session_key: str = "", turn: str = "",
    source: str = "recall_l1_records", degraded: bool = False, actor: str = "",
) -> RecallEvent:
    """Log one recall and give each returned record a hit, in one transaction of three
    statements whatever the number of records: the event, its `RecallHit` rows (one bulk
    insert) and the per-record counters (one upsert). The caller answers only after the
    commit, so a crash never loses a hit that was answered, and every reader (boosts, the
    dashboard, `clear_invalid_l1_records`, the fix guards) sees the hit at once."""
    now = timezone.now()
    ids = sorted(dict.fromkeys(rid for rid, _ in results))  # one lock order for concurrent recalls
    with transaction.atomic():
        event = RecallEvent.objects.create(
            profile=profile, query=query[:4000], session_key=session_key, turn=turn, source=source, actor=actor[:200],
            results=[{"recordId": rid, "score": round(score, 6)} for rid, score in results], degraded=degraded,
        )
        if results:
            RecallHit.objects.bulk_create(
                [RecallHit(event=event, profile=profile, record_id=rid, score=float(score)) for rid, score in results]
            )
            _count_hits(profile_id=profile.pk, record_ids=ids, at=now)
            _export_after_commit(profile, recall=RECALL_FILE_IN_BACKGROUND)
    return event


def _count_hits(*, profile_id: int, record_ids: list[str], at: Any) -> None:
    """`hits += 1, last_hit_at = at` for each id, creating the rows of first hits: one
    INSERT … ON CONFLICT DO UPDATE (SQLite ≥ 3.24 and PostgreSQL), atomic per row under
    concurrent recalls, with no read before the write."""
    table = connection.ops.quote_name(RecordHits._meta.db_table)
    when = connection.ops.adapt_datetimefield_value(at)
    values = ", ".join(["(%s, %s, 1, 0, %s)"] * len(record_ids))
    params: list[Any] = []
    for rid in record_ids:
        params += [profile_id, rid, when]
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (profile_id, record_id, hits, invalid_hits, last_hit_at) VALUES {values} "
            f"ON CONFLICT (profile_id, record_id) DO UPDATE SET hits = {table}.hits + 1, last_hit_at = excluded.last_hit_at",
            params,
        )


def hits_mark_invalid(*, profile: Profile, record_ids: list[str], actor: str, tool: str = "clear_invalid_l1_records") -> dict[str, list[str]]:
    """SPEC §3.15: `invalid_hits += 1` for each recalled id; never-recalled ids are skipped."""
    updated: list[str] = []
    skipped: list[str] = []
    with transaction.atomic():
        seen: set[str] = set()
        for rid in record_ids:
            if rid in seen:  # one feedback per id per call
                continue
            seen.add(rid)
            row = RecordHits.objects.select_for_update().filter(profile=profile, record_id=rid).first()
            if row is None or row.hits <= 0:
                skipped.append(rid)
                continue
            before = _row_dict(row)
            RecordHits.objects.filter(pk=row.pk).update(invalid_hits=F("invalid_hits") + 1)
            row.refresh_from_db()
            audit_record(
                profile=profile, actor=actor, tool=tool, action="invalid_hit", target_type="l1_record",
                target_id=rid, before=before, after=_row_dict(row),
            )
            updated.append(rid)
        if updated:
            _export_after_commit(profile)
    return {"updated": updated, "skipped": skipped}


def hits_for(*, profile: Profile, record_ids: list[str]) -> dict[str, RecordHits]:
    return {r.record_id: r for r in RecordHits.objects.filter(profile=profile, record_id__in=list(record_ids))}


def _row_dict(row: RecordHits) -> dict[str, Any]:
    return _stats_of(row.hits, row.invalid_hits, row.last_hit_at)


# --------------------------------------------------------------------- export
def _stats_of(hits: int, invalid: int, last: Any) -> dict[str, Any]:
    return {"hits": hits, "invalid_hits": invalid, "effective_hits": hits - invalid,
            "lastHitAt": last.isoformat().replace("+00:00", "Z") if last else None}


def _header(profile: Profile) -> dict[str, Any]:
    return {"version": 1, "profile": profile.slug, "updatedAt": timezone.now().isoformat().replace("+00:00", "Z")}


def hit_stats_export(*, profile: Profile) -> dict[str, Any]:
    """The `hit-stats.json` document: {version, profile, updatedAt, records: {id: stats}}."""
    rows = RecordHits.objects.filter(profile=profile).order_by("record_id").values_list(
        "record_id", "hits", "invalid_hits", "last_hit_at")
    return {**_header(profile), "records": {rid: _stats_of(h, i, last) for rid, h, i, last in rows}}


def hit_stats_path(profile: Profile):
    return profile_subdir(profile, "l1") / HIT_STATS_FILE


# The `records` object of the document, built by the database in one aggregate: reading
# the rows into Python and encoding them there cost ~15-40 ms per 1,000 rows on the
# (busy) development machine, on every recall of a profile below SYNC_ROWS_LIMIT. The
# text is the same JSON as `hit_stats_export` (tested on both databases): `lastHitAt` is
# `isoformat()` with `Z`, i.e. microseconds only when there are any.
_RECORDS_JSON_SQL = {
    "sqlite": (
        "SELECT json_group_object(record_id, json_object('hits', hits, 'invalid_hits', invalid_hits, "
        "'effective_hits', hits - invalid_hits, 'lastHitAt', "
        "CASE WHEN last_hit_at IS NULL THEN NULL ELSE replace(last_hit_at, ' ', 'T') || 'Z' END)) "
        "FROM (SELECT record_id, hits, invalid_hits, last_hit_at FROM {table} WHERE profile_id = %s ORDER BY record_id)"
    ),
    "postgresql": (
        "SELECT COALESCE(json_object_agg(record_id, json_build_object('hits', hits, 'invalid_hits', invalid_hits, "
        "'effective_hits', hits - invalid_hits, 'lastHitAt', CASE WHEN last_hit_at IS NULL THEN NULL "
        "WHEN EXTRACT(MICROSECONDS FROM last_hit_at)::bigint %% 1000000 = 0 "
        "THEN to_char(last_hit_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') "
        "ELSE to_char(last_hit_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') END) "
        "ORDER BY record_id), '{{}}')::text FROM {table} WHERE profile_id = %s"
    ),
}


def _records_json(profile: Profile) -> str:
    sql = _RECORDS_JSON_SQL.get(connection.vendor)
    if sql is None:  # another database: encode in Python
        return json.dumps(hit_stats_export(profile=profile)["records"], ensure_ascii=False)
    with connection.cursor() as cursor:
        cursor.execute(sql.format(table=connection.ops.quote_name(RecordHits._meta.db_table)), [profile.pk])
        row = cursor.fetchone()
    return str(row[0]) if row and row[0] is not None else "{}"


def hit_stats_write(*, profile: Profile) -> str:
    """Rewrite `profiles/<slug>/l1/hit-stats.json` atomically; returns the path. An `l1/`
    folder that is a link out of the profile (say to another profile's) is never written
    through: PathOutsideProfile."""
    confine(profile_dir(profile), "l1")
    path = hit_stats_path(profile)
    head = json.dumps(_header(profile), ensure_ascii=False)[:-1]
    data = f'{head}, "records": {_records_json(profile)}}}\n'
    fd, tmp = tempfile.mkstemp(prefix=".hit-stats-", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return str(path)


# Profiles with many recalled records rewrite the file from a background thread, at most
# once per COALESCE_SECONDS: a full rewrite of a large table must not be added to every
# recall. Small profiles rewrite synchronously, before the change's caller is answered.
SYNC_ROWS_LIMIT = 2000
COALESCE_SECONDS = 1.0
# A recall's hits leave the file to the background writer whatever the profile's size: the
# rewrite costs 0.5 ms (10 rows) to 1.7 ms (2,000 rows) and is the file's, not the hits'
# (they are committed before the answer; readers of the database see them at once). The
# file follows within COALESCE_SECONDS, at exit (`hit_stats_flush`), or with the next
# change after a crash. Tests switch it off unless marked `background_hit_stats`: the
# writer thread reads the database outside the test's transaction.
RECALL_FILE_IN_BACKGROUND = True
_pending: set[int] = set()
_pending_lock = threading.Lock()
_writer: threading.Thread | None = None
# Set to end the writer's wait early (`hit_stats_writer_stop`): a writer left sleeping by
# one caller must not write another's file at a moment nobody chose.
_wake = threading.Event()


def _export_after_commit(profile: Profile, *, recall: bool = False) -> None:
    transaction.on_commit(lambda: _write_or_schedule(profile, background=recall), robust=True)


def hit_stats_schedule(*, profile_id: int) -> None:
    """Rewrite the profile's hit-stats.json now (small profiles) or within about a second."""
    _write_or_schedule(Profile.objects.get(pk=profile_id))


def _write_or_schedule(profile: Profile, *, background: bool = False) -> None:
    if not background:
        try:
            small = RecordHits.objects.filter(profile_id=profile.pk)[: SYNC_ROWS_LIMIT + 1].count() <= SYNC_ROWS_LIMIT
        except Exception:  # the statistics are committed; the file is rewritten on the next change
            logger.exception("could not count the hit statistics of profile %s", profile.pk)
            return
        if small:
            _write_quietly(profile.pk, profile=profile)
            return
    global _writer
    with _pending_lock:
        _pending.add(profile.pk)
        if _writer is None or not _writer.is_alive():
            _writer = threading.Thread(target=_writer_loop, name="hit-stats-writer", daemon=True)
            _writer.start()


def hit_stats_flush() -> None:
    """Write the files still pending now, in this thread (at interpreter exit: the writer
    is a daemon thread, so a clean shutdown would otherwise drop its last second)."""
    with _pending_lock:
        batch = list(_pending)
        _pending.clear()
    for profile_id in batch:
        _write_quietly(profile_id)


atexit.register(hit_stats_flush)


def hit_stats_writer_stop(timeout: float = 5.0, *, discard: bool = False) -> None:
    """Wake the background writer, let it write what is pending (or drop it: `discard`) and
    end, and wait for it. The next schedule starts a fresh writer that waits a whole
    COALESCE_SECONDS again."""
    if discard:
        with _pending_lock:
            _pending.clear()
    writer = _writer
    if writer is not None and writer.is_alive():
        _wake.set()
        writer.join(timeout)
    _wake.clear()


def _writer_loop() -> None:
    from django.db import connection

    while True:
        _wake.wait(COALESCE_SECONDS)
        with _pending_lock:
            batch = list(_pending)
            _pending.clear()
            if not batch:
                global _writer
                _writer = None
                return
        try:
            for profile_id in batch:
                _write_quietly(profile_id)
        finally:
            connection.close()


def _write_quietly(profile_id: int, *, profile: Profile | None = None) -> None:
    try:
        hit_stats_write(profile=profile or Profile.objects.get(pk=profile_id))
    except Exception:  # the statistics are committed; the file is rewritten on the next change
        logger.exception("could not rewrite hit-stats.json for profile %s", profile_id)
