"""The embedded index on Qdrant Edge (`qdrant-edge-py`).

Qdrant's own engine runs inside this process: each collection is one Edge shard (segments
on disk, HNSW for the dense vectors, an inverted index for the sparse ones, keyword payload
indexes for the filters) and nothing of the points is copied into Python memory. Layout
under the store folder (`QDRANT_EDGE_PATH`):

    .lock                          held (flock) by the process that owns the store
    aliases.json                   {"mw-<slug>": "<collection>"}, replaced atomically
    collections/<name>/meta.json   {"dim", "space", "shard": "<generation>"}
    collections/<name>/<gen>/      the Edge shard (its WAL makes every write durable)

Three rules shape the module:

* **IDF is computed here, over the live points.** Qdrant's IDF modifier counts deleted and
  overwritten points until their segment is vacuumed, and a corpus filter costs milliseconds
  per query at 100k points. The shard stores the BM25 term weights with a plain dot
  product; this module keeps the document frequency of every token among the live points
  that have a sparse vector (rebuilt from the shard when it is opened, updated by every
  write) and multiplies the query weights by `ln((N − df + 0.5) / (df + 0.5) + 1)`. That
  is Qdrant's formula over exactly the corpus qdrant-client's local mode and the mirror use.
* **Optimising never runs in this process.** `EdgeShard.optimize` holds the GIL for its
  whole run (minutes at 100k points on two cores: measured, docs/retrieval.md), which would
  stop every request thread. A child process optimises instead: a new collection is
  optimised in place before it goes live (`finish_build`); a live one is compacted by
  copying its points into a new generation, optimising that in a child, replaying the
  writes made meanwhile and switching generations (`compact`). Points written since the
  last optimisation sit in an unindexed segment that is searched exactly.
* **Queries run concurrently with writes.** `EdgeShard.query` releases the GIL; writes are
  serialised per collection; a generation switch waits for the queries in flight.
"""

from __future__ import annotations

import fcntl
import json
import logging
import math
import os
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from apps.search.mirror import FilterSpec
from apps.search.store import DENSE, SPARSE, Hit, IndexLocked, IndexPoint, IndexUnavailable, locked_message, point_id

logger = logging.getLogger(__name__)

T = TypeVar("T")
FORMAT = 1
KEYWORD_FIELDS = ("type", "scope", "project", "scene_id", "task_state")
# Filtered HNSW: Qdrant links the graph per value of these fields, so a filter on one of
# them stays fast and exact enough; the other fields are selective (project, scene) or
# nearly always true (scope, task_state) and are served by the payload index alone.
HNSW_FIELDS = ("type",)
FULL_SCAN_KB = 5_000
WRITE_BATCH = 256  # EdgeShard.update holds the GIL: keep each call short
# Compact a live collection when this many points were written since it was optimised
# and they are at least this share of it (searched exactly until then).
COMPACT_MIN_POINTS = 20_000
COMPACT_MIN_SHARE = 0.25
AUTO_COMPACT = True


def available() -> bool:
    """Whether qdrant-edge-py is installed (found, not imported: a process that does not
    use the engine does not load it)."""
    import importlib.util

    if "qdrant_edge" in sys.modules:
        return sys.modules["qdrant_edge"] is not None  # None: imports of it fail
    try:
        return importlib.util.find_spec("qdrant_edge") is not None
    except (ImportError, ValueError):
        return False


