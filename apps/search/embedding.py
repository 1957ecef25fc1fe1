"""The dense embedding model, loaded offline through fastembed.

Default: the locally built multilingual-e5-small (`manage.py embeddings build`, see
`model_build.py`) in `settings.EMBED_MODEL_DIR`. `MEMORYWEB_EMBED_MODEL` names any
fastembed model instead (downloaded by fastembed when online).

e5 is trained with prefixes: recall queries are embedded as `query: <text>`, stored
records as `passage: <text>`. `embed_and_search` compares candidate records with stored
records (a symmetric task) and returns a vector the caller may pass back at commit, so it
embeds as `passage:` too.

Language-centroid debiasing (SPEC §4): every vector this module returns has the mean
vector of its language and prefix subtracted and is renormalised. The centroids come
from neutral calibration sentences (`calibration.py`), stored in the model manifest at
build (computed on load for a model without them). A text's language is its CJK share
(`cjk_share`); a mixed text subtracts the two centroids weighted by that share. Raw model
vectors never leave this module except through `embed(..., raw=True)` (the space of an
index built before debiasing, used while it is rebuilt).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings

from apps.metrics.instruments import observe_embedding
from apps.search import model_build

logger = logging.getLogger(__name__)

QUERY = "query"
PASSAGE = "passage"
# Two LRUs of model vectors, keyed by (embedding space id, prefixed text digest): a small
# one for recall queries (an agent repeats its questions; a hit skips ~7 ms of model time
# on the recall path) and a larger one for passages (an unchanged text is not embedded
# again: a commit's vector recognised at drain, a reindex of unchanged content). Separate,
# so a bulk of passages never pushes the queries out. The space id in the key means a
# vector computed in one space is never served in another.
QUERY_CACHE_SIZE = 512
PASSAGE_CACHE_SIZE = 4096
# Each text is one model run of its own (no padding, and with the model's per-tensor
# dynamic int8 quantisation a text's vector does not depend on what it was embedded
# with), and the texts of a call are spread over this many threads running the one
# session side by side (onnxruntime releases the GIL). Measured on 2 cores: one run per
# text costs the same CPU per text as batches of 16-64 of these short texts, and two
# runs in parallel keep both cores busy where one batched run left much of its time in
# single-threaded steps (docs/retrieval.md, "Embedding throughput").
EMBED_WORKERS = max(1, min(os.cpu_count() or 1, 4))
# Threads of one model run. The workers above already keep the cores busy, so each run
# gets one: with two threads per run two parallel runs asked four threads of two cores,
# and on this 2-core machine 2,000 short texts went at 408-425 texts/s against 509-512
# with one, a call of ten texts took 25.5-26.8 ms against 21.0-22.3, and a single query
# was no faster with two (p50 3.8-4.0 ms against 3.6-3.9; docs/retrieval.md).
SESSION_THREADS = 1 if EMBED_WORKERS > 1 else max(1, os.cpu_count() or 1)
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
TRANSFORM_VERSION = 1
# "weighted" (default): a mixed text subtracts both centroids in proportion to its CJK
# share; "hard": the centroid of its majority language; "off": raw model vectors.
DEBIAS_MODE = "weighted"
DEBIAS_SCALE = 1.0  # share of the centroid subtracted (1.0 = all of it)
# Weight of one Latin letter against one CJK character when measuring the CJK share: a
# CJK character carries about a syllable, an English syllable takes about three letters.
LATIN_LETTERS_PER_CJK = 3.0
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff]")
_LATIN = re.compile(r"[A-Za-z]")


class EmbeddingUnavailable(RuntimeError):
    """The model is not built / cannot be loaded; the message says what to do."""


@dataclass
class _Loaded:
    key: str
    name: str
    dim: int
    prefixes: bool
    model: object
    centroids: dict[str, dict[str, np.ndarray]]
    space: str


_lock = threading.Lock()
_loaded: _Loaded | None = None
_caches: dict[str, OrderedDict[tuple[str, str], np.ndarray]] = {QUERY: OrderedDict(), PASSAGE: OrderedDict()}
_cache_lock = threading.Lock()


def _cache_key(loaded: _Loaded, kind: str, text: str) -> tuple[str, str]:
    prefixed = f"{kind}: {text}" if loaded.prefixes else text
    return loaded.space, f"{kind}\x00{text_hash(prefixed)}"


def _cache_limit(kind: str) -> int:
    return QUERY_CACHE_SIZE if kind == QUERY else PASSAGE_CACHE_SIZE


def cache_clear() -> None:
    with _cache_lock:
        for cache in _caches.values():
            cache.clear()


def local_model_dir() -> Path:
    return model_build.model_dir(Path(settings.EMBED_MODEL_DIR))


def _config_key() -> str:
    return settings.EMBED_MODEL or f"local:{local_model_dir()}"


def get_model() -> _Loaded:
    global _loaded
    key = _config_key()
    loaded = _loaded
    if loaded is not None and loaded.key == key:
        return loaded
    with _lock:
        if _loaded is not None and _loaded.key == key:
            return _loaded
        _loaded = _load(key)
        cache_clear()  # the keys name the space already; this only frees the memory
        return _loaded


def _load(key: str) -> _Loaded:
    if settings.EMBED_MODEL:
        from fastembed import TextEmbedding

        name = settings.EMBED_MODEL
        try:
            model = TextEmbedding(name, cache_dir=str(Path(settings.EMBED_MODEL_DIR) / "fastembed"))
        except Exception as exc:
            raise EmbeddingUnavailable(f"cannot load fastembed model {name!r} (MEMORYWEB_EMBED_MODEL): {exc}") from exc
        dim = len(next(iter(model.embed(["probe"]))))
        prefixes = "e5" in name.lower()
        block = model_build.compute_centroids(model, prefixes=prefixes)
        return _Loaded(key=key, name=name, dim=dim, prefixes=prefixes, model=model, centroids=_centroid_arrays(block),
                       space=_space(name, dim, "fastembed"))
    folder = local_model_dir()
    manifest = model_build.read_manifest(folder)
    if manifest is None or not model_build.manifest_files_ok(folder, manifest):
        raise EmbeddingUnavailable(
            f"the embedding model is not built in {folder}; run `python manage.py embeddings build` "
            "(downloads ~91 MB once; set MEMORYWEB_EMBED_MODEL_DIR to share a build)"
        )
    try:
        model = model_build.load_fastembed(folder, threads=SESSION_THREADS, tokenizer=settings.EMBED_TOKENIZER)
    except Exception as exc:
        raise EmbeddingUnavailable(f"cannot load the embedding model in {folder}: {exc}; rebuild with `embeddings build --force`") from exc
    if model_build.centroids_current(manifest):
        block = manifest["centroids"]
    else:  # a folder built before the centroids existed: usable, `make embeddings` stores them
        logger.warning("the model in %s has no current language centroids; computing them now "
                       "(run `python manage.py embeddings build` to store them)", folder)
        block = model_build.compute_centroids(model)
    dim = int(manifest["dim"])
    return _Loaded(key=key, name=model_build.MODEL_NAME, dim=dim, prefixes=True, model=model,
                   centroids=_centroid_arrays(block), space=_space(model_build.MODEL_NAME, dim, manifest["source"]["sha256"][:12]))


def _centroid_arrays(block: dict[str, dict[str, dict[str, list[float]]]]) -> dict[str, dict[str, np.ndarray]]:
    return {lang: {kind: np.asarray(vec, dtype=np.float32) for kind, vec in kinds.items()}
            for lang, kinds in block["vectors"].items()}


def _space(name: str, dim: int, build: str) -> str:
    from apps.search import calibration, sparse

    return f"{name}:{dim}:{build}/debias{TRANSFORM_VERSION}-{DEBIAS_MODE}-{DEBIAS_SCALE:g}-{calibration.digest()}/sparse{sparse.VERSION}"


def space_id() -> str:
    """The embedding space of the vectors this process writes: model + transform version
    (+ the sparse tokenizer's version). An index built in another space is rebuilt."""
    return get_model().space


def cjk_share(text: str) -> float:
    """Share of the text that is Chinese: CJK characters against Latin letters (three
    letters weigh as one character); 0.0 for a text with neither."""
    cjk = len(_CJK.findall(text))
    latin = len(_LATIN.findall(text)) / LATIN_LETTERS_PER_CJK
    return cjk / (cjk + latin) if cjk + latin else 0.0


def debias(vectors: np.ndarray, texts: list[str], *, kind: str, centroids: dict[str, dict[str, np.ndarray]]) -> np.ndarray:
    """Subtract each text's language centroid (by CJK share) and renormalise."""
    if DEBIAS_MODE == "off" or not len(texts):
        return vectors
    shares = np.array([cjk_share(t) for t in texts], dtype=np.float32)
    if DEBIAS_MODE == "hard":
        shares = (shares >= 0.5).astype(np.float32)
    mean = shares[:, None] * centroids["zh"][kind][None, :] + (1.0 - shares)[:, None] * centroids["en"][kind][None, :]
    out = vectors - DEBIAS_SCALE * mean
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    debiased: np.ndarray = (out / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return debiased


def model_name() -> str:
    return get_model().name


def dimension() -> int:
    return get_model().dim


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def embed(texts: list[str], *, kind: str, raw: bool = False) -> np.ndarray:
    """Embed texts as `kind` (QUERY or PASSAGE); rows are L2-normalised float32 in the
    debiased space (`raw=True`: the model's own vectors, the space before debiasing).
    Texts seen recently in this space come from the LRU of their kind; of the texts
    handed to `embed_ahead`, the one in the model is waited for and the others are taken
    over, never embedded twice."""
    loaded = get_model()
    if not texts:
        return np.zeros((0, loaded.dim), dtype=np.float32)
    out: list[np.ndarray | None] = [None] * len(texts)
    keys = [_cache_key(loaded, kind, text) for text in texts]
    todo, claimed, waiting = _from_cache(kind, keys, out)
    if todo:
        try:
            _compute(loaded, kind, texts, keys, todo, out)
        finally:
            _release(claimed)
    for future in {id(f): f for f in waiting.values()}.values():
        try:
            future.result(timeout=AHEAD_WAIT_SECONDS)
        except Exception:  # noqa: BLE001 - whatever it was, the text is embedded below
            pass
    if waiting:
        late, _, _ = _from_cache(kind, keys, out, only=list(waiting))
        if late:  # its run ahead failed or timed out: embed it here
            _compute(loaded, kind, texts, keys, late, out)
    stacked = np.vstack([vec for vec in out if vec is not None]).astype(np.float32)  # every slot is filled by now
    return stacked if raw else debias(stacked, texts, kind=kind, centroids=loaded.centroids)


def _from_cache(kind: str, keys: list[tuple[str, str]], out: list[np.ndarray | None], only: list[int] | None = None
                ) -> tuple[list[int], list[_AheadText], dict[int, Future[None]]]:
    """Fill `out` from the LRU. Returns the indexes to embed now (with the texts taken
    over from `embed_ahead`, to release once embedded) and those in the model ahead."""
    cache = _caches[kind]
    todo: list[int] = []
    claimed: list[_AheadText] = []
    waiting: dict[int, Future[None]] = {}
    with _cache_lock:
        for i in range(len(keys)) if only is None else only:
            hit = cache.get(keys[i])
            if hit is not None:
                cache.move_to_end(keys[i])
                out[i] = hit
                continue
            ahead = _ahead.get(keys[i]) if only is None else None
            if ahead is not None and ahead.started:
                waiting[i] = ahead.future
                continue
            if ahead is not None:
                ahead.started = True
                claimed.append(ahead)
            todo.append(i)
    return todo, claimed, waiting


def _compute(loaded: _Loaded, kind: str, texts: list[str], keys: list[tuple[str, str]], todo: list[int],
             out: list[np.ndarray | None]) -> None:
    """Run the model for `texts[i]`, i in `todo`, into `out` and the LRU."""
    prefix = f"{kind}: " if loaded.prefixes else ""
    started = time.monotonic()
    vectors = _run_model(loaded, [prefix + texts[i] for i in todo])
    observe_embedding(kind=kind, texts=len(todo), seconds=time.monotonic() - started)
    cache = _caches[kind]
    limit = _cache_limit(kind)
    with _cache_lock:
        for i, vec in zip(todo, vectors):
            vec = np.asarray(vec, dtype=np.float32)
            out[i] = vec
            cache[keys[i]] = vec
        while len(cache) > limit:
            cache.popitem(last=False)


# ------------------------------------------------------------ embedding ahead
# A write whose records are indexed after its transaction commits (`l1_commit`: the
# post-commit drain embeds every stored text) hands the texts to the model first: one
# background thread embeds them one by one (the model releases the GIL) while the caller
# validates, takes the write lock and writes its rows, so the core the database work
# leaves idle runs the model. When the drain's `embed` asks for the texts, it waits for
# the one in the model and takes over the rest, which it spreads over the embed pool as
# usual. Nothing depends on it: a text not embedded ahead, or whose run failed, is
# embedded by `embed` as before.
AHEAD_WAIT_SECONDS = 60.0
AHEAD_MAX_TEXTS = 256  # a larger batch is left to `embed`


@dataclass
class _AheadText:
    key: tuple[str, str]
    text: str
    future: Future[None] = field(default_factory=Future)
    started: bool = False  # in the model (ahead thread) or taken over by `embed`


_ahead: dict[tuple[str, str], _AheadText] = {}
_ahead_pool: ThreadPoolExecutor | None = None


def _release(entries: list[_AheadText], error: BaseException | None = None) -> None:
    with _cache_lock:
        for entry in entries:
            if _ahead.get(entry.key) is entry:
                del _ahead[entry.key]
    for entry in entries:
        if error is None:
            entry.future.set_result(None)
        else:
            entry.future.set_exception(error)


def _forget_threads_after_fork() -> None:
    """A forked child (a prefork worker, a server worker forked after the model loaded)
    inherits the pools but not their threads: work submitted there would never run. Nor
    does it have the thread that may have held a lock at the fork, so the locks are new."""
    global _pool, _ahead_pool, _pool_lock, _cache_lock
    _pool = _ahead_pool = None
    _pool_lock, _cache_lock = threading.Lock(), threading.Lock()
    _ahead.clear()


os.register_at_fork(after_in_child=_forget_threads_after_fork)


def embed_ahead(texts: list[str], *, kind: str = PASSAGE) -> None:
    """Start embedding `texts` in the background (see above); never raises, never waits."""
    try:
        loaded = get_model()
    except EmbeddingUnavailable:
        return  # the drain reports it
    global _ahead_pool
    wanted = {_cache_key(loaded, kind, text): text for text in texts}
    with _cache_lock:
        batch = [_AheadText(key, text) for key, text in wanted.items() if key not in _caches[kind] and key not in _ahead]
        if not batch or len(batch) > AHEAD_MAX_TEXTS:
            return
        if _ahead_pool is None:
            _ahead_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed-ahead")
        pool = _ahead_pool
        for entry in batch:
            _ahead[entry.key] = entry
    pool.submit(_run_ahead, loaded, kind, batch)


def _run_ahead(loaded: _Loaded, kind: str, batch: list[_AheadText]) -> None:
    for entry in batch:
        with _cache_lock:
            if entry.started:  # taken over by `embed`
                continue
            entry.started = True
        error: BaseException | None = None
        try:
            _compute(loaded, kind, [entry.text], [entry.key], [0], [None])
        except BaseException as exc:  # noqa: BLE001 - the waiting `embed` embeds the text itself
            logger.warning("embedding ahead failed (%s); the text is embedded when indexed", exc)
            error = exc
        _release([entry], error)


def _embed_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=EMBED_WORKERS, thread_name_prefix="embed")
        return _pool


def _run_texts(model: object, texts: Sequence[str]) -> list[np.ndarray]:
    embed_fn = model.embed  # type: ignore[attr-defined]
    out: list[np.ndarray] = []
    for text in texts:
        out.extend(np.asarray(vec, dtype=np.float32) for vec in embed_fn([text], batch_size=1))
    return out


def _run_model(loaded: _Loaded, texts: list[str]) -> list[np.ndarray]:
    """The model's vector of each (prefixed) text, one run per text, in input order."""
    workers = min(EMBED_WORKERS, len(texts))
    if workers <= 1:
        return _run_texts(loaded.model, texts)
    # Longest first, dealt round-robin, so the threads finish at about the same time; the
    # calling thread runs the first share itself.
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    shares = [order[w::workers] for w in range(workers)]
    futures = [_embed_pool().submit(_run_texts, loaded.model, [texts[i] for i in share]) for share in shares[1:]]
    results = [_run_texts(loaded.model, [texts[i] for i in shares[0]])] + [f.result() for f in futures]
    out: list[np.ndarray] = [np.empty(0, dtype=np.float32)] * len(texts)
    for share, vectors in zip(shares, results):
        for i, vec in zip(share, vectors):
            out[i] = vec
    return out


def embed_one(text: str, *, kind: str) -> np.ndarray:
    vector: np.ndarray = embed([text], kind=kind)[0]
    return vector


def cached(text: str, *, kind: str) -> np.ndarray | None:
    """The (debiased) embedding this process computed recently for `text`, if any."""
    loaded = get_model()
    with _cache_lock:
        hit = _caches[kind].get(_cache_key(loaded, kind, text))
    return None if hit is None else debias(hit[None, :], [text], kind=kind, centroids=loaded.centroids)[0]


def health() -> dict[str, Any]:
    try:
        loaded = get_model()
    except EmbeddingUnavailable as exc:
        return {"ok": False, "error": str(exc)}
    return {"ok": True, "model": loaded.name, "dim": loaded.dim, "space": loaded.space}


# (anchor, similar, unrelated): English, Chinese and across the two languages.
CHECK_TRIPLES = [
    ("The user prefers tea over coffee in the morning.", "In the morning they would rather drink tea than coffee.",
     "The build server runs out of disk space every Friday."),
    ("数据库密码每三个月轮换一次。", "每隔三个月需要更换一次数据库的密码。", "他周末喜欢去海边钓鱼。"),
    ("The project uses PostgreSQL for storage.", "这个项目用 PostgreSQL 做存储。", "我明天要去医院体检。"),
    ("用户不喜欢吃辣的食物。", "The user does not like spicy food.", "Deploy the service with docker compose."),
]


def self_check() -> dict[str, Any]:
    """Embed known pairs; similar must beat unrelated in every triple."""
    loaded = get_model()
    failures = []
    for anchor, similar, unrelated in CHECK_TRIPLES:
        a, s, u = embed([anchor, similar, unrelated], kind=PASSAGE)
        if not float(a @ s) > float(a @ u):
            failures.append({"anchor": anchor, "similar": float(a @ s), "unrelated": float(a @ u)})
    return {"ok": not failures, "model": loaded.name, "dim": loaded.dim, "pairs": len(CHECK_TRIPLES), "failures": failures}


def check_client_embedding(vector: list[float] | None, *, field: str) -> None:
    """Reject a client-supplied embedding whose dimension does not match the model
    (`invalid_params` naming `field`). Whether it is then used is decided at index time
    (it must be this model's embedding of exactly the final content)."""
    import math

    from apps.tools.errors import invalid_field

    if vector is None:
        return
    try:
        dim = dimension()
    except EmbeddingUnavailable:
        return  # nothing to compare with; the vector will simply not be used
    if len(vector) != dim:
        raise invalid_field(field, f"has {len(vector)} dimensions; the embedding model gives {dim}")
    if not all(math.isfinite(x) for x in vector):
        raise invalid_field(field, "must hold finite numbers only")
