"""The Qdrant index: one collection per profile, reached through an alias.

Named vectors: `dense` (cosine, the embedding model) and `sparse` (BM25 with IDF from the
index). Payload holds what recall filters on; tombstoned records are deleted, never
stored. The database stays the source of truth: every write comes from the outbox
(`drain_outbox`) and every search result is re-checked against the database.

Embedded local mode (`QDRANT_PATH`) by default; `QDRANT_URL` (+ `QDRANT_API_KEY`) for a
server — the same code path. Embedded Qdrant can be opened by one process only; a second
process gets `IndexLocked` with a message saying what to do.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction

from apps.accounts.models import Profile
from apps.search import embedding, sparse
from apps.search.mirror import FilterSpec, Mirror

logger = logging.getLogger(__name__)

DENSE = "dense"
SPARSE = "sparse"
_POINT_NS = uuid.UUID("5b0f3c52-8d4e-4a8e-9a55-6d8f3d0e7a11")


class IndexUnavailable(RuntimeError):
    """The index cannot serve right now (missing, locked, server down, model missing)."""


class IndexLocked(IndexUnavailable):
    pass


# ---------------------------------------------------------------------- client
_clients: dict[str, Any] = {}
_clients_lock = threading.Lock()


def _client_key() -> str:
    return f"url:{settings.QDRANT_URL}" if settings.QDRANT_URL else f"path:{settings.QDRANT_PATH}"


def describe_location() -> str:
    return settings.QDRANT_URL or str(settings.QDRANT_PATH)


def _embedded_forbidden() -> bool:
    """Job workers never open the embedded index: its single lock belongs to the web
    process, and a worker holding it would lock the server out."""
    import os
    import sys

    if os.environ.get("MEMORYWEB_INDEX_OPEN_EMBEDDED") == "1":
        return False
    if os.environ.get("MEMORYWEB_PROCESS_ROLE") in ("worker", "beat"):
        return True
    argv0 = os.path.basename(sys.argv[0]) if sys.argv else ""
    return argv0 == "celery" or (len(sys.argv) > 1 and sys.argv[1] in ("worker", "beat") and "celery" in argv0)


def _locked_message(path: str) -> str:
    return (
        f"the embedded index at {path} is held by another process (the running web server owns it). Go through "
        "the server's API, stop the server first, or use a Qdrant server (QDRANT_URL) so every process can open "
        "the index."
    )


def _probe_embedded_lock(path: str) -> None:
    """Fail fast when another process holds the embedded index: qdrant-client reads every
    stored point before it tries the lock, which costs seconds on a large index."""
    import os

    import portalocker

    lock_path = os.path.join(path, ".lock")
    if not os.path.exists(lock_path):
        return
    with open(lock_path, "r+") as handle:
        try:
            portalocker.lock(handle, portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING)
        except portalocker.exceptions.LockException:
            raise IndexLocked(_locked_message(path)) from None
        portalocker.unlock(handle)


def get_client():
    key = _client_key()
    client = _clients.get(key)
    if client is not None:
        return client
    with _clients_lock:
        client = _clients.get(key)
        if client is not None:
            return client
        from qdrant_client import QdrantClient

        if not settings.QDRANT_URL and _embedded_forbidden():
            raise IndexLocked(
                f"the embedded index at {settings.QDRANT_PATH} belongs to the web process; jobs reach it through "
                "the tool API (or configure QDRANT_URL)"
            )
        if not settings.QDRANT_URL:
            _probe_embedded_lock(str(settings.QDRANT_PATH))
        try:
            if settings.QDRANT_URL:
                client = QdrantClient(
                    url=settings.QDRANT_URL, api_key=settings.QDRANT_API_KEY or None, timeout=10, check_compatibility=False
                )
            else:
                client = QdrantClient(path=str(settings.QDRANT_PATH))
        except RuntimeError as exc:
            if "already accessed" in str(exc):
                raise IndexLocked(_locked_message(str(settings.QDRANT_PATH))) from exc
            raise IndexUnavailable(f"cannot open the index at {describe_location()}: {exc}") from exc
        except Exception as exc:
            raise IndexUnavailable(f"cannot open the index at {describe_location()}: {exc}") from exc
        _clients[key] = client
        return client


def close_clients() -> None:
    """Close every open client (tests; shutdown). Releases the embedded lock."""
    with _clients_lock:
        for client in _clients.values():
            try:
                client.close()
            except Exception:  # closing must not fail a shutdown
                logger.debug("closing a Qdrant client failed", exc_info=True)
        _clients.clear()


_local_lock = threading.RLock()
# Embedded mode only: collection name -> in-memory search mirror (see mirror.py).
_mirrors: dict[str, Mirror] = {}


def _embedded() -> bool:
    return not settings.QDRANT_URL


def _mirror(name: str) -> Mirror | None:
    """The loaded mirror of `name`, loading it from the store on first use (embedded
    mode; None with a server)."""
    if not _embedded():
        return None
    with _local_lock:
        mirror = _mirrors.get(name)
        if mirror is not None:
            return mirror
        client = get_client()
        mirror = Mirror(dim=_collection_dim(client, name))
        offset = None
        while True:
            points, offset = _call(client.scroll, collection_name=name, limit=2048, offset=offset,
                                   with_payload=True, with_vectors=True)
            for p in points:
                vec = p.vector or {}
                sp = vec.get(SPARSE)
                mirror.upsert(p.payload["record_id"], vec[DENSE], list(sp.indices) if sp else [],
                              list(sp.values) if sp else [], p.payload)
            if offset is None:
                break
        _mirrors[name] = mirror
        return mirror


def _loaded_mirror(name: str) -> Mirror | None:
    return _mirrors.get(name) if _embedded() else None


def _call(fn, *args, **kwargs):
    """Run a client call, turning transport/storage failures into IndexUnavailable.
    Embedded mode is not thread-safe: its calls are serialised."""
    try:
        if settings.QDRANT_URL:
            return fn(*args, **kwargs)
        with _local_lock:
            return fn(*args, **kwargs)
    except IndexUnavailable:
        raise
    except (ValueError, KeyError) as exc:
        raise IndexUnavailable(f"index error: {exc}") from exc
    except Exception as exc:
        raise IndexUnavailable(f"index at {describe_location()} failed: {exc.__class__.__name__}: {exc}") from exc


# ------------------------------------------------------------------ collections
def alias_name(profile: Profile) -> str:
    return f"mw-{profile.slug}"


def point_id(record_id: str) -> str:
    return str(uuid.uuid5(_POINT_NS, record_id))


def _aliases(client) -> dict[str, str]:
    return {a.alias_name: a.collection_name for a in _call(client.get_aliases).aliases}


def current_collection(profile: Profile) -> str | None:
    return _aliases(get_client()).get(alias_name(profile))


def _create_collection(client, name: str, dim: int) -> None:
    from qdrant_client import models as qm

    _call(
        client.create_collection,
        collection_name=name,
        vectors_config={DENSE: qm.VectorParams(size=dim, distance=qm.Distance.COSINE)},
        sparse_vectors_config={SPARSE: qm.SparseVectorParams(modifier=qm.Modifier.IDF)},
        metadata={"space": embedding.space_id()},
    )
    _spaces[name] = embedding.space_id()


# ------------------------------------------------------------ embedding space
# Collection name -> the embedding space its vectors were written in (collection metadata;
# "" for a collection built before spaces were recorded: raw vectors of the same model).
_spaces: dict[str, str] = {}
SPACE_CURRENT = "current"
SPACE_RAW = "raw"  # built before debiasing: query it with raw vectors until rebuilt
SPACE_NEAR = "near"  # same model, other transform or tokenizer version: current vectors are close
SPACE_FOREIGN = "foreign"  # another model: the dense side cannot be queried


def collection_space(name: str) -> str:
    space = _spaces.get(name)
    if space is None:
        info = _call(get_client().get_collection, name)
        space = _spaces[name] = str((info.config.metadata or {}).get("space") or "")
    return space


def space_state(name: str) -> str:
    """How the collection's space relates to this process's space."""
    space, current = collection_space(name), embedding.space_id()
    if space == current:
        return SPACE_CURRENT
    if _collection_dim(get_client(), name) != embedding.dimension():
        return SPACE_FOREIGN
    if not space:
        return SPACE_RAW
    return SPACE_NEAR if space.split("/")[0] == current.split("/")[0] else SPACE_FOREIGN


# Background rebuilds after a change of space (SPEC §4): profile slug -> progress.
REBUILD_RETRY_SECONDS = 60
_rebuilds: dict[str, dict[str, Any]] = {}
_rebuilds_lock = threading.Lock()


def rebuild_in_background(profile: Profile, *, reason: str) -> bool:
    """Start `reindex_profile` in a thread unless one runs for this profile already.
    Recall keeps answering from the old collection meanwhile (see `space_state`)."""
    with _rebuilds_lock:
        state = _rebuilds.get(profile.slug)
        if state is not None and state["state"] == "running":
            return False
        if state is not None and state["state"] == "failed" and time.time() - state["finishedAt"] < REBUILD_RETRY_SECONDS:
            return False  # a failing rebuild is retried at most once a minute, not on every recall
        state = _rebuilds[profile.slug] = {"state": "running", "reason": reason, "done": 0, "total": None,
                                           "startedAt": time.time(), "error": ""}
    thread = threading.Thread(target=_rebuild_run, args=(profile.pk, state), name=f"reindex-{profile.slug}", daemon=True)
    thread.start()
    state["thread"] = thread
    return True


def _rebuild_run(profile_id: int, state: dict[str, Any]) -> None:
    from django.db import connection

    from apps.records.models import L1Record

    try:
        profile = Profile.objects.get(pk=profile_id)
        state["total"] = L1Record.objects.filter(profile=profile, deleted=False).count()

        def progress(n: int) -> None:
            state["done"] += n

        result = reindex_profile(profile, progress=progress)
        state.update(state="done", finishedAt=time.time(), collection=result["collection"])
    except Exception as exc:  # reported through health; the next recall tries again
        logger.exception("background reindex of profile %s failed", profile_id)
        state.update(state="failed", error=f"{exc.__class__.__name__}: {exc}", finishedAt=time.time())
    finally:
        connection.close()


def rebuild_status() -> dict[str, dict[str, Any]]:
    return {slug: {k: v for k, v in st.items() if k != "thread"} for slug, st in _rebuilds.items()}


AUTO_REBUILD = True  # tests switch it off unless a rebuild is what they test


def check_space(profile: Profile, name: str) -> str:
    """The collection's space state; anything but current starts a background rebuild."""
    state = space_state(name)
    if state != SPACE_CURRENT and AUTO_REBUILD:
        rebuild_in_background(profile, reason=f"index space {collection_space(name) or '(before debiasing)'} "
                                              f"!= {embedding.space_id()}")
    return state


