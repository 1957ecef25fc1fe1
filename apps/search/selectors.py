"""Read-only queries of the search app's own state for the dashboard, health and metrics
(no Qdrant access here)."""

from __future__ import annotations

from typing import Any

from django.db.models import Min
from django.utils import timezone

from apps.accounts.models import Profile
from apps.search.models import IndexOp


def pending_index_ops(profile: Profile) -> int:
    """Index operations written by the records services and not yet applied to Qdrant."""
    return IndexOp.objects.filter(profile=profile).count()


def index_outbox_stats() -> dict[str, Any]:
    """Pending index operations, how many failed at least once, the oldest one's age."""
    oldest = IndexOp.objects.aggregate(oldest=Min("created_at"))["oldest"]
    return {
        "pending": IndexOp.objects.count(),
        "failing": IndexOp.objects.filter(attempts__gt=0).count(),
        "oldestSeconds": round((timezone.now() - oldest).total_seconds(), 1) if oldest else 0.0,
    }
