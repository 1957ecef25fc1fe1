"""Write index operations into the outbox (inside the caller's transaction).

Each enqueue also asks for a drain of the profile's outbox right after the transaction
commits (once per transaction); a failed drain leaves the operations in the outbox with
`attempts`/`last_error`, and `drain_outbox` (periodic task, next commit) retries them."""

from __future__ import annotations

from apps.accounts.models import Profile
from apps.search.models import OP_DELETE, OP_PAYLOAD, OP_UPSERT, IndexOp

__all__ = ["OP_DELETE", "OP_PAYLOAD", "OP_UPSERT", "drain_outbox", "enqueue_index_op"]


def enqueue_index_op(*, profile: Profile, record_id: str, op: str, vector: list[float] | None = None) -> None:
    if op not in (OP_UPSERT, OP_DELETE, OP_PAYLOAD):
        raise ValueError(f"unknown index op {op!r}")
    if vector is not None and not _plausible(vector):
        vector = None  # never used anyway; the content is embedded again
    IndexOp.objects.create(profile=profile, record_id=record_id, op=op, vector=vector)
    schedule_drain(profile.pk)


def drain_outbox(profile_id: int | None = None) -> dict[str, int]:
    """Apply pending index operations; never raises (see `apps.search.index`)."""
    from apps.search.index import drain_outbox as _drain

    return _drain(profile_id)


def schedule_drain(profile_id: int) -> None:
    from apps.search.index import schedule_drain as _schedule

    _schedule(profile_id)


def _plausible(vector: list[float]) -> bool:
    from apps.search import embedding

    try:
        return len(vector) == embedding.dimension()
    except embedding.EmbeddingUnavailable:
        return False