def _new_collection_name(profile: Profile) -> str:
    return f"mw-{profile.slug}-{time.strftime('%Y%m%d%H%M%S')}-{uuid.uuid4().hex[:6]}"


def _collection_dim(client, name: str) -> int:
    info = _call(client.get_collection, name)
    vectors = info.config.params.vectors
    return int(vectors[DENSE].size)


def ensure_collection(profile: Profile) -> str:
    """The profile's live collection, created on first use. Raises IndexUnavailable when the
    collection was built for another embedding dimension (run `manage.py reindex`)."""
    from qdrant_client import models as qm

    client = get_client()
    alias = alias_name(profile)
    name = _aliases(client).get(alias)
    dim = embedding.dimension()
    if name is None:
        name = _new_collection_name(profile)
        _create_collection(client, name, dim)
        _call(client.update_collection_aliases,
              change_aliases_operations=[qm.CreateAliasOperation(create_alias=qm.CreateAlias(collection_name=name, alias_name=alias))])
        return name
    existing = _collection_dim(client, name)
    check_space(profile, name)
    if existing != dim:
        raise IndexUnavailable(
            f"the index of profile {profile.slug} holds {existing}-dimensional vectors but the embedding model "
            f"gives {dim}; run `python manage.py reindex {profile.slug}`"
        )
    return name


