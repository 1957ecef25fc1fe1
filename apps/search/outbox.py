"""Write index operations into the outbox (inside the caller's transaction).

Each enqueue also asks for a drain of the profile's outbox right after the transaction
commits (once per transaction, however many operations it wrote: a commit of ten
records is one drain, which embeds the ten in one call); a failed drain leaves the
operations in the outbox with `attempts`/`last_error`, and `drain_outbox` (periodic
task, next commit) retries them."""

from __future__ import annotations

from apps.accounts.models import Profile
from apps.search.models import OP_DELETE, OP_PAYLOAD, OP_UPSERT, IndexOp

__all__ = ["OP_DELETE", "OP_PAYLOAD", "OP_UPSERT", "drain_outbox", "embed_ahead", "enqueue_index_op", "enqueue_index_ops"]

# (record id, op, client vector or None)
PendingOp = tuple[str, str, list[float] | None]


def enqueue_index_op(*, profile: Profile, record_id: str, op: str, vector: list[float] | None = None) -> None:
    enqueue_index_ops(profile=profile, ops=[(record_id, op, vector)])


def enqueue_index_ops(*, profile: Profile, ops: list[PendingOp]) -> None:
    """Several operations in one insert, in order (the drain applies them by id)."""
    if not ops:
        return
    rows = []
    for record_id, op, vector in ops:
        if op not in (OP_UPSERT, OP_DELETE, OP_PAYLOAD):
            raise ValueError(f"unknown index op {op!r}")
        if vector is not None and not _plausible(vector):
            vector = None  # never used anyway; the content is embedded again
        rows.append(IndexOp(profile=profile, record_id=record_id, op=op, vector=vector))
    IndexOp.objects.bulk_create(rows)
    schedule_drain(profile.pk)


def embed_ahead(contents: list[str]) -> None:
    """The contents a write is about to store and enqueue: their embedding starts now, in
    the background, so the drain after commit finds it done (`embedding.embed_ahead`).
    Only a head start: never raises, never waits, changes nothing that is stored."""
    from apps.search import embedding

    embedding.embed_ahead(contents, kind=embedding.PASSAGE)


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
