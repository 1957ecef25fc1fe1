"""What an index engine offers `apps.search.index`, and the qdrant-client engine.

Three engines sit behind the same interface (`Store`):

* `EdgeStore` (`apps/search/edge.py`): the embedded default where `qdrant-edge-py` has a
  wheel — Qdrant's own segments, HNSW and payload indexes in this process, on disk.
* `ClientStore` in local mode: qdrant-client's embedded store (`QDRANT_PATH`) with the
  numpy mirror of `apps/search/mirror.py` answering the searches (the fallback where no
  edge wheel exists, and the store an older install has).
* `ClientStore` with a server (`QDRANT_URL`): the server stores and searches.

A store works on collection names; aliases map a profile's stable name to its live
collection. Failures surface as `IndexUnavailable` (`IndexLocked` when another process
owns an embedded index).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np

from apps.search.mirror import FilterSpec, Mirror

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

logger = logging.getLogger(__name__)

DENSE = "dense"
SPARSE = "sparse"
T = TypeVar("T")
_POINT_NS = uuid.UUID("5b0f3c52-8d4e-4a8e-9a55-6d8f3d0e7a11")


def point_id(record_id: str) -> str:
    """A record's point id in every engine (a UUID derived from the record id)."""
    return str(uuid.uuid5(_POINT_NS, record_id))


class IndexUnavailable(RuntimeError):
    """The index cannot serve right now (missing, locked, server down, model missing)."""


class IndexLocked(IndexUnavailable):
    pass


def locked_message(path: str) -> str:
    return (
        f"the embedded index at {path} is held by another process (the running web server owns it). Go through "
        "the server's API, stop the server first, or use a Qdrant server (QDRANT_URL) so every process can open "
        "the index."
    )


@dataclass
class IndexPoint:
    """One record as the index holds it (its point id is `point_id(record_id)`)."""

    record_id: str
    dense: np.ndarray
    sparse_indices: list[int]
    sparse_values: list[float]
    payload: dict[str, Any]


Hit = tuple[str, float]  # (record_id, score)


class Store(Protocol):
    kind: str  # "edge" | "local" | "server"
    location: str

    def aliases(self) -> dict[str, str]: ...
    def collections(self) -> list[str]: ...
    def create_collection(self, name: str, dim: int, space: str) -> None: ...
    def delete_collection(self, name: str) -> None: ...
    def set_alias(self, alias: str, name: str) -> None: ...
    def drop_alias(self, alias: str) -> None: ...
    def dim(self, name: str) -> int: ...
    def space(self, name: str) -> str: ...
    def upsert(self, name: str, points: list[IndexPoint]) -> None: ...
    def delete(self, name: str, record_ids: list[str]) -> None: ...
    def set_payload(self, name: str, record_id: str, payload: dict[str, Any]) -> None: ...
    def present(self, name: str, record_ids: list[str]) -> set[str]: ...
    def count(self, name: str) -> int: ...
    def point(self, name: str, record_id: str) -> tuple[np.ndarray, dict[str, Any]] | None: ...
    def search_dense(self, name: str, vector: np.ndarray, limit: int, spec: FilterSpec | None) -> list[Hit]: ...
    def search_sparse(self, name: str, indices: list[int], values: list[float], limit: int,
                      spec: FilterSpec | None) -> list[Hit]: ...
    def finish_build(self, name: str) -> None: ...
    def close(self) -> None: ...


