"""Read-only queries of the search app for the dashboard (no Qdrant access here)."""

from __future__ import annotations

from apps.accounts.models import Profile
from apps.search.models import IndexOp


def pending_index_ops(profile: Profile) -> int:
    """Index operations written by the records services and not yet applied to Qdrant."""
    return IndexOp.objects.filter(profile=profile).count()
