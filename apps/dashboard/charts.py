"""Server-side SVG chart geometry. Templates draw the shapes; nothing runs in the browser."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from django.db.models import Count, QuerySet


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    label: str
    value: int
    show_label: bool
    label_x: float
    anchor: str


@dataclass(frozen=True)
class BarChart:
    bars: list[Bar]
    width: int
    height: int
    max_value: int
    total: int
    baseline: float


def daily_series(counts: dict[date, int], *, days: int, today: date) -> list[tuple[date, int]]:
    """One point per day for the last `days` days (gaps are zeros, not missing)."""
    start = today - timedelta(days=days - 1)
    return [(start + timedelta(days=i), counts.get(start + timedelta(days=i), 0)) for i in range(days)]


def bar_chart(series: list[tuple[date, int]], *, width: int = 1100, height: int = 150) -> BarChart:
    pad_bottom, pad_top = 18.0, 14.0
    plot_h = height - pad_bottom - pad_top
    n = max(len(series), 1)
    slot = width / n
    peak = max((v for _, v in series), default=0)
    label_every = max(1, n // 8)
    bars = []
    for i, (day, value) in enumerate(series):
        h = 0.0 if peak == 0 else plot_h * value / peak
        bars.append(
            Bar(
                x=round(i * slot + slot * 0.1, 2),
                y=round(pad_top + plot_h - h, 2),
                width=round(max(slot * 0.8, 1), 2),
                height=round(h, 2),
                label=day.strftime("%m-%d"),
                value=value,
                show_label=(i % label_every == 0) or i == n - 1,
                label_x=0.0 if i == 0 else (round(i * slot + slot / 2, 2) if i < n - 1 else float(width)),
                anchor="middle" if 0 < i < n - 1 else ("start" if i == 0 else "end"),
            )
        )
    return BarChart(bars=bars, width=width, height=height, max_value=peak, total=sum(v for _, v in series), baseline=pad_top + plot_h)


def cap_level(live: int, cap: int) -> str:
    """The scene cap's colour, by the same rule l2_commit reports (SPEC §3.9)."""
    from apps.scenes.services import scene_count_warning

    return scene_count_warning(live, cap)


def per_day(qs: QuerySet, *, days: int) -> dict[date, int]:
    """Rows of an owner's queryset per UTC day of `created_at` over the last `days` days
    (one grouped query; the owners hand out the querysets, this only counts them by day)."""
    from django.db import connection
    from django.db.models import CharField
    from django.db.models.functions import Cast, Substr, TruncDate
    from django.utils import timezone

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
