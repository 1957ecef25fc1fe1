"""Write index operations into the outbox (inside the caller's transaction)."""

from __future__ import annotations

from apps.accounts.models import Profile
from apps.search.models import OP_DELETE, OP_PAYLOAD, OP_UPSERT, IndexOp

__all__ = ["enqueue_index_op", "OP_UPSERT", "OP_DELETE", "OP_PAYLOAD"]


def enqueue_index_op(*, profile: Profile, record_id: str, op: str, vector: list[float] | None = None) -> None:
    if op not in (OP_UPSERT, OP_DELETE, OP_PAYLOAD):
        raise ValueError(f"unknown index op {op!r}")
    IndexOp.objects.create(profile=profile, record_id=record_id, op=op, vector=vector)
