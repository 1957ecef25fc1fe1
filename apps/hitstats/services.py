"""Hit statistics (SPEC §1.6): hits per recalled record, invalid hits, the recall log,
the per-turn recall budget and the `hit-stats.json` export."""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
import time
from typing import Any

from django.db import IntegrityError, transaction
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
    """Log one recall and give each returned record a hit."""
    now = timezone.now()
    with transaction.atomic():
        event = RecallEvent.objects.create(
            profile=profile, query=query[:4000], session_key=session_key, turn=turn, source=source, actor=actor[:200],
            results=[{"recordId": rid, "score": round(score, 6)} for rid, score in results], degraded=degraded,
        )
        RecallHit.objects.bulk_create(
            [RecallHit(event=event, profile=profile, record_id=rid, score=float(score)) for rid, score in results]
        )
        ids = list(dict.fromkeys(rid for rid, _ in results))
        existing = set(RecordHits.objects.filter(profile=profile, record_id__in=ids).values_list("record_id", flat=True))
        if existing:
            RecordHits.objects.filter(profile=profile, record_id__in=existing).update(hits=F("hits") + 1, last_hit_at=now)
        for rid in ids:
            if rid in existing:
                continue
            try:
                with transaction.atomic():  # first hit of this record
                    RecordHits.objects.create(profile=profile, record_id=rid, hits=1, last_hit_at=now)
            except IntegrityError:  # a concurrent recall created it first
                RecordHits.objects.filter(profile=profile, record_id=rid).update(hits=F("hits") + 1, last_hit_at=now)
        if results:
            _export_after_commit(profile)
    return event


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
    return {
        "hits": row.hits, "invalid_hits": row.invalid_hits, "effective_hits": row.effective_hits,
        "lastHitAt": row.last_hit_at.isoformat().replace("+00:00", "Z") if row.last_hit_at else None,
    }


# --------------------------------------------------------------------- export
def hit_stats_export(*, profile: Profile) -> dict[str, Any]:
    """The `hit-stats.json` document: {version, profile, updatedAt, records: {id: stats}}."""
    rows = RecordHits.objects.filter(profile=profile).order_by("record_id")
    return {
        "version": 1,
        "profile": profile.slug,
        "updatedAt": timezone.now().isoformat().replace("+00:00", "Z"),
        "records": {row.record_id: _row_dict(row) for row in rows},
    }


def hit_stats_path(profile: Profile):
    return profile_subdir(profile, "l1") / HIT_STATS_FILE


def hit_stats_write(*, profile: Profile) -> str:
    """Rewrite `profiles/<slug>/l1/hit-stats.json` atomically; returns the path. An `l1/`
    folder that is a link out of the profile (say to another profile's) is never written
    through: PathOutsideProfile."""
    confine(profile_dir(profile), "l1")
    path = hit_stats_path(profile)
    data = json.dumps(hit_stats_export(profile=profile), ensure_ascii=False, indent=1)
    fd, tmp = tempfile.mkstemp(prefix=".hit-stats-", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(data + "\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return str(path)


# Profiles with many recalled records rewrite the file from a background thread, at most
# once per COALESCE_SECONDS: a full rewrite of 10k rows costs hundreds of milliseconds,
# which must not be added to every recall. Small profiles rewrite synchronously.
SYNC_ROWS_LIMIT = 2000
COALESCE_SECONDS = 1.0
_pending: set[int] = set()
_pending_lock = threading.Lock()
_writer: threading.Thread | None = None


def _export_after_commit(profile: Profile) -> None:
    transaction.on_commit(lambda: hit_stats_schedule(profile_id=profile.pk), robust=True)


def hit_stats_schedule(*, profile_id: int) -> None:
    """Rewrite the profile's hit-stats.json now (small profiles) or within about a second."""
    if RecordHits.objects.filter(profile_id=profile_id).count() <= SYNC_ROWS_LIMIT:
        _write_quietly(profile_id)
        return
    global _writer
    with _pending_lock:
        _pending.add(profile_id)
        if _writer is None or not _writer.is_alive():
            _writer = threading.Thread(target=_writer_loop, name="hit-stats-writer", daemon=True)
            _writer.start()


def _writer_loop() -> None:
    from django.db import connection

    while True:
        time.sleep(COALESCE_SECONDS)
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


def _write_quietly(profile_id: int) -> None:
    try:
        profile = Profile.objects.get(pk=profile_id)
        hit_stats_write(profile=profile)
    except Exception:  # the statistics are committed; the file is rewritten on the next change
        logger.exception("could not rewrite hit-stats.json for profile %s", profile_id)