def idf(df: int, n: int) -> float:
    """Qdrant's IDF modifier."""
    return math.log((n - df + 0.5) / (df + 0.5) + 1.0)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:6]}.tmp")
    with open(tmp, "w") as fh:
        json.dump(data, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


class _Gate:
    """Queries enter freely; a generation switch waits until none is inside."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._closed = False

    def enter(self) -> None:
        with self._cond:
            while self._closed:
                self._cond.wait()
            self._readers += 1

    def leave(self) -> None:
        with self._cond:
            self._readers -= 1
            if not self._readers:
                self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            while self._readers:
                self._cond.wait()

    def open(self) -> None:
        with self._cond:
            self._closed = False
            self._cond.notify_all()


def _shard_config(dim: int) -> Any:
    import qdrant_edge as qe

    return qe.EdgeConfig(
        vectors={DENSE: qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine,
                                            datatype=qe.VectorStorageDatatype.Float16)},
        sparse_vectors={SPARSE: qe.EdgeSparseVectorParams()},  # plain dot product: IDF comes with the query
        # Filters estimated under FULL_SCAN_KB of vectors are scanned, larger ones walk the graph.
        # 5,000 (was 10,000): a type filter of ~10k points at 100k records walked the type links
        # in 0.7–0.9 ms but was scanned in 2.6–2.9 ms when its estimate fell under 10,000
        # (docs/retrieval.md, "full-scan threshold"); scene filters are searched exactly anyway.
        hnsw_config=qe.HnswIndexConfig(m=16, ef_construct=100, full_scan_threshold=FULL_SCAN_KB),
    )


def _create_shard(path: Path, dim: int) -> Any:
    import qdrant_edge as qe

    shard = qe.EdgeShard.create(str(path), _shard_config(dim))
    for name in KEYWORD_FIELDS:
        schema: Any = qe.PayloadSchemaType.Keyword if name in HNSW_FIELDS else qe.KeywordIndexParams(enable_hnsw=False)
        shard.update(qe.UpdateOperation.create_field_index(name, schema))
    return shard


def edge_filter(spec: FilterSpec | None) -> Any:
    """The Edge filter of a FilterSpec (the same conditions as the server's)."""
    import qdrant_edge as qe

    if spec is None:
        return None
    must: list[Any] = []
    must_not: list[Any] = []
    if spec.types:
        must.append(qe.FieldCondition(key="type", match=qe.MatchAny(any=list(spec.types))))
    if spec.scene_ids:
        must.append(qe.FieldCondition(key="scene_id", match=qe.MatchAny(any=list(spec.scene_ids))))
    if spec.hide_closed:
        must_not.append(qe.FieldCondition(key="task_state", match=qe.MatchAny(any=["done", "dropped"])))
    if spec.scope_filter:
        should: list[Any] = [qe.FieldCondition(key="scope", match=qe.MatchAny(any=["global", "unknown"]))]
        if spec.project:
            should.append(qe.Filter(must=[
                qe.FieldCondition(key="scope", match=qe.MatchValue(value="self")),
                qe.FieldCondition(key="project", match=qe.MatchValue(value=spec.project)),
            ]))
        must.append(qe.Filter(should=should))
    if not must and not must_not:
        return None
    return qe.Filter(must=must or None, must_not=must_not or None)


def _edge_point(p: IndexPoint) -> Any:
    import qdrant_edge as qe

    vec: dict[str, Any] = {DENSE: np.asarray(p.dense, dtype=np.float32).tolist()}
    if p.sparse_indices:
        vec[SPARSE] = qe.SparseVector(indices=[int(i) for i in p.sparse_indices], values=[float(v) for v in p.sparse_values])
    return qe.Point(point_id(p.record_id), vec, p.payload)


TIE_MARGIN = 8  # extra hits fetched so equal scores at the cut are ordered like the mirror's


def _ordered(hits: list[Hit], limit: int) -> list[Hit]:
    """Equal scores in record-id order (record ids follow insertion, which is the mirror's
    tie order): two engines then rank the same records the same way."""
    return sorted(hits, key=lambda h: (-h[1], h[0]))[:limit]


def optimize_offline(path: Path) -> float:
    """Optimise the (closed) shard at `path` in a child process; returns its seconds."""
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, str(Path(__file__).with_name("edge_optimize.py")), str(path)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise IndexUnavailable(f"optimising {path} failed: {(proc.stderr or proc.stdout).strip()[-500:]}")
    return time.perf_counter() - started


class _Collection:
    def __init__(self, store: EdgeStore, name: str) -> None:
        self.store = store
        self.name = name
        self.dir = store.root / "collections" / name
        meta = json.loads((self.dir / "meta.json").read_text())
        self.dim = int(meta["dim"])
        self.space = str(meta.get("space") or "")
        self.generation = str(meta["shard"])
        self.write_lock = threading.RLock()
        self.compact_lock = threading.Lock()
        self.gate = _Gate()
        self.journal: list[tuple[str, Any]] | None = None  # writes made while a compaction runs
        self.df: dict[int, int] = {}
        self.n_sparse = 0
        self.unindexed = 0
        self.shard: Any = None
        self.compacting: threading.Thread | None = None
        self._open()

    # ------------------------------------------------------------------ state
    def _open(self) -> None:
        import qdrant_edge as qe

        for leftover in self.dir.iterdir():  # generations of an interrupted compaction
            if leftover.is_dir() and leftover.name != self.generation:
                shutil.rmtree(leftover, ignore_errors=True)
        path = self.dir / self.generation
        self.shard = qe.EdgeShard.load(str(path)) if (path / "segments").exists() else _create_shard(path, self.dim)
        self._rebuild_df()
        info = self.shard.info()
        self.unindexed = max(0, int(info.points_count) - int(info.indexed_vectors_count))

    def _rebuild_df(self) -> None:
        import qdrant_edge as qe

        df: dict[int, int] = {}
        n = 0
        offset: Any = None
        while True:
            records, offset = self.shard.scroll(qe.ScrollRequest(offset=offset, limit=4096, with_payload=False,
                                                                  with_vector=[SPARSE]))
            for rec in records:
                sp = (rec.vector or {}).get(SPARSE) if isinstance(rec.vector, dict) else None
                if sp is not None and sp.indices:
                    n += 1
                    for i in sp.indices:
                        df[i] = df.get(i, 0) + 1
            if offset is None:
                break
        self.df, self.n_sparse = df, n

    def _write_meta(self) -> None:
        _write_json(self.dir / "meta.json", {"format": FORMAT, "dim": self.dim, "space": self.space,
                                             "shard": self.generation})

    def _count_sparse(self, sign: int, sparse: Any) -> None:
        if sparse is None or not sparse.indices:
            return
        self.n_sparse += sign
        for i in sparse.indices:
            left = self.df.get(i, 0) + sign
            if left > 0:
                self.df[i] = left
            else:
                self.df.pop(i, None)

    def _old_sparse(self, ids: list[str]) -> list[Any]:
        found = self.shard.retrieve(ids, with_payload=False, with_vector=[SPARSE])
        return [(rec.vector or {}).get(SPARSE) if isinstance(rec.vector, dict) else None for rec in found]

    # ----------------------------------------------------------------- writes
    def apply(self, kind: str, arg: Any) -> None:
        """One write (`upsert` of edge points, `delete` of point ids, `payload` (id,
        payload)) on the live shard, the IDF counts, and the journal of a compaction."""
        import qdrant_edge as qe

        with self.write_lock:
            if kind == "upsert":
                for start in range(0, len(arg), WRITE_BATCH):
                    chunk = arg[start:start + WRITE_BATCH]
                    for old in self._old_sparse([p.id for p in chunk]):
                        self._count_sparse(-1, old)
                    self.shard.update(qe.UpdateOperation.upsert_points(chunk))
                    for p in chunk:
                        vec = p.vector
                        self._count_sparse(+1, vec.get(SPARSE) if isinstance(vec, dict) else None)
                self.unindexed += len(arg)
            elif kind == "delete":
                for old in self._old_sparse(list(arg)):
                    self._count_sparse(-1, old)
                self.shard.update(qe.UpdateOperation.delete_points(list(arg)))
            elif kind == "payload":
                pid, payload = arg
                self.shard.update(qe.UpdateOperation.set_payload([pid], payload))
            if self.journal is not None:
                self.journal.append((kind, arg))
        if kind == "upsert" and AUTO_COMPACT and self.needs_compaction() and self.store.is_live(self.name):
            self.store.compact_in_background(self.name)  # a collection still being built is optimised by finish_build

    def needs_compaction(self) -> bool:
        if self.compacting is not None and self.compacting.is_alive():
            return False
        return self.unindexed >= COMPACT_MIN_POINTS and self.unindexed >= COMPACT_MIN_SHARE * max(1, self.n_sparse)

    # ---------------------------------------------------------------- queries
    def query(self, request: Any) -> list[Any]:
        self.gate.enter()
        try:
            result: list[Any] = self.shard.query(request)
            return result
        finally:
            self.gate.leave()

    # ---------------------------------------------------------- optimisation
    def finish_build(self) -> float:
        """Optimise this (not yet live) collection in place, in a child process."""
        with self.compact_lock, self.write_lock:
            self.gate.close()
            try:
                self.shard.close()
                seconds = optimize_offline(self.dir / self.generation)
            finally:
                import qdrant_edge as qe

                self.shard = qe.EdgeShard.load(str(self.dir / self.generation))
                self.gate.open()
            info = self.shard.info()
            self.unindexed = max(0, int(info.points_count) - int(info.indexed_vectors_count))
            return seconds

    def compact(self) -> dict[str, float]:
        """Rebuild the live shard as an optimised generation without stopping reads or
        writes: copy, optimise in a child, replay what was written meanwhile, switch."""
        import qdrant_edge as qe

        with self.compact_lock:
            started = time.perf_counter()
            new_gen = f"g{int(time.time() * 1000)}-{uuid.uuid4().hex[:4]}"
            new_path = self.dir / new_gen
            with self.write_lock:
                self.journal = []
                self.shard.flush()
            try:
                fresh = _create_shard(new_path, self.dim)
                offset: Any = None
                copied = 0
                while True:
                    self.gate.enter()
                    try:
                        records, offset = self.shard.scroll(qe.ScrollRequest(offset=offset, limit=WRITE_BATCH,
                                                                              with_payload=True, with_vector=True))
                    finally:
                        self.gate.leave()
                    if records:
                        fresh.update(qe.UpdateOperation.upsert_points(
                            [qe.Point(r.id, r.vector, r.payload) for r in records]))
                        copied += len(records)
                    if offset is None:
                        break
                fresh.close()
                copy_seconds = time.perf_counter() - started
                optimise_seconds = optimize_offline(new_path)
                fresh = qe.EdgeShard.load(str(new_path))
                with self.write_lock:
                    journal, self.journal = self.journal or [], None
                    for kind, arg in journal:
                        if kind == "upsert":
                            fresh.update(qe.UpdateOperation.upsert_points(arg))
                        elif kind == "delete":
                            fresh.update(qe.UpdateOperation.delete_points(list(arg)))
                        elif kind == "payload":
                            fresh.update(qe.UpdateOperation.set_payload([arg[0]], arg[1]))
                    fresh.flush()
                    self.gate.close()
                    old, old_gen = self.shard, self.generation
                    self.shard, self.generation = fresh, new_gen
                    self._write_meta()
                    self.gate.open()
                    info = fresh.info()
                    self.unindexed = max(0, int(info.points_count) - int(info.indexed_vectors_count))
                old.close()
                shutil.rmtree(self.dir / old_gen, ignore_errors=True)
            except BaseException:
                self.journal = None
                shutil.rmtree(new_path, ignore_errors=True)
                raise
            return {"points": float(copied), "copySeconds": copy_seconds, "optimiseSeconds": optimise_seconds,
                    "seconds": time.perf_counter() - started, "replayed": float(len(journal))}

    def close(self) -> None:
        with self.write_lock:
            self.gate.close()
            try:
                self.shard.close()
            finally:
                self.gate.open()


class EdgeStore:
    """The Edge collections and aliases under one folder, owned by this process."""

    kind = "edge"

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.location = str(self.root)
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "collections").mkdir(exist_ok=True)
        self._lock_fh = open(self.root / ".lock", "a+")  # noqa: SIM115 (held until close())
        try:
            fcntl.flock(self._lock_fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock_fh.close()
            raise IndexLocked(locked_message(self.location)) from None
        self._meta_lock = threading.RLock()
        self._collections: dict[str, _Collection] = {}
        aliases_path = self.root / "aliases.json"
        self._aliases: dict[str, str] = json.loads(aliases_path.read_text()) if aliases_path.exists() else {}
        live = set(self._aliases.values())
        for folder in (self.root / "collections").iterdir():
            # A collection no alias names is what an interrupted rebuild left behind.
            if folder.is_dir() and folder.name not in live:
                shutil.rmtree(folder, ignore_errors=True)
        self.closed = False

    def _call(self, fn: Callable[[], T]) -> T:
        if self.closed:
            raise IndexUnavailable(f"the index at {self.location} is closed")
        try:
            return fn()
        except IndexUnavailable:
            raise
        except Exception as exc:
            raise IndexUnavailable(f"index at {self.location} failed: {exc.__class__.__name__}: {exc}") from exc

    def _coll(self, name: str) -> _Collection:
        coll = self._collections.get(name)
        if coll is not None:
            return coll
        with self._meta_lock:
            coll = self._collections.get(name)
            if coll is None:
                if not (self.root / "collections" / name / "meta.json").exists():
                    raise IndexUnavailable(f"index error: collection {name} not found")
                coll = self._collections[name] = self._call(lambda: _Collection(self, name))
            return coll

    # -------------------------------------------------------------- collections
    def aliases(self) -> dict[str, str]:
        return dict(self._aliases)

    def is_live(self, name: str) -> bool:
        return name in self._aliases.values()

    def collections(self) -> list[str]:
        return sorted(p.name for p in (self.root / "collections").iterdir() if (p / "meta.json").exists())

    def create_collection(self, name: str, dim: int, space: str) -> None:
        with self._meta_lock:
            folder = self.root / "collections" / name
            folder.mkdir(parents=True)
            _write_json(folder / "meta.json", {"format": FORMAT, "dim": dim, "space": space, "shard": "g1"})
            self._coll(name)

    def delete_collection(self, name: str) -> None:
        with self._meta_lock:
            coll = self._collections.pop(name, None)
            if coll is not None:
                self._call(coll.close)
            shutil.rmtree(self.root / "collections" / name, ignore_errors=True)

    def _save_aliases(self, aliases: dict[str, str]) -> None:
        _write_json(self.root / "aliases.json", aliases)
        self._aliases = aliases

    def set_alias(self, alias: str, name: str) -> None:
        with self._meta_lock:
            self._save_aliases({**self._aliases, alias: name})

    def drop_alias(self, alias: str) -> None:
        with self._meta_lock:
            if alias in self._aliases:
                self._save_aliases({k: v for k, v in self._aliases.items() if k != alias})

    def dim(self, name: str) -> int:
        return self._coll(name).dim

    def space(self, name: str) -> str:
        return self._coll(name).space

    # ------------------------------------------------------------------ points
    def upsert(self, name: str, points: list[IndexPoint]) -> None:
        coll = self._coll(name)
        edge_points = [_edge_point(p) for p in points]
        self._call(lambda: coll.apply("upsert", edge_points))

    def delete(self, name: str, record_ids: list[str]) -> None:
        coll = self._coll(name)
        self._call(lambda: coll.apply("delete", [point_id(r) for r in record_ids]))

    def set_payload(self, name: str, record_id: str, payload: dict[str, Any]) -> None:
        coll = self._coll(name)
        self._call(lambda: coll.apply("payload", (point_id(record_id), payload)))

    def present(self, name: str, record_ids: list[str]) -> set[str]:
        coll = self._coll(name)
        by_point = {point_id(r): r for r in record_ids}
        found = self._call(lambda: coll.shard.retrieve(list(by_point), with_payload=False, with_vector=False))
        return {by_point[str(r.id)] for r in found}

    def count(self, name: str) -> int:
        import qdrant_edge as qe

        coll = self._coll(name)
        return int(self._call(lambda: coll.shard.count(qe.CountRequest(exact=True))))

    def point(self, name: str, record_id: str) -> tuple[np.ndarray, dict[str, Any]] | None:
        coll = self._coll(name)
        found = self._call(lambda: coll.shard.retrieve([point_id(record_id)], with_payload=True, with_vector=[DENSE]))
        if not found:
            return None
        vec: Any = found[0].vector
        return np.asarray(vec[DENSE], dtype=np.float32), dict(found[0].payload or {})

    def scroll(self, name: str, batch: int = 1024) -> Iterator[IndexPoint]:
        import qdrant_edge as qe

        coll = self._coll(name)
        offset: Any = None
        while True:
            request = qe.ScrollRequest(offset=offset, limit=batch, with_payload=True, with_vector=True)
            records, offset = self._call(lambda: coll.shard.scroll(request))  # noqa: B023 (called at once)
            for r in records:
                vec: Any = r.vector or {}
                sp = vec.get(SPARSE)
                payload = dict(r.payload or {})
                yield IndexPoint(str(payload["record_id"]), np.asarray(vec[DENSE], dtype=np.float32),
                                 list(sp.indices) if sp else [], list(sp.values) if sp else [], payload)
            if offset is None:
                break

    # ------------------------------------------------------------------ search
    def search_dense(self, name: str, vector: np.ndarray, limit: int, spec: FilterSpec | None) -> list[Hit]:
        import qdrant_edge as qe

        coll = self._coll(name)
        # A scene filter is selective and its field has no HNSW links: the filtered graph walk
        # loses neighbours and time, so its points are compared exactly (payload index first).
        params = qe.SearchParams(exact=True) if spec is not None and spec.scene_ids else None
        request = qe.QueryRequest(limit=limit + TIE_MARGIN, query=qe.Query.Nearest(
            np.asarray(vector, dtype=np.float32).tolist(), using=DENSE), filter=edge_filter(spec), with_payload=["record_id"],
            params=params)
        found = self._call(lambda: coll.query(request))
        return _ordered([(str((p.payload or {})["record_id"]), float(p.score)) for p in found], limit)

    def search_sparse(self, name: str, indices: list[int], values: list[float], limit: int,
                      spec: FilterSpec | None) -> list[Hit]:
        import qdrant_edge as qe

        coll = self._coll(name)
        n = coll.n_sparse
        weighted = [(int(i), float(v) * idf(coll.df[i], n)) for i, v in zip(indices, values) if coll.df.get(i)]
        if not weighted:
            return []
        request = qe.QueryRequest(limit=limit + TIE_MARGIN, query=qe.Query.Nearest(
            qe.SparseVector(indices=[i for i, _ in weighted], values=[v for _, v in weighted]), using=SPARSE),
            filter=edge_filter(spec), with_payload=["record_id"])
        found = self._call(lambda: coll.query(request))
        return _ordered([(str((p.payload or {})["record_id"]), float(p.score)) for p in found if p.score > 0], limit)

    # ------------------------------------------------------------ optimisation
    def finish_build(self, name: str) -> None:
        coll = self._coll(name)
        self._call(coll.finish_build)

    def compact(self, name: str) -> dict[str, float]:
        coll = self._coll(name)
        return self._call(coll.compact)

    def compact_in_background(self, name: str) -> bool:
        coll = self._coll(name)
        with self._meta_lock:
            if coll.compacting is not None and coll.compacting.is_alive():
                return False

            def run() -> None:
                try:
                    result = coll.compact()
                    logger.info("compacted %s: %s", name, result)
                except Exception:  # the live generation keeps serving; the next write tries again
                    logger.exception("compacting %s failed", name)

            coll.compacting = threading.Thread(target=run, name=f"compact-{name}", daemon=True)
            coll.compacting.start()
            return True

    def unindexed(self, name: str) -> int:
        return self._coll(name).unindexed

    def close(self) -> None:
        with self._meta_lock:
            if self.closed:
                return
            self.closed = True  # a compaction still running gives up; its folder goes at the next open
            for coll in self._collections.values():
                try:
                    coll.close()
                except Exception:  # closing must not fail a shutdown
                    logger.debug("closing %s failed", coll.name, exc_info=True)
            self._collections.clear()
            fcntl.flock(self._lock_fh.fileno(), fcntl.LOCK_UN)
            self._lock_fh.close()
