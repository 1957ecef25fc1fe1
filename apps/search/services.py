"""Retrieval services: hybrid recall (SPEC §3.14, §4), embed_and_search (§3.16) and the
per-turn injection block (§3.19).

Recall = dense (e5 `query:` embedding, cosine) and sparse (BM25, IDF from the index)
candidates, `3 × topK` from each side, fused by reciprocal rank (k = 60), then bounded
boosts for effective hits and priority. Every candidate is re-checked against the
database (live, scope, filters) so an index that lags behind a commit never returns a
tombstoned record. When the index or the model is unavailable, recall answers from a
database keyword search and says `degraded: true`.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.db.models import Q

from apps.accounts.config import profile_setting
from apps.accounts.models import Profile
from apps.hitstats import selectors as hit_selectors
from apps.hitstats import services as hitstats
from apps.records.models import ALL_TYPES, L1Record
from apps.records.selectors import records_by_id
from apps.search import bilingual, embedding, index, ranking, sparse
from apps.search.mirror import FilterSpec
from apps.tools.errors import InvalidParams, NotFound, RateLimited, invalid_field

logger = logging.getLogger(__name__)

RRF_K = 60
HIT_BOOST_MAX = 0.15  # at most +15 % for often-useful records
HIT_BOOST_SCALE = 0.05  # × ln(1 + effective_hits)
PRIORITY_BOOST_MAX = 0.10  # ±10 % around priority 50
TASK_TAGS = {"open": "[待办]", "done": "[已完成]", "dropped": "[已废弃]"}
DEGRADED_SCAN_LIMIT = 2000

_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="recall")
# The sparse searches of a recall, beside its query embedding (a pool of its own: a recall
# running in `_pool` waits on it, and must not wait on a worker of its own pool).
_sparse_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="recall-sparse")
ScoredT = TypeVar("ScoredT", bound=ranking.ScoredLike)


# ------------------------------------------------------------------ helpers
def _check_query(value: Any, field_name: str) -> str:
    if not isinstance(value, str):
        raise invalid_field(field_name, "must be a string")
    if not value.strip():
        raise invalid_field(field_name, "must not be empty or whitespace only")
    return value


def _check_top_k(top_k: int, maximum: int, field_name: str = "topK") -> int:
    if not 1 <= top_k <= maximum:
        raise invalid_field(field_name, f"must be between 1 and {maximum}, got {top_k}")
    return top_k


def _check_types(types: list[str] | None) -> list[str] | None:
    if types is None:
        return None
    bad = [t for t in types if t not in ALL_TYPES]
    if bad:
        raise InvalidParams(
            f"types: unknown type(s) {', '.join(map(repr, bad))}; known: {', '.join(ALL_TYPES)}",
            details=[{"field": f"types.{types.index(t)}", "message": f"unknown type {t!r}"} for t in bad],
        )
    if not types:
        raise invalid_field("types", "must not be an empty list (omit it to search every type)")
    return list(dict.fromkeys(types))


def caller_project(*, profile: Profile, session_key: str, cwd: str) -> str:
    """The caller's project: the session's `l1_project_get` candidate when its flag is
    set, else the known project containing the cwd, else none."""
    try:
        from apps.records.normalize import normalize_path
        from apps.records.project import known_project_root, session_project
    except ImportError:  # pragma: no cover - the records app always ships these
        return ""
    if session_key:
        try:
            candidate = session_project(profile=profile, session_key=session_key)
        except Exception:  # a broken L0 shard must not break recall
            logger.warning("session project lookup failed for %s", session_key, exc_info=True)
            candidate = {}
        if candidate.get("flag") and candidate.get("project"):
            return str(candidate["project"])
    if cwd:
        normalized = normalize_path(cwd)
        root = known_project_root(profile, normalized) if normalized else None
        if root:
            return root
    return ""


def _scene_family(profile: Profile, scene_id: str) -> list[str]:
    """The pool ids answering to `scene_id`: its survivor and every scene merged into it
    (records keep the id they were committed with). Unknown ids are `not_found`."""
    from apps.scenes.models import SceneEntry
    from apps.scenes.pool import scene_resolve

    survivor = scene_resolve(profile=profile, scene_id=scene_id)
    if survivor is None:
        raise NotFound(f"no scene {scene_id!r} in this profile", details={"sceneId": scene_id})
    parent = dict(SceneEntry.objects.filter(profile=profile).values_list("pk", "merged_into_id"))
    ids = dict(SceneEntry.objects.filter(profile=profile).values_list("pk", "scene_id"))

    def root(pk: int) -> int:
        seen: set[int] = set()
        while parent.get(pk) and pk not in seen:
            seen.add(pk)
            pk = parent[pk]
        return pk

    return sorted(ids[pk] for pk in ids if root(pk) == survivor.pk)


def _hide_closed(profile: Profile, include_closed: bool | None) -> bool:
    if include_closed is None:
        return bool(profile_setting(profile, "recall.hideClosedTasks"))
    return not include_closed


@dataclass
class Filters:
    types: list[str] | None = None
    scene_ids: list[str] | None = None
    project_key: str = ""
    hide_closed: bool = False
    scope_filter: bool = True

    def spec(self) -> FilterSpec:
        return FilterSpec(types=self.types, scene_ids=self.scene_ids, project=self.project_key,
                          hide_closed=self.hide_closed, scope_filter=self.scope_filter)

    def accepts(self, row: L1Record) -> bool:
        """The database check of every candidate (the index may lag behind a commit)."""
        if row.deleted:
            return False
        if self.types and row.type not in self.types:
            return False
        if self.scene_ids and not (row.scene_id and row.scene and row.scene.scene_id in self.scene_ids):
            return False
        if self.hide_closed and row.type == "work_task" and (row.task_state or "open") in ("done", "dropped"):
            return False
        if self.scope_filter:
            scope = (row.metadata or {}).get("scope") or "unknown"
            if scope == "self":
                return bool(self.project_key) and index.project_key((row.metadata or {}).get("project", "")) == self.project_key
            return scope in ("global", "unknown")
        return True

    def db_q(self) -> Q:
        q = Q(deleted=False)
        if self.types:
            q &= Q(type__in=self.types)
        if self.scene_ids:
            q &= Q(scene__scene_id__in=self.scene_ids)
        if self.hide_closed:
            q &= ~Q(type="work_task", task_state__in=["done", "dropped"])
        return q


@dataclass
class Ranked:
    record_id: str
    dense_rank: int | None = None
    sparse_rank: int | None = None
    stand_in_rank: int | None = None  # the rank that stood in for a sparse vote across languages (ranking.stand_in_ranks)
    fused: float = 0.0
    boosts: dict[str, float] = field(default_factory=dict)
    score: float = 0.0
    dense_score: float | None = None  # cosine in the debiased space
    sparse_score: float | None = None
    margin: float | None = None  # cosine minus its language's reference (ranking.language_margins)
    relevance: float = 0.0
    features: tuple[float, ...] = ()
    held_below: list[str] = field(default_factory=list)


@dataclass
class Candidates:
    """What the index answered for one query (`index_candidates`, no database), then its
    ranking once the live records are known (`rank_candidates`)."""
    ranked: list[Ranked]
    limit: int = 0
    dense: list[index.Candidate] = field(default_factory=list)  # the dense pool, DENSE_POOL_FACTOR × limit
    sparse: list[index.Candidate] = field(default_factory=list)  # BM25 of the query
    sparse_translated: list[index.Candidate] = field(default_factory=list)  # BM25 of its pseudo-translation
    words: list[frozenset[str]] = field(default_factory=list)  # ranking.query_words
    language: str = ""  # the query's (ranking.text_language)
    worded: bool = True  # the query says words of its language, not only identifiers (ranking.worded)
    margin_floor: float = 0.0  # margin of a record the dense pool did not hold (a bound from above)
    cosine_floor: float = 0.0  # lowest cosine of the pool (the same bound for the cosine)
    cosine_median: float = 0.0  # median cosine of the top `limit` of the pool (padded, floored: MEDIAN_FLOOR)

    def record_ids(self) -> list[str]:
        return list(dict.fromkeys(c.record_id for c in [*self.dense, *self.sparse, *self.sparse_translated]))


# Each side votes in the fusion only with candidates close to its own best: a sparse hit
# scoring below SPARSE_GATE × the best BM25 score of its query matched incidental words
# (in a bilingual store, mostly same-language words such as 用户 / "user"); a dense hit
# more than DENSE_GATE below the best (language-corrected) cosine is far off. Without the
# gate, records that both sides list weakly outvote the record one side puts first
# (measured in docs/retrieval.md). Ranks are counted among the candidates that pass.
SPARSE_GATE = 0.5
DENSE_GATE = 0.15


def _gate(cands: list[ScoredT], *, ratio: float | None = None, margin: float | None = None) -> list[ScoredT]:
    if not cands:
        return cands
    best = cands[0].score
    if ratio is not None:
        return [c for c in cands if c.score >= ratio * best]
    assert margin is not None
    return [c for c in cands if c.score >= best - margin]


def _rrf(dense: Sequence[ranking.ScoredLike], sparse_: Sequence[ranking.ScoredLike],
         stand_in: Mapping[str, int] | None = None) -> list[Ranked]:
    """Reciprocal rank fusion (k = 60) of two rankings; a tie goes to the record the dense
    side lists (it is inserted first and the sort is stable). `stand_in`: records the sparse
    side cannot list (ranking.stand_in_ranks), with the rank that counts for that vote."""
    ranked: dict[str, Ranked] = {}
    for rank, cand in enumerate(dense, start=1):
        item = ranked.setdefault(cand.record_id, Ranked(cand.record_id))
        item.dense_rank = rank
        item.dense_score = cand.score
        item.fused += 1.0 / (RRF_K + rank)
    for rank, cand in enumerate(sparse_, start=1):
        item = ranked.setdefault(cand.record_id, Ranked(cand.record_id))
        item.sparse_rank = rank
        item.sparse_score = cand.score
        item.fused += 1.0 / (RRF_K + rank)
    for record_id, rank in (stand_in or {}).items():
        item = ranked[record_id]
        item.stand_in_rank = rank
        item.fused += 1.0 / (RRF_K + rank)
    return sorted(ranked.values(), key=lambda r: -r.fused)


def _fuse(dense: Sequence[ranking.ScoredLike], sparse_: Sequence[ranking.ScoredLike]) -> list[Ranked]:
    """RRF of one dense and one sparse list, each gated against its own best."""
    return _rrf(_gate(list(dense), margin=DENSE_GATE), _gate(list(sparse_), ratio=SPARSE_GATE))


def rank_candidates(cands: Candidates, langs: Mapping[str, str]) -> list[Ranked]:
    """The language-aware fusion (module `ranking`) over the live candidates. `langs`
    holds the language of each live candidate (id -> "zh"/"en"); the others drop out of
    every list before anything is ranked. Dense: the pool re-ranked by margin over each
    language's reference, top `limit`, gated; sparse: the query's and the translation's
    BM25 lists, top `limit` each, each gated against its own best, merged by rank, top
    `limit` of the merge (as many sparse candidates as before the translation: the
    database reads the rows of every fused candidate). Sets and returns `cands.ranked`
    (`dense_score` stays the cosine)."""
    pool = [ranking.Scored(c.record_id, c.score) for c in cands.dense if c.record_id in langs]
    margins = ranking.language_margins(pool, langs)

    def live(found: list[index.Candidate]) -> list[ranking.Scored]:
        return [ranking.Scored(c.record_id, c.score) for c in found if c.record_id in langs][: cands.limit]

    dense = _gate(ranking.by_margin(pool, margins)[: cands.limit], margin=DENSE_GATE)
    sparse_ = ranking.merge_by_rank(_gate(live(cands.sparse), ratio=SPARSE_GATE),
                                    _gate(live(cands.sparse_translated), ratio=SPARSE_GATE))[: cands.limit]
    stand_in = ranking.stand_in_ranks(dense, {c.record_id for c in sparse_}, langs, cands.language) if cands.worded else {}
    fused = _rrf(dense, sparse_, stand_in)
    cosine = {c.record_id: c.score for c in pool}
    for item in fused:
        item.margin = margins.get(item.record_id)
        item.dense_score = cosine.get(item.record_id)
    cands.margin_floor = min(margins.values()) if margins else 0.0
    top = sorted((c.score for c in pool), reverse=True)[: cands.limit]
    padded = sorted(top + [MEDIAN_FLOOR] * max(0, cands.limit - len(top)))
    cands.cosine_floor = min(cosine.values()) if cosine else 0.0
    cands.cosine_median = max(padded[len(padded) // 2] if padded else 0.0, MEDIAN_FLOOR)
    cands.ranked = fused
    return fused


# ----------------------------------------------------------- relevance (§3.14)
# relevance = sigmoid(b0 + b1·margin + b2·coverage + b3·both), fitted by logistic
# regression over the top `topK` records of the calibration half of the quality
# benchmark (`bench/recall_quality.py --calibrate`, docs/retrieval.md): margin = the
# record's cosine minus its language's reference (how far it stands out from the other
# records of its language; the lowest margin of the pool when the dense side missed it);
# coverage = the share of the query's words (question words dropped, translations
# counted) that the record contains; both = both sides returned it. The feature set was
# chosen on the held-out half among the ones `relevance_features` computes (1/position
# fitted best but made every record below the first fall under the threshold). BM25 scores are not used: through IDF they depend on the size of the store, and the
# threshold must hold for three memories as for ten thousand. Then made non-increasing
# along the final order (a record gets at least the relevance of any record ranked below
# it), so it is monotone in the ranking and the threshold keeps a prefix of the order.
# The lower quartile of the median top-15 cosine over the benchmark's questions (the
# "median_margin" feature: cosine minus that median, never below it).
MEDIAN_FLOOR = 0.24
RELEVANCE_FEATURES = ("margin", "coverage", "both")
RELEVANCE_COEF = (-5.63, 14.34, 3.94, 0.81)


def relevance_features(item: Ranked, cands: Candidates, content: str, position: int) -> tuple[float, ...]:
    """The features named in RELEVANCE_FEATURES, in that order (the others are there to
    be measured: `bench/recall_quality.py --calibrate --features ...`)."""
    cos = item.dense_score if item.dense_score is not None else cands.cosine_floor
    values = {
        "margin": item.margin if item.margin is not None else cands.margin_floor,
        "median_margin": cos - cands.cosine_median,
        "coverage": ranking.coverage(cands.words, ranking.record_terms(content)),
        "both": 1.0 if item.dense_rank is not None and item.sparse_rank is not None else 0.0,
        "1/position": 1.0 / position,
        "cross": 1.0 if cands.language and ranking.text_language(content) != cands.language else 0.0,
    }
    return tuple(values[name] for name in RELEVANCE_FEATURES)


def _relevance(features: tuple[float, ...]) -> float:
    b0, *coef = RELEVANCE_COEF
    z = b0 + sum(b * x for b, x in zip(coef, features))
    return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


def _beats_on_both(a: Ranked, b: Ranked) -> bool:
    """The two rankings agree that `a` is above `b`: neither places `b` higher and at least
    one places `a` higher (a side that missed a record ranks it last, so when both missed
    it that side is silent, not in disagreement)."""
    inf = float("inf")
    da, db = a.dense_rank or inf, b.dense_rank or inf
    sa, sb = a.sparse_rank or inf, b.sparse_rank or inf
    return da <= db and sa <= sb and (da < db or sa < sb)


def _final_order(items: list[Ranked]) -> list[Ranked]:
    """Order by boosted score, except that a boost never lifts a record above one that
    both rankings place higher (SPEC §4): the next record is the best-scored one that no
    remaining record beats on both sides. Records passed over note who held them."""
    remaining = sorted(items, key=lambda r: -r.score)
    out: list[Ranked] = []
    while remaining:
        for pos, cand in enumerate(remaining):
            blockers = [o.record_id for o in remaining if o is not cand and _beats_on_both(o, cand)]
            if not blockers:
                out.append(remaining.pop(pos))
                break
            for rid in blockers:
                if rid not in cand.held_below and any(o.record_id == rid and o.score < cand.score for o in remaining):
                    cand.held_below.append(rid)
    return out


def index_ready(profile: Profile) -> str | None:
    """The space state of the profile's index (`index.SPACE_*`; main thread: touches the
    database), None when there is nothing to search. Raises IndexUnavailable when records
    exist but the profile has no collection, or while an index of another model is being
    rebuilt (recall answers degraded meanwhile)."""
    name = index.current_collection(profile)
    if name is None:
        if L1Record.objects.filter(profile=profile, deleted=False).exists():
            raise index.IndexUnavailable(f"profile {profile.slug} has records but no index; run `manage.py reindex`")
        return None
    state = index.check_space(profile, name)
    if state == index.SPACE_FOREIGN:
        raise index.IndexUnavailable(f"the index of profile {profile.slug} is being rebuilt for the current embedding model")
    return state


def index_candidates(profile: Profile, query: str, *, limit: int, filters: Filters, raw: bool = False) -> Candidates:
    """What the index answers for `query` (no database access: may run in a worker
    thread): the dense pool (`ranking.DENSE_POOL_FACTOR` × limit, for the language
    references), the BM25 candidates of the query and those of its dictionary
    pseudo-translation into the other language. `rank_candidates` ranks them once the
    database check has said which are live. `raw`: the collection is still in the space
    before debiasing (being rebuilt). Raises IndexUnavailable / EmbeddingUnavailable."""
    spec = filters.spec()
    # The sparse side needs no query vector: it runs in another thread while this one embeds
    # the query (onnxruntime computes without the GIL, so the tokenising and the BM25
    # searches overlap it on a second core).
    sparse_future = _sparse_pool.submit(_sparse_candidates, profile, query, limit, spec)
    try:
        qvec = embedding.embed([query], kind=embedding.QUERY, raw=raw)[0]
        dense = index.search_dense(profile, qvec, limit=ranking.DENSE_POOL_FACTOR * limit, spec=spec)
    except BaseException:
        sparse_future.cancel()  # the dense side's error is the recall's error
        raise
    sparse_, sparse_t = sparse_future.result()
    return Candidates([], limit=limit, dense=dense, sparse=sparse_, sparse_translated=sparse_t,
                      words=ranking.query_words(query), language=ranking.text_language(query), worded=ranking.worded(query))


def _sparse_candidates(profile: Profile, query: str, limit: int, spec: FilterSpec | None) -> tuple[list[index.Candidate], list[index.Candidate]]:
    """The BM25 candidates of the query and of its dictionary pseudo-translation."""
    sparse_ = index.search_sparse(profile, query, limit=limit, spec=spec)
    translated = bilingual.translate(query, to=ranking.other_language(ranking.text_language(query)))
    sparse_t = index.search_sparse(profile, translated, limit=limit, spec=spec) if translated.strip() else []
    return sparse_, sparse_t


def _apply_boosts(profile: Profile, ranked: list[Ranked], rows: dict[str, L1Record]) -> None:
    """`rows` come from `live_rows`: each carries its effective hits (read with it)."""
    for item in ranked:
        row = rows[item.record_id]
        eff = getattr(row, "effective_hits_now", None) or 0
        hit_boost = min(HIT_BOOST_MAX, HIT_BOOST_SCALE * math.log1p(eff)) if eff > 0 else 0.0
        priority = 100 if row.priority < 0 else row.priority  # -1: a strict global rule
        prio_boost = max(-PRIORITY_BOOST_MAX, min(PRIORITY_BOOST_MAX, PRIORITY_BOOST_MAX * (priority - 50) / 50))
        item.boosts = {"effectiveHits": round(hit_boost, 6), "priority": round(prio_boost, 6)}
        item.score = item.fused * (1.0 + hit_boost + prio_boost)


def keyword_candidates(profile: Profile, query: str, *, limit: int, filters: Filters) -> list[Ranked]:
    """Degraded mode: database keyword search (tokens of the bilingual tokenizer)."""
    terms = list(dict.fromkeys(t for t in sparse.tokenize(query) if len(t) > 1 or not t.isascii()))[:12]
    if not terms:
        terms = [query.strip().lower()]
    match = Q()
    for term in terms:
        match |= Q(content__icontains=term)
    rows = (
        L1Record.objects.filter(profile=profile).filter(filters.db_q()).filter(match)
        .select_related("scene").order_by("-created_at")[:DEGRADED_SCAN_LIMIT]
    )
    scored = []
    for row in rows:
        if not filters.accepts(row):
            continue
        text = row.content.lower()
        matched = sum(1 for term in terms if term in text)
        if matched:
            scored.append((matched / len(terms), row.priority, row.record_id))
    scored.sort(key=lambda s: (-s[0], -s[1]))
    return [Ranked(record_id=rid, fused=score, score=score, relevance=score) for score, _, rid in scored[:limit]]


def _content_cut(content: str, limit: int) -> tuple[str, bool]:
    if len(content) <= limit:
        return content, False
    return content[: max(0, limit - 1)] + "…", True


def _record_out(row: L1Record, ranked: Ranked, max_chars: int) -> dict[str, Any]:
    content, cut = _content_cut(row.content, max_chars)
    out: dict[str, Any] = {
        "recordId": row.record_id,
        "score": round(ranked.score, 6),
        "relevance": round(ranked.relevance, 4),
        "content": content,
        "type": row.type,
        "priority": row.priority,
        "scene_name": row.scene_name,
        "createdAt": row.created_at.isoformat().replace("+00:00", "Z") if row.created_at else None,
    }
    if cut:
        out["contentTruncated"] = True
    if row.type == "work_task":
        state = row.task_state or "open"
        out["taskState"] = state
        out["tag"] = TASK_TAGS[state]
    return out


RETRY_FAILED_AFTER_SECONDS = 60


def _try_drain(profile: Profile) -> None:
    """Bring the index up to date before searching when commits are still pending: new
    ops always, ops that failed three times at most once a minute (so a profile that
    only reads recovers after an outage without paying for it on every recall)."""
    from datetime import timedelta

    from django.utils import timezone

    from apps.search.models import IndexOp

    retry_before = timezone.now() - timedelta(seconds=RETRY_FAILED_AFTER_SECONDS)
    due = IndexOp.objects.filter(profile=profile).filter(
        Q(attempts__lt=3) | Q(last_attempt_at__isnull=True) | Q(last_attempt_at__lt=retry_before)
    )
    if due.exists():
        index.drain_outbox(profile.pk)


# What the database check, the boosts and the answer read of a candidate (the rest of the
# row, history fields and JSON lists, is not loaded).
LIVE_CHECK_FIELDS = ("record_id", "content", "type", "priority", "scene_name", "metadata", "created_at", "deleted",
                     "task_state", "scene__scene_id")


def live_rows(profile: Profile, record_ids: list[str]) -> dict[str, L1Record]:
    """The candidates' rows and their effective hits, in one query: whatever the index
    said, a tombstoned, missing or no-longer-matching row is then dropped by
    `Filters.accepts` (the index may lag behind a commit)."""
    if not record_ids:
        return {}
    qs = (
        L1Record.objects.filter(profile=profile, record_id__in=record_ids).select_related("scene")
        .only(*LIVE_CHECK_FIELDS).annotate(effective_hits_now=hit_selectors.effective_hits_of())
    )
    return {r.record_id: r for r in qs}


@dataclass
class RecallOutcome:
    rows: list[tuple[L1Record, Ranked]]
    degraded: bool
    reason: str = ""


def _finish(profile: Profile, cands: Candidates, *, top_k: int, filters: Filters, degraded: bool,
            min_relevance: float) -> list[tuple[L1Record, Ranked]]:
    if not degraded:
        # The language of every candidate (the dense pool too): remembered ones, the others
        # from one light read of live contents; then the full rows (and the database
        # check) of the fused candidates only.
        langs, missing = ranking.known_languages(profile.pk, cands.record_ids())
        if missing:
            langs.update(ranking.remember_languages(profile.pk, dict(
                L1Record.objects.filter(profile=profile, record_id__in=missing, deleted=False)
                .values_list("record_id", "content"))))
        rank_candidates(cands, langs)
    ids = [r.record_id for r in cands.ranked]
    rows = live_rows(profile, ids)
    if not degraded:
        ranking.remember_languages(profile.pk, {rid: row.content for rid, row in rows.items()})
    kept = [r for r in cands.ranked if r.record_id in rows and filters.accepts(rows[r.record_id])]
    if degraded:  # keyword share: its own relevance, no calibration to apply
        kept.sort(key=lambda r: -r.score)
    else:
        _apply_boosts(profile, kept, rows)
        kept = _final_order(kept)[:top_k]
        for position, item in enumerate(kept, start=1):
            item.features = relevance_features(item, cands, rows[item.record_id].content, position)
        floor = 0.0
        for item in reversed(kept):  # monotone in the final order: never below a record under it
            floor = item.relevance = max(_relevance(item.features), floor)
        kept = [r for r in kept if r.relevance >= min_relevance]
    return [(rows[r.record_id], r) for r in kept[:top_k]]


def min_relevance(profile: Profile) -> float:
    return float(profile_setting(profile, "recall.minRelevance"))


def recall_search(profile: Profile, query: str, *, top_k: int, filters: Filters, timeout: float | None = None) -> RecallOutcome:
    """Hybrid search with the database check and the relevance threshold; falls back to
    keyword search. With `timeout` (seconds) the index part runs in a worker thread;
    raises FutureTimeout when it does not answer in time."""
    limit = 3 * top_k
    threshold = min_relevance(profile)
    try:
        if timeout is None:  # a bounded call must not spend its time embedding pending commits
            _try_drain(profile)
        state = index_ready(profile)
        raw = state == index.SPACE_RAW
        if state is None:
            cands = Candidates([])
        elif timeout is None:
            cands = index_candidates(profile, query, limit=limit, filters=filters, raw=raw)
        else:
            future = _pool.submit(index_candidates, profile, query, limit=limit, filters=filters, raw=raw)
            cands = future.result(timeout=timeout)
        rows = _finish(profile, cands, top_k=top_k, filters=filters, degraded=False, min_relevance=threshold)
        return RecallOutcome(rows, degraded=False)
    except (index.IndexUnavailable, embedding.EmbeddingUnavailable) as exc:
        logger.warning("recall degraded for profile %s: %s", profile.slug, exc)
        cands = Candidates(keyword_candidates(profile, query, limit=limit, filters=filters))
        rows = _finish(profile, cands, top_k=top_k, filters=filters, degraded=True, min_relevance=threshold)
        return RecallOutcome(rows, degraded=True, reason=str(exc))


# --------------------------------------------------------------- the tools
def recall_records(
    *, profile: Profile, query: str, top_k: int = 5, types: list[str] | None = None, scene_id: str | None = None,
    include_closed_tasks: bool | None = None, trace: bool = False, session_key: str = "", turn: str = "", cwd: str = "",
    actor: str = "",
) -> dict[str, Any]:
    """SPEC §3.14 `recall_l1_records`; `actor` (who asked) goes into the recall log."""
    _check_query(query, "query")
    _check_top_k(top_k, int(profile_setting(profile, "recall.maxTopK")))
    types = _check_types(types)
    if scene_id is not None and not scene_id.strip():
        raise invalid_field("sceneId", "must not be empty")
    scene_ids = _scene_family(profile, scene_id) if scene_id is not None else None
    limit = int(profile_setting(profile, "recall.callsPerTurn"))
    try:
        hitstats.recall_budget_take(profile=profile, session_key=session_key, turn=turn, limit=limit)
    except hitstats.BudgetExceeded:
        raise RateLimited(
            f"recall_l1_records may be called at most {limit} times per turn; this turn ({turn!r}) used them all. "
            "Answer from the context you have.",
            details={"limit": limit, "sessionKey": session_key, "turn": turn},
        ) from None
    try:
        filters = Filters(
            types=types, scene_ids=scene_ids,
            project_key=index.project_key(caller_project(profile=profile, session_key=session_key, cwd=cwd)),
            hide_closed=_hide_closed(profile, include_closed_tasks),
        )
        outcome = recall_search(profile, query, top_k=top_k, filters=filters)
        max_chars = int(profile_setting(profile, "recall.maxCharsPerMemory"))
        records = [_record_out(row, r, max_chars) for row, r in outcome.rows]
        if outcome.rows:  # an abstention gives no hits
            hitstats.hits_record(
                profile=profile, query=query, results=[(row.record_id, r.score) for row, r in outcome.rows],
                session_key=session_key, turn=turn, source="recall_l1_records", degraded=outcome.degraded,
                actor=actor,
            )
    except BaseException:  # only answered recalls count against the turn's budget
        hitstats.recall_budget_release(profile=profile, session_key=session_key, turn=turn)
        raise
    result: dict[str, Any] = {"records": records}
    if not records:
        result["noRelevantMemory"] = True
    if trace:
        result["trace"] = [_trace_entry(r) for _, r in outcome.rows]
    if outcome.degraded:
        result["degraded"] = True
    return result


def _trace_entry(r: Ranked) -> dict[str, Any]:
    """Ranks, fused score, boosts and why the order stands: `heldBelow` lists records a
    boost would have passed but both rankings place higher."""
    entry: dict[str, Any] = {"recordId": r.record_id, "denseRank": r.dense_rank, "sparseRank": r.sparse_rank,
                             "fused": round(r.fused, 6), "boosts": r.boosts, "score": round(r.score, 6),
                             "relevance": round(r.relevance, 4)}
    if r.stand_in_rank is not None:
        entry["standInRank"] = r.stand_in_rank
    if r.held_below:
        entry["heldBelow"] = list(r.held_below)
    return entry


def embed_and_search(*, profile: Profile, queries: list[str] | None, query_text: str | None, top_k: int = 5) -> dict[str, Any]:
    """SPEC §3.16: cosine search of live records for each query (dedup candidates)."""
    if queries is not None and query_text is not None:
        raise InvalidParams("pass either queries or queryText, not both",
                            details=[{"field": "queries", "message": "conflicts with queryText"}])
    if queries is None and query_text is None:
        raise InvalidParams("one of queries or queryText is required",
                            details=[{"field": "queries", "message": "required (or queryText)"}])
    max_queries = int(profile_setting(profile, "embedAndSearch.maxQueries"))
    if query_text is not None:
        texts = [_check_query(query_text, "queryText")]
    else:
        assert queries is not None
        if not queries:
            raise invalid_field("queries", "must hold at least one query")
        if len(queries) > max_queries:
            raise invalid_field("queries", f"at most {max_queries} queries per call, got {len(queries)}; split them into chunks")
        texts = [_check_query(q, f"queries.{i}") for i, q in enumerate(queries)]
    _check_top_k(top_k, int(profile_setting(profile, "recall.maxTopK")))
    preview = int(profile_setting(profile, "embedAndSearch.previewChars"))

    results: list[dict[str, Any]] = [{"index": i, "queryText": t, "queryVector": None, "candidates": []} for i, t in enumerate(texts)]
    try:
        vectors = embedding.embed(texts, kind=embedding.PASSAGE)
    except embedding.EmbeddingUnavailable as exc:
        for item in results:
            item["fallback"] = True
            item["error"] = str(exc)
        return {"results": results}
    for item, vec in zip(results, vectors):
        item["queryVector"] = [round(float(x), 7) for x in vec]
    try:
        _try_drain(profile)
        has_index = index.current_collection(profile) is not None
        if not has_index and L1Record.objects.filter(profile=profile, deleted=False).exists():
            raise index.IndexUnavailable("the profile has records but no index")
    except index.IndexUnavailable as exc:
        for item in results:
            item["fallback"] = True
            item["error"] = str(exc)
        return {"results": results}
    found_of: dict[int, list[Any]] = {}
    for item, vec in zip(results, vectors):
        try:
            found_of[item["index"]] = index.search_dense(profile, vec, limit=top_k * 2) if has_index else []
        except index.IndexUnavailable as exc:
            item["fallback"] = True
            item["error"] = str(exc)
    # One read for the candidates of every query (a dedup batch asks up to
    # embedAndSearch.maxQueries at once): the live check and the previews.
    rows = records_by_id(profile, [c.record_id for found in found_of.values() for c in found],
                         fields=("record_id", "content", "type", "priority", "deleted"))
    for item in results:
        if item["index"] not in found_of:
            continue
        cands = []
        for cand in found_of[item["index"]]:
            row = rows.get(cand.record_id)
            if row is None or row.deleted:
                continue  # tombstoned or gone: never a candidate
            content, cut = _content_cut(row.content, preview)
            cands.append({"record_id": row.record_id, "content": content, "contentTruncated": cut, "type": row.type,
                          "priority": row.priority, "score": round(cand.score, 6)})
            if len(cands) >= top_k:
                break
        item["candidates"] = cands
    return {"results": results}


def recall_context(*, profile: Profile, query: str, session_key: str, cwd: str, actor: str = "") -> dict[str, Any]:
    """SPEC §3.19: the live USER.md, then the top `recall.autoInjectTopK` records as
    `- [type|scene] content` lines, within `recall.timeoutMs`."""
    started = time.monotonic()
    timeout = int(profile_setting(profile, "recall.timeoutMs")) / 1000.0
    persona = _persona_text(profile)
    lines: list[str] = []
    injected: list[tuple[str, float]] = []
    degraded = False
    if isinstance(query, str) and query.strip():
        top_k = int(profile_setting(profile, "recall.autoInjectTopK"))
        filters = Filters(
            project_key=index.project_key(caller_project(profile=profile, session_key=session_key, cwd=cwd)),
            hide_closed=_hide_closed(profile, None),
        )
        remaining = timeout - (time.monotonic() - started)
        try:
            if remaining <= 0:
                raise FutureTimeout()
            outcome = recall_search(profile, query, top_k=top_k, filters=filters, timeout=remaining)
        except FutureTimeout:
            return {"block": "", "timedOut": True}
        if time.monotonic() - started > timeout:
            return {"block": "", "timedOut": True}
        degraded = outcome.degraded
        max_chars = int(profile_setting(profile, "recall.maxCharsPerMemory"))
        for row, ranked in outcome.rows:
            content, _ = _content_cut(row.content.replace("\n", " "), max_chars)
            tag = f"{TASK_TAGS[row.task_state or 'open']} " if row.type == "work_task" else ""
            lines.append(f"- [{row.type}|{row.scene_name or '-'}] {tag}{content}")
            injected.append((row.record_id, ranked.score))
    parts = []
    if persona.strip():
        parts.append(persona.strip())
    if lines:
        parts.append("\n".join(lines))
    if injected:
        hitstats.hits_record(profile=profile, query=query, results=injected, session_key=session_key,
                             source="recall_context", degraded=degraded, actor=actor)
    result: dict[str, Any] = {"block": "\n\n".join(parts), "timedOut": False, "recordIds": [rid for rid, _ in injected]}
    if degraded:
        result["degraded"] = True
    return result


def _persona_text(profile: Profile) -> str:
    try:
        from apps.persona.services import persona_live_text
    except ImportError:
        return ""
    try:
        return persona_live_text(profile=profile) or ""
    except Exception:  # the injection block must answer even if the persona store is broken
        logger.warning("persona text unavailable for %s", profile.slug, exc_info=True)
        return ""