# ---------------------------------------------------------------- payload/points
def project_key(project: str) -> str:
    """A project path in one comparable form (drive letters, slashes, case as the
    records app normalises them)."""
    if not project:
        return ""
    from apps.records.normalize import normalize_path, path_key

    return path_key(normalize_path(project) or project)


def record_payload(record) -> dict[str, Any]:
    meta = record.metadata or {}
    return {
        "record_id": record.record_id,
        "type": record.type,
        "scope": meta.get("scope") or "unknown",
        "project": project_key(meta.get("project") or ""),
        "scene_id": record.scene.scene_id if record.scene_id and record.scene else "",
        "task_state": (record.task_state or "open") if record.type == "work_task" else "",
        "priority": record.priority,
    }


def _point(record, dense_vec) -> Any:
    from qdrant_client import models as qm

    vec: dict[str, Any] = {DENSE: [float(x) for x in dense_vec]}
    sp = sparse.document_vector(record.content)
    if not sp.empty:
        vec[SPARSE] = qm.SparseVector(indices=sp.indices, values=sp.values)
    return qm.PointStruct(id=point_id(record.record_id), vector=vec,
                          payload={**record_payload(record), "space": embedding.space_id()})


def client_vector_usable(vector: list[float] | None, content: str) -> Any:
    """A client-supplied vector is used only when it has the model's dimension and is the
    model's own embedding of exactly `content` (recognised from this process's cache)."""
    import numpy as np

    if not vector:
        return None
    if len(vector) != embedding.dimension():
        return None
    cached = embedding.cached(content, kind=embedding.PASSAGE)
    if cached is None:
        return None
    if not np.allclose(np.asarray(vector, dtype=np.float32), cached, atol=1e-4):
        return None
    return cached


