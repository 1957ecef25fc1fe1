"""Read-only queries over hit statistics and the recall log, for the dashboard."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, F, IntegerField, OuterRef, Q, QuerySet, Subquery, Sum

from apps.accounts.models import Profile
from apps.hitstats.models import RecallEvent, RecallHit, RecordHits


def hits_for(profile: Profile, record_ids: list[str]) -> dict[str, RecordHits]:
    if not record_ids:
        return {}
    return {h.record_id: h for h in RecordHits.objects.filter(profile=profile, record_id__in=record_ids)}


def hit_totals(profile: Profile) -> dict[str, Any]:
    agg = RecordHits.objects.filter(profile=profile).aggregate(total=Sum("hits"), invalid=Sum("invalid_hits"), recalled=Count("id", filter=Q(hits__gt=0)))
    hits, invalid = agg["total"] or 0, agg["invalid"] or 0
    return {"hits": hits, "invalid": invalid, "effective": hits - invalid, "recalled": agg["recalled"] or 0,
            "invalid_ratio": (invalid / hits) if hits else 0.0}


def _ranked_hits(profile: Profile, ordering: tuple[str, ...], limit: int, *, invalid_only: bool = False) -> list[RecordHits]:
    """The first `limit` recalled hit rows by `ordering` (over eff = hits - invalid_hits).

    Ranked on the keys alone, which the (profile, hits, invalid_hits, record_id) index
    covers, then only the winning rows are read: sorting whole rows would read every
    recalled row of the table first."""
    qs = RecordHits.objects.filter(profile=profile, hits__gt=0)
    if invalid_only:
        qs = qs.filter(invalid_hits__gt=0)
    pks = list(qs.annotate(eff=F("hits") - F("invalid_hits")).order_by(*ordering).values_list("pk", flat=True)[:limit])
    by_pk = RecordHits.objects.in_bulk(pks)
    return [by_pk[pk] for pk in pks if pk in by_pk]


def most_effective(profile: Profile, *, limit: int = 15) -> list[RecordHits]:
    return _ranked_hits(profile, ("-eff", "-hits", "record_id"), limit)


def least_effective(profile: Profile, *, limit: int = 15) -> list[RecordHits]:
    """Recalled records that helped least: most invalid hits relative to hits. Only
    records with at least one invalid hit qualify: one whose every recall was useful is
    not "least effective", however few its hits."""
    return _ranked_hits(profile, ("eff", "-invalid_hits", "record_id"), limit, invalid_only=True)


def recall_events(profile: Profile) -> QuerySet[RecallEvent]:
    """Every recall of the profile (for per-day charts)."""
    return RecallEvent.objects.filter(profile=profile)


def recent_recalls(profile: Profile, *, limit: int = 20) -> list[RecallEvent]:
    return list(RecallEvent.objects.filter(profile=profile).order_by("-id")[:limit])


def record_recalls(profile: Profile, record_id: str, *, limit: int = 20) -> list[RecallHit]:
    return list(
        RecallHit.objects.filter(profile=profile, record_id=record_id).select_related("event").order_by("-id")[:limit]
    )


def effective_hits_of(*, profile_field: str = "profile_id", record_field: str = "record_id") -> Subquery:
    """`hits - invalid_hits` of the outer row's record (NULL when never recalled), as an
    annotation: the recall's database check reads its candidates and their hits in one
    query (a probe of the (profile, record_id) unique index per candidate)."""
    return Subquery(
        RecordHits.objects.filter(profile_id=OuterRef(profile_field), record_id=OuterRef(record_field))
        .annotate(eff=F("hits") - F("invalid_hits")).values("eff")[:1],
        output_field=IntegerField(),
    )


def hit_counts(*, profile: Profile, record_ids: list[str]) -> dict[str, int]:
    """Hits per record id (records never recalled are absent)."""
    return {rid: h.hits for rid, h in hits_for(profile, record_ids).items()}


def effective_hit_counts(*, profile: Profile, record_ids: list[str]) -> dict[str, int]:
    """Hits minus invalid hits per record id (records never recalled are absent)."""
    return {rid: h.effective_hits for rid, h in hits_for(profile, record_ids).items()}
