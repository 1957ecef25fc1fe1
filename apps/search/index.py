"""The search index: one collection per profile, reached through an alias.

Named vectors: `dense` (cosine, the embedding model) and `sparse` (BM25 with IDF over the
live points). Payload holds what recall filters on; tombstoned records are deleted, never
stored. The database stays the source of truth: every write comes from the outbox
(`drain_outbox`) and every search result is re-checked against the database.

Engines (`apps/search/store.py`): with `QDRANT_URL` a Qdrant server; otherwise an embedded
index owned by this process — Qdrant Edge (`apps/search/edge.py`, `QDRANT_EDGE_PATH`) where
`qdrant-edge-py` is installed, else qdrant-client's local mode (`QDRANT_PATH`) searched
through the in-memory mirror. `MEMORYWEB_INDEX_ENGINE` = `auto` (default) | `edge` |
`local` forces one. A profile whose collection still lives in the other embedded engine
(an install that switched) is rebuilt from the database into the chosen one in the
background, and answers from the old one until the switch. An embedded index can be opened
by one process only; a second process gets `IndexLocked` with a message saying what to do.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction

from apps.accounts.models import Profile
from apps.search import edge, embedding, sparse
from apps.search.mirror import FilterSpec
from apps.search.store import (
    DENSE,
    SPARSE,
    ClientStore,
    IndexLocked,
    IndexPoint,
    IndexUnavailable,
    Store,
    locked_message,
    point_id,
)

logger = logging.getLogger(__name__)

__all__ = ["DENSE", "SPARSE", "IndexLocked", "IndexUnavailable", "point_id"]

ENGINES = ("auto", "edge", "local")


# ---------------------------------------------------------------------- engines
def engine() -> str:
    """The engine this process uses: `server`, `edge` or `local`."""
    if settings.QDRANT_URL:
        return "server"
    choice = (getattr(settings, "INDEX_ENGINE", "auto") or "auto").lower()
    if choice not in ENGINES:
        raise IndexUnavailable(f"MEMORYWEB_INDEX_ENGINE={choice!r}: use one of {', '.join(ENGINES)}")
    if choice == "auto":
        return "edge" if edge.available() else "local"
    return choice


def _location(kind: str) -> str:
    if kind == "server":
        return str(settings.QDRANT_URL)
    if kind == "edge":
        return str(settings.QDRANT_EDGE_PATH)
    return str(settings.QDRANT_PATH)


def describe_location() -> str:
    try:
        return _location(engine())
    except IndexUnavailable:
        return str(settings.QDRANT_PATH)


def _embedded_forbidden() -> bool:
    """Job workers never open the embedded index: its single lock belongs to the web
    process, and a worker holding it would lock the server out."""
    import sys

    if os.environ.get("MEMORYWEB_INDEX_OPEN_EMBEDDED") == "1":
        return False
    if os.environ.get("MEMORYWEB_PROCESS_ROLE") in ("worker", "beat"):
        return True
    argv0 = os.path.basename(sys.argv[0]) if sys.argv else ""
    return argv0 == "celery" or (len(sys.argv) > 1 and sys.argv[1] in ("worker", "beat") and "celery" in argv0)


def _probe_embedded_lock(path: str) -> None:
    """Fail fast when another process holds the local-mode index: qdrant-client reads every
    stored point before it tries the lock, which costs seconds on a large index."""
    import portalocker

    lock_path = os.path.join(path, ".lock")
    if not os.path.exists(lock_path):
        return
    with open(lock_path, "r+") as handle:
        try:
            portalocker.lock(handle, portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING)
        except portalocker.exceptions.LockException:
            raise IndexLocked(locked_message(path)) from None
        portalocker.unlock(handle)


_stores: dict[str, Store] = {}
_stores_lock = threading.Lock()


def _open_store(kind: str) -> Store:
    from qdrant_client import QdrantClient

    if kind != "server" and _embedded_forbidden():
        raise IndexLocked(
            f"the embedded index at {_location(kind)} belongs to the web process; jobs reach it through "
            "the tool API (or configure QDRANT_URL)"
        )
    location = _location(kind)
    if kind == "edge":
        if not edge.available():
            raise IndexUnavailable("MEMORYWEB_INDEX_ENGINE=edge but qdrant-edge-py is not installed on this platform; "
                                   "use MEMORYWEB_INDEX_ENGINE=auto or local")
        return edge.EdgeStore(location)
    if kind == "local":
        _probe_embedded_lock(location)
    try:
        if kind == "server":
            client = QdrantClient(url=location, api_key=settings.QDRANT_API_KEY or None, timeout=10,
                                  check_compatibility=False)
        else:
            client = QdrantClient(path=location)
    except RuntimeError as exc:
        if "already accessed" in str(exc):
            raise IndexLocked(locked_message(location)) from exc
        raise IndexUnavailable(f"cannot open the index at {location}: {exc}") from exc
    except Exception as exc:
        raise IndexUnavailable(f"cannot open the index at {location}: {exc}") from exc
    return ClientStore(client, kind=kind, location=location)


def store(kind: str | None = None) -> Store:
    """The open store of `kind` (default: this process's engine), opened on first use."""
    kind = kind or engine()
    key = f"{kind}:{_location(kind)}"
    found = _stores.get(key)
    if found is not None:
        return found
    with _stores_lock:
        found = _stores.get(key)
        if found is None:
            found = _stores[key] = _open_store(kind)
        return found


def get_client() -> Any:
    """The qdrant-client of the server or local-mode engine (that engine's own tools)."""
    kind = engine()
    opened = store(kind if kind != "edge" else "local")
    assert isinstance(opened, ClientStore)
    return opened.client


def close_clients() -> None:
    """Close every open store (tests; shutdown; exit). Releases the embedded lock."""
    with _stores_lock:
        for opened in _stores.values():
            try:
                opened.close()
            except Exception:  # closing must not fail a shutdown
                logger.debug("closing the index at %s failed", opened.location, exc_info=True)
        _stores.clear()
        _owners.clear()


_stopping = threading.Event()


def _close_at_exit() -> None:
    # Closing explicitly keeps qdrant-client's __del__ from running while the interpreter
    # is tearing down (it printed an ImportError traceback at every exit). A background
    # rebuild stops at its next batch (native code still running in a daemon thread while
    # the interpreter finalises can abort the process).
    _stopping.set()
    for state in list(_rebuilds.values()):
        thread = state.get("thread")
        if thread is not None and thread.is_alive():
            thread.join(timeout=10)
    close_clients()


import atexit  # noqa: E402

atexit.register(_close_at_exit)


def _embedded() -> bool:
    return not settings.QDRANT_URL


# ------------------------------------------------------------------ collections
# Collection name -> the store that holds it (a migrating profile's collection lives in
# the other embedded engine until its rebuild switches).
_owners: dict[str, Store] = {}


def alias_name(profile: Profile) -> str:
    return f"mw-{profile.slug}"


def _other_embedded(kind: str) -> str | None:
    return {"edge": "local", "local": "edge"}.get(kind)


def _legacy_aliases(kind: str) -> dict[str, str]:
    """Aliases of an embedded store read from its files, without opening it (opening
    local mode loads every point)."""
    try:
        if kind == "local":
            meta = Path(settings.QDRANT_PATH) / "meta.json"
            return dict(json.loads(meta.read_text()).get("aliases") or {}) if meta.exists() else {}
        if kind == "edge":
            path = Path(settings.QDRANT_EDGE_PATH) / "aliases.json"
            return dict(json.loads(path.read_text())) if path.exists() and edge.available() else {}
    except (OSError, ValueError):
        logger.warning("could not read the aliases of the %s index", kind, exc_info=True)
    return {}


def _locate(profile: Profile) -> tuple[Store, str] | None:
    """The store and collection that answer for `profile` now (None: nothing yet)."""
    primary = store()
    alias = alias_name(profile)
    name = primary.aliases().get(alias)
    if name is not None:
        _owners[name] = primary
        return primary, name
    other = _other_embedded(primary.kind)
    if other and alias in _legacy_aliases(other):
        legacy = store(other)
        name = legacy.aliases().get(alias)
        if name is not None:
            _owners[name] = legacy
            if AUTO_REBUILD:
                rebuild_in_background(profile, reason=f"index engine {legacy.kind} -> {primary.kind}")
            return legacy, name
    return None


def _store_of(name: str) -> Store:
    return _owners.get(name) or store()


def current_collection(profile: Profile) -> str | None:
    found = _locate(profile)
    return found[1] if found else None


def collection_names() -> list[str]:
    """The collections of this process's engine."""
    return store().collections()


def _create_collection(name: str, dim: int) -> None:
    primary = store()
    primary.create_collection(name, dim, embedding.space_id())
    _owners[name] = primary
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
        space = _spaces[name] = _store_of(name).space(name)
    return space


def space_state(name: str) -> str:
    """How the collection's space relates to this process's space."""
    space, current = collection_space(name), embedding.space_id()
    if space == current:
        return SPACE_CURRENT
    if _store_of(name).dim(name) != embedding.dimension():
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


def ensure_collection(profile: Profile) -> str:
    """The profile's live collection, created on first use. Raises IndexUnavailable when the
    collection was built for another embedding dimension (run `manage.py reindex`)."""
    found = _locate(profile)
    dim = embedding.dimension()
    if found is None:
        name = _new_collection_name(profile)
        _create_collection(name, dim)
        store().set_alias(alias_name(profile), name)
        return name
    owner, name = found
    existing = owner.dim(name)
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


def record_payload(record: Any) -> dict[str, Any]:
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


def _point(record: Any, dense_vec: Any) -> IndexPoint:
    sp = sparse.document_vector(record.content)
    return IndexPoint(record.record_id, np.asarray(dense_vec, dtype=np.float32), list(sp.indices), list(sp.values),
                      {**record_payload(record), "space": embedding.space_id()})


def client_vector_usable(vector: list[float] | None, content: str) -> Any:
    """A client-supplied vector is used only when it has the model's dimension and is the
    model's own embedding of exactly `content` (recognised from this process's cache)."""
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


def upsert_records(profile: Profile, records: list[Any], *, vectors: dict[str, Any] | None = None,
                   collection: str | None = None) -> None:
    if not records:
        return
    vectors = vectors or {}
    name = collection or ensure_collection(profile)
    todo = [r for r in records if vectors.get(r.record_id) is None]
    if todo:
        embedded = embedding.embed([r.content for r in todo], kind=embedding.PASSAGE)
        for record, vec in zip(todo, embedded):
            vectors[record.record_id] = vec
    _store_of(name).upsert(name, [_point(r, vectors[r.record_id]) for r in records])


def delete_points(profile: Profile, record_ids: Iterable[str], *, collection: str | None = None) -> None:
    ids = list(record_ids)
    if not ids:
        return
    name = collection or ensure_collection(profile)
    _store_of(name).delete(name, ids)


def update_payloads(profile: Profile, records: list[Any]) -> None:
    """Payload-only changes; a record whose point is missing is upserted instead."""
    name = ensure_collection(profile)
    owner = _store_of(name)
    present = owner.present(name, [r.record_id for r in records])
    for record in records:
        if record.record_id in present:
            owner.set_payload(name, record.record_id, record_payload(record))
    missing = [r for r in records if r.record_id not in present]
    if missing:
        upsert_records(profile, missing, collection=name)


def count_points(profile: Profile) -> int:
    name = current_collection(profile)
    if name is None:
        return 0
    return _store_of(name).count(name)


def stored_point(profile: Profile, record_id: str) -> tuple[np.ndarray, dict[str, Any]] | None:
    """A record's stored dense vector and payload (diagnostics and tests)."""
    name = current_collection(profile)
    return None if name is None else _store_of(name).point(name, record_id)


def compact(profile: Profile) -> dict[str, float]:
    """Optimise the profile's live collection now (edge engine; a no-op elsewhere)."""
    name = current_collection(profile)
    owner = _store_of(name) if name else None
    if name is None or not isinstance(owner, edge.EdgeStore):
        return {}
    return owner.compact(name)


# ------------------------------------------------------------------- search
@dataclass
class Candidate:
    record_id: str
    score: float


def search_dense(profile: Profile, vector: Any, *, limit: int, spec: FilterSpec | None = None) -> list[Candidate]:
    name = current_collection(profile)
    if name is None:
        return []
    hits = _store_of(name).search_dense(name, np.asarray(vector, dtype=np.float32), limit, spec)
    return [Candidate(rid, score) for rid, score in hits]


def search_sparse(profile: Profile, text: str, *, limit: int, spec: FilterSpec | None = None) -> list[Candidate]:
    name = current_collection(profile)
    sp = sparse.query_vector(text)
    if name is None or sp.empty:
        return []
    hits = _store_of(name).search_sparse(name, list(sp.indices), list(sp.values), limit, spec)
    return [Candidate(rid, score) for rid, score in hits]


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
    by_record: dict[str, list[Any]] = {}
    for op in ops:
        by_record.setdefault(op.record_id, []).append(op)
    rows = {r.record_id: r for r in L1Record.objects.filter(profile_id=profile_id, record_id__in=list(by_record)).select_related("scene")}
    to_delete: list[str] = []
    to_upsert: list[Any] = []
    to_payload: list[Any] = []
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


def _mark_failed(ops: list[Any], error: str) -> None:
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
        primary = store()
        collections = len(primary.collections())
    except IndexUnavailable as exc:
        return {"ok": False, "error": str(exc), "location": describe_location(), "pendingOps": pending}
    out: dict[str, Any] = {"ok": True, "mode": "server" if settings.QDRANT_URL else "embedded", "engine": primary.kind,
                           "collections": collections, "pendingOps": pending, "failingOps": failing}
    try:
        out["space"] = embedding.space_id()
    except embedding.EmbeddingUnavailable:
        pass
    rebuilds = rebuild_status()
    if rebuilds:
        out["rebuilds"] = rebuilds
    return out


# -------------------------------------------------------------------- reindex
def reindex_profile(profile: Profile, *, progress: Callable[[int], Any] | None = None, batch: int = 128) -> dict[str, Any]:
    """Rebuild the profile's index into a new collection of this process's engine, then
    switch the alias over.

    Recall keeps using the old collection until the switch (no empty window); the old one
    may live in the other embedded engine (an engine switch migrates this way). Records
    changed while the build ran are caught up before and after the switch, so nothing
    committed meanwhile is lost; the old collection is dropped last."""
    from datetime import timedelta

    from django.utils import timezone

    from apps.records.models import L1Record

    primary = store()
    alias = alias_name(profile)
    before = _locate(profile)
    old_store, old = before if before else (None, None)
    new = _new_collection_name(profile)
    _create_collection(new, embedding.dimension())
    started = timezone.now() - timedelta(seconds=2)
    live = L1Record.objects.filter(profile=profile, deleted=False).select_related("scene").order_by("pk")
    done = 0
    try:
        chunk: list[Any] = []
        for record in live.iterator(chunk_size=batch):
            chunk.append(record)
            if _stopping.is_set():
                raise IndexUnavailable("the process is exiting; the rebuild starts again at the next start")
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
        primary.finish_build(new)  # edge: HNSW built in a child process before the collection goes live
        second = timezone.now() - timedelta(seconds=2)
        caught = _catch_up(profile, new, since=started)
        now = _locate(profile)
        if (now[1] if now else None) != old:  # another rebuild switched first: it wins
            raise IndexUnavailable(f"the alias {alias} moved while rebuilding; keeping the other build")
        primary.set_alias(alias, new)
    except BaseException:
        try:
            primary.delete_collection(new)
        except IndexUnavailable:
            logger.warning("could not drop the unfinished collection %s", new)
        raise
    caught += _catch_up(profile, new, since=second)
    if old is not None and old_store is not None:
        try:
            if old_store is not primary:
                old_store.drop_alias(alias)
            old_store.delete_collection(old)
            _owners.pop(old, None)
        except IndexUnavailable:
            logger.warning("could not drop the replaced collection %s", old)
        if old_store is not primary:
            _release_if_empty(old_store)
    return {"profile": profile.slug, "collection": new, "replaced": old, "records": done, "caughtUp": caught}


def _release_if_empty(old_store: Store) -> None:
    """Close the other embedded engine once its last profile moved over (local mode
    keeps every point in memory while open)."""
    try:
        if old_store.collections():
            return
    except IndexUnavailable:
        return
    with _stores_lock:
        for key, opened in list(_stores.items()):
            if opened is old_store:
                del _stores[key]
    old_store.close()


def _catch_up(profile: Profile, collection: str, *, since: Any) -> int:
    from apps.records.models import L1Record

    changed = list(L1Record.objects.filter(profile=profile, updated_at__gte=since).select_related("scene"))
    gone = [r.record_id for r in changed if r.deleted]
    live = [r for r in changed if not r.deleted]
    delete_points(profile, gone, collection=collection)
    upsert_records(profile, live, collection=collection)
    return len(changed)