def upsert_records(profile: Profile, records: list, *, vectors: dict[str, Any] | None = None, collection: str | None = None) -> None:
    if not records:
        return
    vectors = vectors or {}
    client = get_client()
    name = collection or ensure_collection(profile)
    todo = [r for r in records if vectors.get(r.record_id) is None]
    if todo:
        embedded = embedding.embed([r.content for r in todo], kind=embedding.PASSAGE)
        for record, vec in zip(todo, embedded):
            vectors[record.record_id] = vec
    points = [_point(r, vectors[r.record_id]) for r in records]
    with _local_lock if _embedded() else _nolock():
        _call(client.upsert, collection_name=name, points=points, wait=True)
        mirror = _loaded_mirror(name)
        if mirror is not None:
            for point in points:
                sp = point.vector.get(SPARSE)
                mirror.upsert(point.payload["record_id"], point.vector[DENSE], list(sp.indices) if sp else [],
                              list(sp.values) if sp else [], point.payload)


def delete_points(profile: Profile, record_ids: Iterable[str], *, collection: str | None = None) -> None:
    from qdrant_client import models as qm

    record_ids = list(record_ids)
    ids = [point_id(r) for r in record_ids]
    if not ids:
        return
    record_ids = list(record_ids)
    name = collection or ensure_collection(profile)
    with _local_lock if _embedded() else _nolock():
        _call(get_client().delete, collection_name=name, points_selector=qm.PointIdsList(points=ids), wait=True)
        mirror = _loaded_mirror(name)
        if mirror is not None:
            for rid in record_ids:
                mirror.delete(rid)


