"""Per-phase cost of one `recall_l1_records` call and of one `l1_commit` (used by
`bench/recall.py`: every size run prints the full recall path by phase).

The phases are measured by wrapping the functions the service calls (module attributes,
so the service's own code is unchanged) and summing their wall time per call:

* embedding: `embedding.embed` (the query vector; a miss of the query LRU)
* index: `index.search_dense` + `index.search_sparse` (the engine, query vector given)
* candidates: the rest of `index_candidates` (fusion, the query's terms)
* before: budget, outbox check, index state, caller project, scene family
* db check: `services._finish` minus the parts below (one query for rows and hits, the
  filters, boosts, the final order, relevance)
* relevance: `services.relevance_features` (tokenising the kept records for coverage)
* hits: `hitstats.hits_record` (recall event, per-record hits, the hit-stats file)
* other: what the call spent outside every phase above (validation, settings, output)

For `l1_commit` (COMMIT_WRAPPED): embedding (`embedding.embed`, in the drain), sparse
vectors (`sparse.document_vector`), index write (the rest of `index.upsert_records`),
drain (the rest of `index.drain_outbox`: reading the ops and rows, deleting the applied
ops) and other (the commit transaction itself: validation, checks, rows, history,
audit, outbox rows).

A wrapped function that calls another wrapped one is counted once: the inner time is
taken out of the outer phase ("exclusive" time), so the phases add up to the total.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

# (module path, attribute, phase)
WRAPPED = [
    ("apps.search.embedding", "embed", "embedding"),
    ("apps.search.index", "search_dense", "index"),
    ("apps.search.index", "search_sparse", "index"),
    ("apps.search.services", "index_candidates", "candidates"),
    ("apps.search.services", "_try_drain", "before"),
    ("apps.search.services", "index_ready", "before"),
    ("apps.search.services", "caller_project", "before"),
    ("apps.hitstats.services", "recall_budget_take", "before"),
    ("apps.search.services", "_finish", "db check"),
    ("apps.search.services", "relevance_features", "relevance"),
    ("apps.hitstats.services", "hits_record", "hits"),
]
ORDER = ["embedding", "index", "candidates", "before", "db check", "relevance", "hits", "other"]
COMMIT_WRAPPED = [
    ("apps.search.embedding", "embed", "embedding"),
    ("apps.search.sparse", "document_vector", "sparse"),
    ("apps.search.index", "upsert_records", "index write"),
    ("apps.search.index", "drain_outbox", "drain"),
]
COMMIT_ORDER = ["embedding", "sparse", "index write", "drain", "other"]


class PhaseTimer:
    def __init__(self, wrapped: list[tuple[str, str, str]] | None = None, order: list[str] | None = None) -> None:
        self.wrapped = WRAPPED if wrapped is None else wrapped
        self.order = ORDER if order is None else order
        self.calls: list[dict[str, float]] = []
        self._current: dict[str, float] = {}
        self._stack: list[list[float]] = []  # per active wrapped call: [inner seconds]
        self._undo: list[Callable[[], None]] = []

    def install(self) -> None:
        import importlib

        for module_name, attr, phase in self.wrapped:
            module = importlib.import_module(module_name)
            original = getattr(module, attr, None)
            if original is None:
                continue
            setattr(module, attr, self._wrap(original, phase))
            self._undo.append(functools.partial(setattr, module, attr, original))

    def uninstall(self) -> None:
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()

    def _wrap(self, fn: Callable[..., Any], phase: str) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            self._stack.append([0.0])
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent = time.perf_counter() - t0
                inner = self._stack.pop()[0]
                self._current[phase] = self._current.get(phase, 0.0) + spent - inner
                if self._stack:
                    self._stack[-1][0] += spent
        return wrapper

    def run(self, call: Callable[[], Any]) -> None:
        self._current = {}
        t0 = time.perf_counter()
        call()
        total = time.perf_counter() - t0
        self._current["other"] = total - sum(self._current.values())
        self._current["total"] = total
        self.calls.append(self._current)

    def summary(self) -> dict[str, dict[str, float]]:
        def pct(values: list[float], q: float) -> float:
            ordered = sorted(values)
            return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]

        out: dict[str, dict[str, float]] = {}
        for phase in [*self.order, "total"]:
            values = [c.get(phase, 0.0) * 1000 for c in self.calls]
            out[phase] = {"mean": round(sum(values) / len(values), 2), "p50": round(pct(values, 0.5), 2),
                          "p95": round(pct(values, 0.95), 2)}
        return out


def describe(summary: dict[str, dict[str, float]]) -> str:
    parts = [f"{phase} {values['p50']}/{values['mean']}" for phase, values in summary.items()]
    return "phases p50/mean ms: " + "; ".join(parts)
