"""An in-memory search mirror of an embedded Qdrant collection.

qdrant-client's local mode stores points faithfully but searches by brute force in
Python, and evaluates payload filters point by point: at 10k records a filtered dense
plus sparse query costs tens to hundreds of milliseconds. In embedded mode exactly one
process owns the index, so that process can keep an exact copy of each collection in
numpy arrays — dense matrix, sparse postings, filter columns — updated by the same calls
that write Qdrant. Searches then cost a matrix-vector product and a few postings walks.

Qdrant stays the store (it persists, and the mirror is loaded from it on first use);
with a Qdrant server (`QDRANT_URL`) the mirror is not used: the server searches.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

_SCOPES = {"global": 0, "unknown": 1, "self": 2}
_CLOSED = ("done", "dropped")


@dataclass
class FilterSpec:
    types: list[str] | None = None
    scene_ids: list[str] | None = None
    project: str = ""
    hide_closed: bool = False
    scope_filter: bool = True


@dataclass
class Mirror:
    dim: int
    ids: list[str] = field(default_factory=list)
    pos: dict[str, int] = field(default_factory=dict)
    alive: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    dense: np.ndarray = field(init=False)  # (capacity, dim), built from `dim`
    scope: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    closed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    # filter columns as integer codes (code 0 = empty)
    type_code: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    project_code: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    scene_code: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    codes: dict[str, int] = field(default_factory=lambda: {"": 0})
    doc_sparse: list[dict[int, float]] = field(default_factory=list)
    postings: dict[int, dict[int, float]] = field(default_factory=dict)
    # live points that have a sparse vector: the IDF corpus (Qdrant counts only points
    # holding the vector; qdrant-client's local mode and the edge engine's corpus agree)
    sparse_live: int = 0
    # numpy copies of postings lists, rebuilt lazily after a change to that token
    _arrays: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.dense = np.zeros((0, self.dim), dtype=np.float32)

    # ----------------------------------------------------------------- writes
    def _grow(self) -> None:
        cap = max(64, len(self.alive) * 2)
        dense = np.zeros((cap, self.dim), dtype=np.float32)
        dense[: len(self.dense)] = self.dense
        self.dense = dense
        for name, dtype in (("alive", bool), ("scope", np.int8), ("closed", bool), ("type_code", np.int32),
                            ("project_code", np.int32), ("scene_code", np.int32)):
            old = getattr(self, name)
            new = np.zeros(cap, dtype=dtype)
            new[: len(old)] = old
            setattr(self, name, new)

    def upsert(self, record_id: str, vector: Sequence[float] | np.ndarray, sparse_indices: list[int], sparse_values: list[float], payload: dict[str, Any]) -> None:
        row = self.pos.get(record_id)
        if row is None:
            row = len(self.ids)
            if row >= len(self.alive):
                self._grow()
            self.ids.append(record_id)
            self.doc_sparse.append({})
            self.pos[record_id] = row
        else:
            if self.alive[row] and self.doc_sparse[row]:
                self.sparse_live -= 1
            self._drop_postings(row)
        vec = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(vec))
        self.dense[row] = vec / norm if norm > 0 else vec
        self.alive[row] = True
        self.set_payload(record_id, payload)
        doc = dict(zip(sparse_indices, sparse_values))
        self.doc_sparse[row] = doc
        if doc:
            self.sparse_live += 1
        for idx, val in doc.items():
            self.postings.setdefault(idx, {})[row] = val
            self._arrays.pop(idx, None)

    def set_payload(self, record_id: str, payload: dict[str, Any]) -> None:
        row = self.pos.get(record_id)
        if row is None:
            return
        self.scope[row] = _SCOPES.get(payload.get("scope") or "unknown", 1)
        self.closed[row] = (payload.get("task_state") or "") in _CLOSED
        self.type_code[row] = self._code(payload.get("type") or "")
        self.project_code[row] = self._code(payload.get("project") or "")
        self.scene_code[row] = self._code(payload.get("scene_id") or "")

    def _code(self, value: str) -> int:
        code = self.codes.get(value)
        if code is None:
            code = self.codes[value] = len(self.codes)
        return code

    def _codes_of(self, values: list[str]) -> np.ndarray:
        return np.array([self.codes.get(v, -1) for v in values], dtype=np.int32)

    def delete(self, record_id: str) -> None:
        row = self.pos.get(record_id)
        if row is None or not self.alive[row]:
            return
        self.alive[row] = False
        if self.doc_sparse[row]:
            self.sparse_live -= 1
        self._drop_postings(row)

    def _drop_postings(self, row: int) -> None:
        for idx in self.doc_sparse[row]:
            self._arrays.pop(idx, None)
            plist = self.postings.get(idx)
            if plist is not None:
                plist.pop(row, None)
                if not plist:
                    del self.postings[idx]
        self.doc_sparse[row] = {}

    # ---------------------------------------------------------------- search
    @property
    def size(self) -> int:
        return len(self.ids)

    def live_count(self) -> int:
        return int(self.alive[: self.size].sum())

    def mask(self, spec: FilterSpec | None) -> np.ndarray:
        n = self.size
        m = self.alive[:n].copy()
        if spec is None:
            return m
        if spec.scope_filter:
            scope = self.scope[:n]
            ok = scope != _SCOPES["self"]
            if spec.project and spec.project in self.codes:
                ok |= (self.project_code[:n] == self.codes[spec.project]) & (scope == _SCOPES["self"])
            m &= ok
        if spec.hide_closed:
            m &= ~self.closed[:n]
        if spec.types:
            m &= np.isin(self.type_code[:n], self._codes_of(spec.types))
        if spec.scene_ids:
            m &= np.isin(self.scene_code[:n], self._codes_of(spec.scene_ids))
        return m

    def search_dense(self, vector: Sequence[float] | np.ndarray, limit: int, spec: FilterSpec | None) -> list[tuple[str, float]]:
        n = self.size
        if n == 0:
            return []
        q = np.asarray(vector, dtype=np.float32)
        qn = float(np.linalg.norm(q))
        if qn > 0:
            q = q / qn
        scores = self.dense[:n] @ q
        m = self.mask(spec)
        scores = np.where(m, scores, -np.inf)
        return self._top(scores, limit)

    def search_sparse(self, indices: list[int], values: list[float], limit: int, spec: FilterSpec | None) -> list[tuple[str, float]]:
        n_live = self.sparse_live
        if not n_live or not indices:
            return []
        n = self.size
        scores = np.zeros(n, dtype=np.float64)
        touched = False
        for idx, qval in zip(indices, values):
            arrays = self._postings_arrays(idx)
            if arrays is None:
                continue
            rows, vals = arrays
            df = len(rows)
            idf = math.log((n_live - df + 0.5) / (df + 0.5) + 1.0)  # Qdrant's IDF modifier (live corpus)
            scores += np.bincount(rows, weights=vals * (idf * qval), minlength=n)
            touched = True
        if not touched:
            return []
        m = self.mask(spec) & (scores > 0)
        cand = np.flatnonzero(m)
        if cand.size == 0:
            return []
        k = min(limit, cand.size)
        top = cand[np.argpartition(-scores[cand], k - 1)[:k]] if k < cand.size else cand
        order = top[np.argsort(-scores[top], kind="stable")]
        return [(self.ids[int(i)], float(scores[i])) for i in order]

    def _postings_arrays(self, idx: int) -> tuple[np.ndarray, np.ndarray] | None:
        arrays = self._arrays.get(idx)
        if arrays is None:
            plist = self.postings.get(idx)
            if not plist:
                return None
            arrays = (np.fromiter(plist.keys(), dtype=np.int64, count=len(plist)),
                      np.fromiter(plist.values(), dtype=np.float64, count=len(plist)))
            self._arrays[idx] = arrays
        return arrays

    def _top(self, scores: np.ndarray, limit: int) -> list[tuple[str, float]]:
        finite = np.isfinite(scores)
        count = int(finite.sum())
        if count == 0:
            return []
        k = min(limit, count)
        part = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        part = part[np.isfinite(scores[part])]
        order = part[np.argsort(-scores[part], kind="stable")][:k]
        return [(self.ids[int(i)], float(scores[i])) for i in order]