def update_payloads(profile: Profile, records: list) -> None:
    """Payload-only changes; a record whose point is missing is upserted instead."""
    client = get_client()
    name = ensure_collection(profile)
    present = {p.id for p in _call(client.retrieve, collection_name=name, ids=[point_id(r.record_id) for r in records])}
    missing = [r for r in records if point_id(r.record_id) not in present]
    for record in records:
        if point_id(record.record_id) in present:
            payload = record_payload(record)
            with _local_lock if _embedded() else _nolock():
                _call(client.set_payload, collection_name=name, payload=payload, points=[point_id(record.record_id)], wait=True)
                mirror = _loaded_mirror(name)
                if mirror is not None:
                    mirror.set_payload(record.record_id, payload)
    if missing:
        upsert_records(profile, missing, collection=name)


def count_points(profile: Profile) -> int:
    name = current_collection(profile)
    if name is None:
        return 0
    return int(_call(get_client().count, collection_name=name, exact=True).count)


# ------------------------------------------------------------------- search
@dataclass
class Candidate:
    record_id: str
    score: float


def build_filter(spec: FilterSpec | None):
    """The Qdrant filter of a FilterSpec (server mode)."""
    from qdrant_client import models as qm

    if spec is None:
        return None
    must: list[Any] = []
    must_not: list[Any] = []
    if spec.types:
        must.append(qm.FieldCondition(key="type", match=qm.MatchAny(any=list(spec.types))))
    if spec.scene_ids:
        must.append(qm.FieldCondition(key="scene_id", match=qm.MatchAny(any=list(spec.scene_ids))))
    if spec.hide_closed:
        must_not.append(qm.FieldCondition(key="task_state", match=qm.MatchAny(any=["done", "dropped"])))
    if spec.scope_filter:
        should: list[Any] = [qm.FieldCondition(key="scope", match=qm.MatchAny(any=["global", "unknown"]))]
        if spec.project:
            should.append(qm.Filter(must=[
                qm.FieldCondition(key="scope", match=qm.MatchValue(value="self")),
                qm.FieldCondition(key="project", match=qm.MatchValue(value=spec.project)),
            ]))
        must.append(qm.Filter(should=should))
    if not must and not must_not:
        return None
    return qm.Filter(must=must or None, must_not=must_not or None)


def search_dense(profile: Profile, vector, *, limit: int, spec: FilterSpec | None = None) -> list[Candidate]:
    name = current_collection(profile)
    if name is None:
        return []
    mirror = _mirror(name)
    if mirror is not None:
        with _local_lock:
            return [Candidate(rid, score) for rid, score in mirror.search_dense(vector, limit, spec)]
    res = _call(get_client().query_points, collection_name=name, query=[float(x) for x in vector], using=DENSE,
                limit=limit, query_filter=build_filter(spec), with_payload=["record_id"])
    return [Candidate(p.payload["record_id"], float(p.score)) for p in res.points]


def search_sparse(profile: Profile, text: str, *, limit: int, spec: FilterSpec | None = None) -> list[Candidate]:
    from qdrant_client import models as qm

    name = current_collection(profile)
    sp = sparse.query_vector(text)
    if name is None or sp.empty:
        return []
    mirror = _mirror(name)
    if mirror is not None:
        with _local_lock:
            return [Candidate(rid, score) for rid, score in mirror.search_sparse(sp.indices, sp.values, limit, spec)]
    res = _call(get_client().query_points, collection_name=name,
                query=qm.SparseVector(indices=sp.indices, values=sp.values), using=SPARSE, limit=limit,
                query_filter=build_filter(spec), with_payload=["record_id"])
    return [Candidate(p.payload["record_id"], float(p.score)) for p in res.points]


class _nolock:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# --------------------------------------------------------------------- outbox
_drain_locks: dict[int, threading.Lock] = {}
_drain_locks_guard = threading.Lock()


def _drain_lock(profile_id: int) -> threading.Lock:
    with _drain_locks_guard:
        return _drain_locks.setdefault(profile_id, threading.Lock())