# ------------------------------------------------------------------ qdrant-client
class ClientStore:
    """qdrant-client: a server (`url`) or the embedded local mode (`path`) with the
    in-memory mirror answering searches (local mode searches by brute force in Python)."""

    def __init__(self, client: QdrantClient, *, kind: str, location: str) -> None:
        self.client = client
        self.kind = kind
        self.location = location
        self._lock = threading.RLock()  # local mode is not thread-safe: its calls are serialised
        self._mirrors: dict[str, Mirror] = {}

    @property
    def mirrored(self) -> bool:
        return self.kind == "local"

    def _call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        try:
            if not self.mirrored:
                return fn(*args, **kwargs)
            with self._lock:
                return fn(*args, **kwargs)
        except IndexUnavailable:
            raise
        except (ValueError, KeyError) as exc:
            raise IndexUnavailable(f"index error: {exc}") from exc
        except Exception as exc:
            raise IndexUnavailable(f"index at {self.location} failed: {exc.__class__.__name__}: {exc}") from exc

    # -------------------------------------------------------------- collections
    def aliases(self) -> dict[str, str]:
        return {a.alias_name: a.collection_name for a in self._call(self.client.get_aliases).aliases}

    def collections(self) -> list[str]:
        return [c.name for c in self._call(self.client.get_collections).collections]

    def create_collection(self, name: str, dim: int, space: str) -> None:
        from qdrant_client import models as qm

        self._call(
            self.client.create_collection,
            collection_name=name,
            vectors_config={DENSE: qm.VectorParams(size=dim, distance=qm.Distance.COSINE)},
            sparse_vectors_config={SPARSE: qm.SparseVectorParams(modifier=qm.Modifier.IDF)},
            metadata={"space": space},
        )

    def delete_collection(self, name: str) -> None:
        with self._lock:
            self._call(self.client.delete_collection, name)
            self._mirrors.pop(name, None)

    def set_alias(self, alias: str, name: str) -> None:
        from qdrant_client import models as qm

        ops: list[Any] = []
        if alias in self.aliases():
            ops.append(qm.DeleteAliasOperation(delete_alias=qm.DeleteAlias(alias_name=alias)))
        ops.append(qm.CreateAliasOperation(create_alias=qm.CreateAlias(collection_name=name, alias_name=alias)))
        self._call(self.client.update_collection_aliases, change_aliases_operations=ops)

    def drop_alias(self, alias: str) -> None:
        from qdrant_client import models as qm

        if alias in self.aliases():
            self._call(self.client.update_collection_aliases, change_aliases_operations=[
                qm.DeleteAliasOperation(delete_alias=qm.DeleteAlias(alias_name=alias))])

    def dim(self, name: str) -> int:
        info = self._call(self.client.get_collection, name)
        vectors: Any = info.config.params.vectors
        return int(vectors[DENSE].size)

    def space(self, name: str) -> str:
        info = self._call(self.client.get_collection, name)
        return str((info.config.metadata or {}).get("space") or "")

    # ------------------------------------------------------------------ points
    def upsert(self, name: str, points: list[IndexPoint]) -> None:
        from qdrant_client import models as qm

        structs = []
        for p in points:
            vec: dict[str, Any] = {DENSE: [float(x) for x in p.dense]}
            if p.sparse_indices:
                vec[SPARSE] = qm.SparseVector(indices=p.sparse_indices, values=p.sparse_values)
            structs.append(qm.PointStruct(id=point_id(p.record_id), vector=vec, payload=p.payload))
        with self._lock if self.mirrored else _nolock():
            self._call(self.client.upsert, collection_name=name, points=structs, wait=True)
            mirror = self._mirrors.get(name)
            if mirror is not None:
                for p in points:
                    mirror.upsert(p.record_id, p.dense, p.sparse_indices, p.sparse_values, p.payload)

    def delete(self, name: str, record_ids: list[str]) -> None:
        from qdrant_client import models as qm

        ids: list[Any] = [point_id(r) for r in record_ids]
        with self._lock if self.mirrored else _nolock():
            self._call(self.client.delete, collection_name=name, points_selector=qm.PointIdsList(points=ids), wait=True)
            mirror = self._mirrors.get(name)
            if mirror is not None:
                for rid in record_ids:
                    mirror.delete(rid)

    def set_payload(self, name: str, record_id: str, payload: dict[str, Any]) -> None:
        with self._lock if self.mirrored else _nolock():
            self._call(self.client.set_payload, collection_name=name, payload=payload, points=[point_id(record_id)],
                       wait=True)
            mirror = self._mirrors.get(name)
            if mirror is not None:
                mirror.set_payload(record_id, payload)

    def present(self, name: str, record_ids: list[str]) -> set[str]:
        by_point = {point_id(r): r for r in record_ids}
        ids: list[Any] = list(by_point)
        return {by_point[str(p.id)] for p in self._call(self.client.retrieve, collection_name=name, ids=ids)}

    def count(self, name: str) -> int:
        return int(self._call(self.client.count, collection_name=name, exact=True).count)

    def point(self, name: str, record_id: str) -> tuple[np.ndarray, dict[str, Any]] | None:
        found = self._call(self.client.retrieve, collection_name=name, ids=[point_id(record_id)], with_vectors=True,
                           with_payload=True)
        if not found:
            return None
        vec: Any = found[0].vector
        return np.asarray(vec[DENSE], dtype=np.float32), dict(found[0].payload or {})

    def scroll(self, name: str, batch: int = 2048) -> Iterator[IndexPoint]:
        """Every point of the collection (loading the mirror; a migration's export)."""
        offset = None
        while True:
            points, offset = self._call(self.client.scroll, collection_name=name, limit=batch, offset=offset,
                                        with_payload=True, with_vectors=True)
            for p in points:
                vec: Any = p.vector or {}
                sp = vec.get(SPARSE)
                payload = dict(p.payload or {})
                yield IndexPoint(str(payload["record_id"]), np.asarray(vec[DENSE], dtype=np.float32),
                                 list(sp.indices) if sp else [], list(sp.values) if sp else [], payload)
            if offset is None:
                break

    # ------------------------------------------------------------------ search
    def _mirror(self, name: str) -> Mirror:
        with self._lock:
            mirror = self._mirrors.get(name)
            if mirror is None:
                mirror = Mirror(dim=self.dim(name))
                for p in self.scroll(name):
                    mirror.upsert(p.record_id, p.dense, p.sparse_indices, p.sparse_values, p.payload)
                self._mirrors[name] = mirror
            return mirror

    def search_dense(self, name: str, vector: np.ndarray, limit: int, spec: FilterSpec | None) -> list[Hit]:
        if self.mirrored:
            mirror = self._mirror(name)
            with self._lock:
                return mirror.search_dense(vector, limit, spec)
        res = self._call(self.client.query_points, collection_name=name, query=[float(x) for x in vector], using=DENSE,
                         limit=limit, query_filter=client_filter(spec), with_payload=["record_id"])
        return [(str((p.payload or {})["record_id"]), float(p.score)) for p in res.points]

    def search_sparse(self, name: str, indices: list[int], values: list[float], limit: int,
                      spec: FilterSpec | None) -> list[Hit]:
        from qdrant_client import models as qm

        if self.mirrored:
            mirror = self._mirror(name)
            with self._lock:
                return mirror.search_sparse(indices, values, limit, spec)
        res = self._call(self.client.query_points, collection_name=name,
                         query=qm.SparseVector(indices=indices, values=values), using=SPARSE, limit=limit,
                         query_filter=client_filter(spec), with_payload=["record_id"])
        return [(str((p.payload or {})["record_id"]), float(p.score)) for p in res.points]

    def finish_build(self, name: str) -> None:
        return None

    def close(self) -> None:
        with self._lock:
            self._mirrors.clear()
            try:
                self.client.close()
            except Exception:  # closing must not fail a shutdown
                logger.debug("closing a Qdrant client failed", exc_info=True)


def client_filter(spec: FilterSpec | None) -> Any:
    """The qdrant-client filter of a FilterSpec (server mode)."""
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


class _nolock:
    def __enter__(self) -> _nolock:
        return self

    def __exit__(self, *exc: object) -> None:
        return None