def drain_outbox(profile_id: int | None = None, *, batch: int = 256) -> dict[str, int]:
    """Apply pending index operations (one profile, or all). Never raises: a failure is
    recorded on the operations (`attempts`, `last_error`), which stay for the next drain.
    Returns counts {applied, failed, pending}."""
    from apps.search.models import IndexOp

    totals = {"applied": 0, "failed": 0, "pending": 0}
    if profile_id is None:
        profile_ids = list(IndexOp.objects.values_list("profile_id", flat=True).distinct())
    else:
        profile_ids = [profile_id]
    for pid in profile_ids:
        lock = _drain_lock(pid)
        if not lock.acquire(timeout=30):
            totals["pending"] += IndexOp.objects.filter(profile_id=pid).count()
            continue
        try:
            while True:
                done, failed = _drain_batch(pid, batch)
                totals["applied"] += done
                if failed:
                    totals["failed"] += failed
                    break
                if done == 0:
                    break
        finally:
            lock.release()
        totals["pending"] += IndexOp.objects.filter(profile_id=pid).count()
    return totals


def _drain_batch(profile_id: int, batch: int) -> tuple[int, int]:
    """One batch: decide each record's index state from the database, apply, then delete
    the applied operations. Returns (applied ops, failed ops)."""
    from apps.records.models import L1Record
    from apps.search.models import OP_PAYLOAD, OP_UPSERT, IndexOp

    ops = list(IndexOp.objects.filter(profile_id=profile_id).order_by("id")[:batch])
    if not ops:
        return 0, 0
    profile = Profile.objects.get(pk=profile_id)
    by_record: dict[str, list] = {}
    for op in ops:
        by_record.setdefault(op.record_id, []).append(op)
    rows = {r.record_id: r for r in L1Record.objects.filter(profile_id=profile_id, record_id__in=list(by_record)).select_related("scene")}
    to_delete: list[str] = []
    to_upsert: list = []
    to_payload: list = []
    vectors: dict[str, Any] = {}
    for record_id, record_ops in by_record.items():
        row = rows.get(record_id)
        if row is None or row.deleted:
            to_delete.append(record_id)
        elif any(op.op == OP_UPSERT for op in record_ops):
            to_upsert.append(row)
            last_vec = next((op.vector for op in reversed(record_ops) if op.op == OP_UPSERT and op.vector), None)
            try:
                usable = client_vector_usable(last_vec, row.content)
            except embedding.EmbeddingUnavailable:
                usable = None
            if usable is not None:
                vectors[record_id] = usable
        elif all(op.op == OP_PAYLOAD for op in record_ops):
            to_payload.append(row)
        else:
            to_upsert.append(row)
    try:
        delete_points(profile, to_delete)
        upsert_records(profile, to_upsert, vectors=vectors)
        if to_payload:
            update_payloads(profile, to_payload)
    except (IndexUnavailable, embedding.EmbeddingUnavailable) as exc:
        _mark_failed(ops, str(exc))
        return 0, len(ops)
    except Exception as exc:  # an unexpected failure must not escape into a committed request
        logger.exception("index drain failed for profile %s", profile_id)
        _mark_failed(ops, f"{exc.__class__.__name__}: {exc}")
        return 0, len(ops)
    IndexOp.objects.filter(pk__in=[op.pk for op in ops]).delete()
    return len(ops), 0


def _mark_failed(ops: list, error: str) -> None:
    from django.db.models import F
    from django.utils import timezone

    from apps.search.models import IndexOp

    IndexOp.objects.filter(pk__in=[op.pk for op in ops]).update(
        attempts=F("attempts") + 1, last_error=error[:2000], last_attempt_at=timezone.now()
    )


def schedule_drain(profile_id: int) -> None:
    """Drain this profile's outbox after the current transaction commits (once per
    transaction, however many operations it enqueued)."""
    from django.db import connection

    for entry in connection.run_on_commit:
        func = entry[1]
        if getattr(func, "_mw_drain_profile", None) == profile_id:
            return

    def _after_commit() -> None:
        try:
            drain_outbox(profile_id)
        except Exception:  # committed work must never fail because the index did
            logger.exception("post-commit index drain failed for profile %s", profile_id)

    _after_commit._mw_drain_profile = profile_id  # type: ignore[attr-defined]
    transaction.on_commit(_after_commit, robust=True)


def health() -> dict[str, Any]:
    from apps.search.selectors import index_outbox_stats

    outbox = index_outbox_stats()
    pending, failing = outbox["pending"], outbox["failing"]
    try:
        client = get_client()
        collections = len(_call(client.get_collections).collections)
    except IndexUnavailable as exc:
        return {"ok": False, "error": str(exc), "location": describe_location(), "pendingOps": pending}
    out = {"ok": True, "mode": "server" if settings.QDRANT_URL else "embedded", "collections": collections,
           "pendingOps": pending, "failingOps": failing}
    try:
        out["space"] = embedding.space_id()
    except embedding.EmbeddingUnavailable:
        pass
    rebuilds = rebuild_status()
    if rebuilds:
        out["rebuilds"] = rebuilds
    return out


# -------------------------------------------------------------------- reindex
def reindex_profile(profile: Profile, *, progress=None, batch: int = 128) -> dict[str, Any]:
    """Rebuild the profile's index into a new collection, then switch the alias over.

    Recall keeps using the old collection until the switch (no empty window). Records
    changed while the build ran are caught up before and after the switch, so nothing
    committed meanwhile is lost; the old collection is dropped last."""
    from datetime import timedelta

    from django.utils import timezone
    from qdrant_client import models as qm

    from apps.records.models import L1Record

    client = get_client()
    alias = alias_name(profile)
    old = _aliases(client).get(alias)
    new = _new_collection_name(profile)
    _create_collection(client, new, embedding.dimension())
    started = timezone.now() - timedelta(seconds=2)
    live = L1Record.objects.filter(profile=profile, deleted=False).select_related("scene").order_by("pk")
    done = 0
    try:
        chunk: list = []
        for record in live.iterator(chunk_size=batch):
            chunk.append(record)
            if len(chunk) >= batch:
                upsert_records(profile, chunk, collection=new)
                done += len(chunk)
                if progress:
                    progress(len(chunk))
                chunk = []
        if chunk:
            upsert_records(profile, chunk, collection=new)
            done += len(chunk)
            if progress:
                progress(len(chunk))
        second = timezone.now() - timedelta(seconds=2)
        caught = _catch_up(profile, new, since=started)
        if _aliases(client).get(alias) != old:  # another rebuild switched first: it wins
            raise IndexUnavailable(f"the alias {alias} moved while rebuilding; keeping the other build")
        ops: list[Any] = []
        if old is not None:
            ops.append(qm.DeleteAliasOperation(delete_alias=qm.DeleteAlias(alias_name=alias)))
        ops.append(qm.CreateAliasOperation(create_alias=qm.CreateAlias(collection_name=new, alias_name=alias)))
        _call(client.update_collection_aliases, change_aliases_operations=ops)
    except BaseException:
        try:
            _call(client.delete_collection, new)
            _mirrors.pop(new, None)
        except IndexUnavailable:
            logger.warning("could not drop the unfinished collection %s", new)
        raise
    caught += _catch_up(profile, new, since=second)
    if old is not None:
        try:
            _call(client.delete_collection, old)
            _mirrors.pop(old, None)
        except IndexUnavailable:
            logger.warning("could not drop the replaced collection %s", old)
    return {"profile": profile.slug, "collection": new, "replaced": old, "records": done, "caughtUp": caught}


def _catch_up(profile: Profile, collection: str, *, since) -> int:
    from apps.records.models import L1Record

    changed = list(L1Record.objects.filter(profile=profile, updated_at__gte=since).select_related("scene"))
    gone = [r.record_id for r in changed if r.deleted]
    live = [r for r in changed if not r.deleted]
    delete_points(profile, gone, collection=collection)
    upsert_records(profile, live, collection=collection)
    return len(changed)
