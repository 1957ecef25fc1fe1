"""Retrieval benchmark: both embedded engines on the same records, embedding throughput,
l1_commit rate.

    .venv/bin/python bench/recall.py --sizes 10000,100000,1000000   # engines side by side
    .venv/bin/python bench/recall.py --sizes 10000 --engines edge   # one engine, quicker
    .venv/bin/python bench/recall.py --latency-only --sizes 10000 --distinct 2000 --min-relevance 0
    .venv/bin/python bench/recall.py --crash                        # kill -9 mid-write, then reopen
    .venv/bin/python bench/recall.py --throughput 2000 [--session-threads 2]   # embedding rate only
    .venv/bin/python bench/recall.py --commit --commit-records 1000 [--session-threads 2]

Per size, on one throwaway data dir (SQLite) and in separate processes:
1. prepare: synthetic bilingual records (types, scopes, projects and scenes mixed as an
   agent's store would be) are written to the database; `--distinct` texts (default 10,000)
   are embedded and every further record reuses one of those vectors with Gaussian noise
   (σ 0.02, re-normalised) — the output says how many. Sparse vectors always come from each
   record's own text. Query texts and vectors are embedded once and shared.
2. build, once per engine (`edge`: Qdrant Edge; `local`: qdrant-client local mode + the
   in-memory mirror): the same records and vectors are upserted (build time), then the edge
   collection is optimised in a child process (optimise time).
3. serve, once per engine, in a fresh process like a restarted web process: model loaded,
   index opened (open time: edge rebuilds its IDF counts, local mode reads every point and
   the mirror is filled), then index-only latency (query vector given: dense + sparse +
   the fusion recall uses) unfiltered, with the scope filter recall always applies, and with
   type and scene filters; the full `recall_l1_records`; then RSS (current and peak, model
   included) and the index's disk size. Edge also reports its approximate dense top-15
   against an exact search (the HNSW recall).
At sizes above `--local-max` (default 100,000) local mode is not built (its upsert costs
1–4 ms per point and it holds ~11 KB per record in memory): the mirror alone is loaded
from the same vectors and measured index-only, which is what it would cost once local mode
had loaded (a lower bound for that engine). `--during-optimise` (default up to 100,000)
measures queries against a live edge collection while it is compacted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

EN_SUBJECTS = ["the staging cluster", "the billing service", "the nightly backup", "the frontend build", "the search index",
               "the auth gateway", "the data pipeline", "the mobile app", "the CI runner", "the metrics stack"]
EN_FACTS = ["runs on {n} nodes", "needs token {code} to deploy", "stores logs for {n} days", "uses port {p}",
            "was migrated to PostgreSQL {v}", "fails when the disk is above {n} percent", "is owned by team {team}",
            "restarts every {n} hours", "reads its config from {path}", "pins the client library at {v}"]
ZH_SUBJECTS = ["测试集群", "计费服务", "夜间备份任务", "前端构建", "搜索索引", "认证网关", "数据管道", "移动端应用", "持续集成机器", "监控系统"]
ZH_FACTS = ["部署在 {n} 台机器上", "部署时需要令牌 {code}", "日志保留 {n} 天", "使用端口 {p}", "已迁移到 PostgreSQL {v}",
            "磁盘超过百分之 {n} 时会失败", "由 {team} 团队负责", "每 {n} 小时重启一次", "从 {path} 读取配置", "客户端库固定在 {v} 版本"]
TEAMS = ["atlas", "borealis", "cobalt", "delta", "ember", "fjord"]
TYPES = ["work_fact", "work_fact", "work_fact", "work_decision", "work_task", "user_pref", "chat_fact"]
SCENES = 40
PROJECTS = [f"/home/dev/proj-{i:02d}" for i in range(10)]
BENCH_PROJECT = PROJECTS[3]


def synth_text(rng: random.Random) -> str:
    fill = {"n": rng.randint(2, 99), "code": f"{rng.choice('ABCDEFGHJK')}{rng.choice('QXZW')}-{rng.randint(1000, 9999)}",
            "p": rng.randint(1024, 65000), "v": f"{rng.randint(9, 17)}.{rng.randint(0, 9)}", "team": rng.choice(TEAMS),
            "path": f"/etc/{rng.choice(TEAMS)}/{rng.choice(['app', 'svc', 'main'])}.toml"}
    if rng.random() < 0.5:
        return f"{rng.choice(ZH_SUBJECTS)}{rng.choice(ZH_FACTS).format(**fill)}。"
    text = f"{rng.choice(EN_SUBJECTS)} {rng.choice(EN_FACTS).format(**fill)}."
    return text[0].upper() + text[1:]


def setup_django(data_dir: Path, engine: str | None = None) -> None:
    os.environ["MEMORYWEB_DATA_DIR"] = str(data_dir)
    # Each engine sees only its own folder: seeing the other's would start a migration.
    os.environ["QDRANT_PATH"] = str(data_dir / ("qdrant" if engine in (None, "local") else "no-local"))
    os.environ["QDRANT_EDGE_PATH"] = str(data_dir / ("index-edge" if engine in (None, "edge") else "no-edge"))
    if engine:
        os.environ["MEMORYWEB_INDEX_ENGINE"] = engine
    os.environ.setdefault("MEMORYWEB_EMBED_MODEL_DIR", str(REPO / "var" / "models"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
    os.environ.pop("DATABASE_URL", None)
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def rss_now_mb() -> dict[str, float]:
    out: dict[str, float] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            out[key] = round(int(value.split()[0]) / 1024.0, 1)
    return out


def du_mb(path: Path) -> float:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:  # blocks in use: the edge WAL preallocates sparse 32 MB files
                total += os.stat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass
    return round(total / 1e6, 1)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    idx = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[idx]


def p50_95(values: list[float]) -> dict[str, float]:
    return {"p50": round(pct(values, 0.5), 2), "p95": round(pct(values, 0.95), 2)}


# ------------------------------------------------------------------- prepare
def run_prepare(size: int, data_dir: Path, distinct: int, queries: int, seed: int) -> dict[str, Any]:
    import numpy as np

    setup_django(data_dir)
    from django.utils import timezone

    from apps.accounts.services import profile_create
    from apps.records.models import L1Record
    from apps.records.normalize import content_key
    from apps.scenes.models import SceneEntry
    from apps.search import embedding

    started = time.perf_counter()
    rng = random.Random(seed)
    profile = profile_create(slug="bench")
    scenes = SceneEntry.objects.bulk_create(
        [SceneEntry(profile=profile, scene_id=f"sc{i + 1:04d}", name=f"bench scene {i + 1}") for i in range(SCENES)])
    now = timezone.now()
    texts: list[str] = []
    for start in range(0, size, 20000):
        rows = []
        for i in range(start, min(size, start + 20000)):
            text = synth_text(rng)
            if i < distinct:
                texts.append(text)
            scope = "self" if i % 5 == 0 else ("unknown" if i % 10 == 1 else "global")
            rows.append(L1Record(
                profile=profile, record_id=f"l1_bench_{i:07d}", content=text, type=TYPES[i % len(TYPES)], priority=60,
                metadata={"scope": scope, "project": PROJECTS[i % len(PROJECTS)] if scope == "self" else ""},
                scene=scenes[i % SCENES] if i % 3 == 0 else None, task_state="open" if TYPES[i % len(TYPES)] == "work_task" else None,
                created_at=now, updated_at=now, content_key=content_key(text)))
        L1Record.objects.bulk_create(rows, batch_size=2000)
    rows_seconds = time.perf_counter() - started
    embedding.get_model()
    started = time.perf_counter()
    base = embedding.embed(texts[: min(size, distinct)], kind=embedding.PASSAGE)
    embed_seconds = time.perf_counter() - started
    np.save(data_dir / "base.npy", np.asarray(base, dtype=np.float32))
    qrng = random.Random(seed + 1)
    query_texts = [synth_text(qrng) for _ in range(queries)]
    qvecs = embedding.embed(query_texts, kind=embedding.QUERY)
    np.save(data_dir / "qvecs.npy", np.asarray(qvecs, dtype=np.float32))
    (data_dir / "queries.json").write_text(json.dumps(query_texts, ensure_ascii=False))
    return {"rowsSeconds": round(rows_seconds, 1), "distinctEmbedded": len(base),
            "embedTextsPerSecond": round(len(base) / embed_seconds, 1)}


def record_vectors(size: int, data_dir: Path, seed: int) -> Any:
    """The vector of every record, in record order: the embedded ones, then noisy reuses."""
    import numpy as np

    base = np.load(data_dir / "base.npy")
    n = len(base)
    out = np.empty((size, base.shape[1]), dtype=np.float32)
    out[:n] = base
    noise = np.random.default_rng(seed)
    for start in range(n, size, 50000):
        stop = min(size, start + 50000)
        vecs = base[np.arange(start, stop) % n] + noise.normal(0, 0.02, (stop - start, base.shape[1])).astype(np.float32)
        out[start:stop] = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    return out


# --------------------------------------------------------------------- build
def run_build(engine: str, size: int, data_dir: Path, seed: int) -> dict[str, Any]:
    setup_django(data_dir, engine)
    from apps.accounts.models import Profile
    from apps.records.models import L1Record
    from apps.search import edge, index

    edge.AUTO_COMPACT = False  # a bulk build is optimised once at the end, as a rebuild is (finish_build)
    profile = Profile.objects.get(slug="bench")
    vectors = record_vectors(size, data_dir, seed)
    name = index.ensure_collection(profile)
    started = time.perf_counter()
    rows = L1Record.objects.filter(profile=profile).select_related("scene").order_by("record_id")
    chunk: list[tuple[Any, int]] = []
    for idx, row in enumerate(rows.iterator(chunk_size=2000)):  # record ids follow the record order
        chunk.append((row, idx))
        if len(chunk) == 512:
            index.upsert_records(profile, [r for r, _ in chunk], vectors={r.record_id: vectors[k] for r, k in chunk})
            chunk = []
    if chunk:
        index.upsert_records(profile, [r for r, _ in chunk], vectors={r.record_id: vectors[k] for r, k in chunk})
    build_seconds = time.perf_counter() - started
    optimise_seconds = 0.0
    if engine == "edge":
        started = time.perf_counter()
        index.store().finish_build(name)
        optimise_seconds = time.perf_counter() - started
    points = index.count_points(profile)
    index.close_clients()
    return {"buildSeconds": round(build_seconds, 1), "optimiseSeconds": round(optimise_seconds, 1), "points": points,
            "loadAverage": round(os.getloadavg()[0], 2)}
# --------------------------------------------------------------------- serve
def _specs(project: str) -> dict[str, Any]:
    from apps.search import services
    from apps.search.mirror import FilterSpec

    return {"none": None, "scope": services.Filters(project_key=project).spec(),
            "type": FilterSpec(types=["user_pref"], project=project), "scene": FilterSpec(scene_ids=["sc0007"], project=project)}


def run_serve(engine: str, size: int, data_dir: Path, seed: int, during_optimise: bool) -> dict[str, Any]:
    import numpy as np

    mirror_only = engine == "mirror"
    setup_django(data_dir, "local" if mirror_only else engine)
    if os.environ.get("MEMORYWEB_BENCH_MIN_RELEVANCE"):
        from django.conf import settings

        settings.MEMORYWEB_DEFAULTS["recall.minRelevance"] = float(os.environ["MEMORYWEB_BENCH_MIN_RELEVANCE"])
    from apps.accounts.models import Profile
    from apps.search import embedding, index, services, sparse

    profile = Profile.objects.get(slug="bench")
    embedding.get_model()
    qvecs = np.load(data_dir / "qvecs.npy")
    qtexts: list[str] = json.loads((data_dir / "queries.json").read_text())
    project = index.project_key(BENCH_PROJECT)
    specs = _specs(project)
    out: dict[str, Any] = {"engine": engine}
    started = time.perf_counter()
    if mirror_only:
        # Local mode is not built at this size: the mirror alone, filled from the same
        # vectors and sparse vectors (what the mirror costs once local mode has loaded).
        from apps.records.models import L1Record
        from apps.search.mirror import Mirror

        vectors = record_vectors(size, data_dir, seed)
        mirror = Mirror(dim=vectors.shape[1])
        rows = L1Record.objects.filter(profile=profile).select_related("scene").order_by("record_id")
        for idx, row in enumerate(rows.iterator(chunk_size=5000)):
            sp = sparse.document_vector(row.content)
            mirror.upsert(row.record_id, vectors[idx], list(sp.indices), list(sp.values), index.record_payload(row))
        del vectors

        def dense(vec: Any, spec: Any) -> list[Any]:
            return [index.Candidate(r, sc) for r, sc in mirror.search_dense(vec, 15, spec)]

        def sparse_(text: str, spec: Any) -> list[Any]:
            sq = sparse.query_vector(text)
            return [index.Candidate(r, sc) for r, sc in mirror.search_sparse(list(sq.indices), list(sq.values), 15, spec)]
    else:
        index.search_dense(profile, qvecs[0], limit=15)  # opens the index (and loads it)

        def dense(vec: Any, spec: Any) -> list[Any]:
            return index.search_dense(profile, vec, limit=15, spec=spec)

        def sparse_(text: str, spec: Any) -> list[Any]:
            return index.search_sparse(profile, text, limit=15, spec=spec)
    out["openSeconds"] = round(time.perf_counter() - started, 2)
    for text, vec in zip(qtexts[:20], qvecs[:20]):  # warm-up
        dense(vec, specs["scope"])
        sparse_(text, specs["scope"])
    for label, spec in specs.items():
        d_ms, s_ms, h_ms = [], [], []
        for text, vec in zip(qtexts, qvecs):
            t0 = time.perf_counter()
            dn = dense(vec, spec)
            t1 = time.perf_counter()
            sp_ = sparse_(text, spec)
            t2 = time.perf_counter()
            services._fuse(dn, sp_)
            t3 = time.perf_counter()
            d_ms.append((t1 - t0) * 1000)
            s_ms.append((t2 - t1) * 1000)
            h_ms.append((t3 - t0) * 1000)
        out[f"index:{label}"] = {"hybrid": p50_95(h_ms), "dense": p50_95(d_ms), "sparse": p50_95(s_ms)}
    if not mirror_only:
        from bench.recall_phases import PhaseTimer

        full_ms = []
        for i, text in enumerate(qtexts):
            t0 = time.perf_counter()
            services.recall_records(profile=profile, query=text + f" #{i}", top_k=5)  # uncached query embedding
            full_ms.append((time.perf_counter() - t0) * 1000)
        out["recallFullMs"] = p50_95(full_ms)
        # The same calls again (other uncached queries), each phase timed: where the full path's time goes.
        timer = PhaseTimer()
        timer.install()
        try:
            for i, text in enumerate(qtexts):
                timer.run(lambda q=text + f" ~{i}": services.recall_records(profile=profile, query=q, top_k=5))
        finally:
            timer.uninstall()
        out["recallPhases"] = timer.summary()
    out["rssMb"] = rss_now_mb()
    out["diskMb"] = du_mb(data_dir / ("index-edge" if engine == "edge" else "qdrant")) if not mirror_only else None
    if engine == "edge":
        out["hnswRecallAt15"] = _hnsw_recall(profile, qvecs[:50], specs)
        if during_optimise:
            out["duringOptimise"] = _queries_during_compaction(profile, qtexts, qvecs, specs["scope"])
    out["loadAverage"] = round(os.getloadavg()[0], 2)
    index.close_clients()
    return out


def _hnsw_recall(profile: Any, qvecs: Any, specs: dict[str, Any]) -> dict[str, float]:
    """Share of the exact dense top 15 that the HNSW search returns (edge engine)."""
    import qdrant_edge as qe

    from apps.search import edge, index

    name = index.current_collection(profile)
    assert name is not None
    coll = index.store()._coll(name)  # type: ignore[attr-defined]
    out = {}
    for label in ("scope", "type"):
        shares = []
        for vec in qvecs:
            flt = edge.edge_filter(specs[label])
            approx = coll.query(qe.QueryRequest(limit=15, query=qe.Query.Nearest(vec.tolist(), using="dense"), filter=flt))
            exact = coll.query(qe.QueryRequest(limit=15, query=qe.Query.Nearest(vec.tolist(), using="dense"), filter=flt,
                                               params=qe.SearchParams(exact=True)))
            shares.append(len({p.id for p in approx} & {p.id for p in exact}) / max(1, len(exact)))
        out[label] = round(sum(shares) / len(shares), 3)
    return out


def _queries_during_compaction(profile: Any, qtexts: list[str], qvecs: Any, spec: Any) -> dict[str, Any]:
    """Hybrid queries against the live edge collection while it is compacted (copied,
    optimised in a child process, switched)."""
    from apps.search import index, services

    result: dict[str, Any] = {}

    def compact() -> None:
        result.update(index.compact(profile))

    worker = threading.Thread(target=compact)
    lat: list[float] = []
    worker.start()
    i = 0
    while worker.is_alive():
        t0 = time.perf_counter()
        services._fuse(index.search_dense(profile, qvecs[i % len(qvecs)], limit=15, spec=spec),
                       index.search_sparse(profile, qtexts[i % len(qtexts)], limit=15, spec=spec))
        lat.append((time.perf_counter() - t0) * 1000)
        i += 1
        time.sleep(0.02)
    worker.join()
    return {"compactSeconds": round(result.get("seconds", 0.0), 1), "queries": len(lat), **p50_95(lat),
            "maxMs": round(max(lat), 1) if lat else None}


# --------------------------------------------------------------------- crash
def run_crash_child(engine: str, root: Path) -> None:
    """Write batches forever, printing each acknowledged batch (killed by the parent)."""
    import numpy as np

    sys.path.insert(0, str(REPO))
    store = _crash_store(engine, root)
    store.create_collection("crash", 32, "bench")
    store.set_alias("mw-crash", "crash")
    rng = np.random.default_rng(1)
    batch = 0
    while True:
        pts = _crash_points(rng, batch)
        store.upsert("crash", pts)
        if batch % 5 == 4:
            store.delete("crash", [f"r{batch - 2}-{k}" for k in range(10)])
        print(f"acked {batch}", flush=True)
        batch += 1


def _crash_store(engine: str, root: Path) -> Any:
    if engine == "edge":
        from apps.search.edge import EdgeStore

        return EdgeStore(root)
    from qdrant_client import QdrantClient

    from apps.search.store import ClientStore

    return ClientStore(QdrantClient(path=str(root)), kind="local", location=str(root))


def _crash_points(rng: Any, batch: int) -> list[Any]:
    from apps.search.store import IndexPoint

    return [IndexPoint(f"r{batch}-{k}", rng.normal(size=32).astype("float32"), [int(batch % 97), 1000 + k], [1.0, 0.5],
                       {"record_id": f"r{batch}-{k}", "type": "work_fact", "scope": "global"}) for k in range(50)]


def run_crash(engine: str, seconds: float) -> dict[str, Any]:
    """kill -9 a process mid-write, reopen the store: acknowledged writes present, count
    consistent with what is retrievable, searches answer."""
    import numpy as np

    sys.path.insert(0, str(REPO))
    root = Path(tempfile.mkdtemp(prefix=f"mw-crash-{engine}-")) / "store"
    child = subprocess.Popen([sys.executable, __file__, "--crash-child", engine, str(root)], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, cwd=str(REPO))
    acked = -1
    deadline = time.time() + seconds
    assert child.stdout is not None
    for line in child.stdout:
        if line.startswith("acked "):
            acked = int(line.split()[1])
        if time.time() > deadline and acked >= 10:
            os.kill(child.pid, signal.SIGKILL)
            break
    child.wait()
    # a store a previous run might still create (edge: the child's writes after the last ack)
    if engine == "local":
        _wait_for_lock_release(root)
    started = time.perf_counter()
    store = _crash_store(engine, root)
    reopen = time.perf_counter() - started
    expected = {f"r{b}-{k}" for b in range(acked + 1) for k in range(50)}
    for b in range(acked + 1):
        if b % 5 == 4:
            expected -= {f"r{b - 2}-{k}" for k in range(10)}
    ids = sorted(expected)
    present = set()
    for start in range(0, len(ids), 1000):
        present |= store.present("crash", ids[start:start + 1000])
    count = store.count("crash")
    hits = store.search_dense("crash", np.ones(32, dtype="float32"), 5, None)
    sparse_hits = store.search_sparse("crash", [1000], [1.0], 5, None)
    store.close()
    return {"engine": engine, "ackedBatches": acked + 1, "ackedPoints": len(expected), "missingAcked": len(expected - present),
            "count": count, "extraUnacked": count - len(present), "reopenSeconds": round(reopen, 2),
            "searchAnswers": bool(hits) and bool(sparse_hits)}


def _wait_for_lock_release(root: Path) -> None:
    time.sleep(0.2)


# ----------------------------------------------------------- commit throughput
def _session_threads(threads: int | None) -> None:
    """`--session-threads`: run the model with another thread count than the service's
    (`embedding.SESSION_THREADS`), to compare the two in the same bench."""
    if threads:
        from apps.search import embedding

        embedding.SESSION_THREADS = threads


def _threads_used(threads: int | None) -> int:
    from apps.search import embedding

    return threads or embedding.SESSION_THREADS


def run_commit(records: int, seed: int, threads: int | None = None) -> dict:
    data_dir = Path(tempfile.mkdtemp(prefix="mw-bench-commit-"))
    setup_django(data_dir)
    _session_threads(threads)
    from apps.accounts.services import profile_create
    from apps.search import embedding, index
    from apps.search.models import IndexOp
    from apps.tools.dispatch import call_tool
    from apps.tools.registry import ToolContext

    profile = profile_create(slug="bench")
    embedding.get_model()
    rng = random.Random(seed)
    batch = 10

    def commit(turn: str) -> int:
        texts = [f"{synth_text(rng)} (note {turn}-{i})" for i in range(batch)]
        ctx = ToolContext(profile=profile, role="agent", actor="bench", session_key="bench", turn=turn, cwd="/tmp")
        result = call_tool("l1_commit", {"source": "main-agent", "records": [{"content": t, "type": "work_fact"} for t in texts]}, ctx)
        return len(result["stored"])

    # A serving process has opened the profile's collection and loaded the sparse
    # tokenizer (jieba, the bilingual maps) long before: one untimed commit does both
    # here (~1.6 s that a cold first commit pays once), and it is not counted.
    warm = commit("warm-up")
    started = time.perf_counter()
    stored = 0
    for turn in range(records // batch):
        stored += commit(str(turn))
    seconds = time.perf_counter() - started
    pending = IndexOp.objects.count()
    points = index.count_points(profile) - warm
    index.close_clients()
    shutil.rmtree(data_dir, ignore_errors=True)
    return {"records": stored, "seconds": round(seconds, 2), "recordsPerSecond": round(stored / seconds, 1),
            "batch": batch, "indexedPoints": points, "pendingOps": pending}


def run_throughput(n: int, seed: int, threads: int | None = None) -> dict:
    data_dir = Path(tempfile.mkdtemp(prefix="mw-bench-embed-"))
    setup_django(data_dir)
    _session_threads(threads)
    from apps.search import embedding

    rng = random.Random(seed)
    embedding.get_model()
    embedding.embed(["warm up"], kind=embedding.PASSAGE)
    texts = [synth_text(rng) + f" #{i}" for i in range(n)]
    load_before = os.getloadavg()[0]
    cpu_started = time.process_time()
    started = time.perf_counter()
    embedding.embed(texts, kind=embedding.PASSAGE)
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu_started
    shutil.rmtree(data_dir, ignore_errors=True)
    avg_chars = sum(map(len, texts)) / len(texts)
    # Texts per CPU-second tells what the model costs when other processes compete for
    # the cores; wall-clock texts/s is what a caller sees on this machine right now.
    return {"texts": n, "seconds": round(seconds, 2), "textsPerSecond": round(n / seconds, 1),
            "textsPerCpuSecond": round(n / cpu_seconds, 1), "avgChars": round(avg_chars, 1), "cpus": os.cpu_count(),
            "loadAverage": round(max(load_before, os.getloadavg()[0]), 2)}


def _child(args: list[str]) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, cwd=str(REPO))
    if proc.returncode != 0:
        raise SystemExit(f"bench child {args} failed:\n{proc.stderr[-3000:]}")
    if proc.stderr.strip():
        print(f"  (stderr of {args[0]} {args[1] if len(args) > 1 else ''}: {proc.stderr.strip()[-300:]})", flush=True)
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def _fmt(d: dict[str, float] | None) -> str:
    return f"{d['p50']:>7.2f} {d['p95']:>7.2f}" if d else f"{'-':>7} {'-':>7}"


def print_table(rows: list[dict[str, Any]]) -> None:
    print("\nrecords  engine  build s  optim s  open s | index-only hybrid p50/p95 ms: unfiltered    scope     "
          "type     scene | full recall p50/p95 |  RSS MB (peak) | disk MB | HNSW recall@15 scope/type | load")
    for r in rows:
        rss = r.get("rssMb") or {}
        hr = r.get("hnswRecallAt15")
        print(f"{r['size']:>7}  {r['engine']:<6} {r.get('buildSeconds', '-')!s:>8} {r.get('optimiseSeconds', '-')!s:>8} "
              f"{r.get('openSeconds', '-')!s:>7} | {_fmt(r['index:none']['hybrid'])} {_fmt(r['index:scope']['hybrid'])} "
              f"{_fmt(r['index:type']['hybrid'])} {_fmt(r['index:scene']['hybrid'])} | {_fmt(r.get('recallFullMs'))} | "
              f"{rss.get('VmRSS', '-')!s:>6} ({rss.get('VmHWM', '-')!s:>6}) | {r.get('diskMb') or '-'!s:>7} | "
              f"{(str(hr['scope']) + ' / ' + str(hr['type'])) if hr else '-':>13} | {r.get('loadAverage')}")
    print("\nindex-only, dense / sparse separately (p50 ms): unfiltered, scope, type, scene")
    for r in rows:
        parts = [f"{r[f'index:{k}']['dense']['p50']:.2f}/{r[f'index:{k}']['sparse']['p50']:.2f}" for k in ("none", "scope", "type", "scene")]
        print(f"{r['size']:>7}  {r['engine']:<6} " + "  ".join(parts))
    for r in rows:
        if r.get("duringOptimise"):
            d = r["duringOptimise"]
            print(f"{r['size']:>7}  {r['engine']}: {d['queries']} hybrid queries during a {d['compactSeconds']} s compaction: "
                  f"p50 {d['p50']} ms, p95 {d['p95']} ms, max {d['maxMs']} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--engines", default="edge,local", help="edge,local (local = qdrant-client local mode + mirror)")
    parser.add_argument("--distinct", type=int, default=10000, help="distinct texts embedded per size (the rest reuse vectors)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--local-max", type=int, default=100000, help="largest size local mode is built at")
    parser.add_argument("--during-optimise-max", type=int, default=100000, help="largest size compacted under queries")
    parser.add_argument("--commit-records", type=int, default=500)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--latency-only", action="store_true", help="only the per-size index and recall figures")
    parser.add_argument("--min-relevance", type=float, help="override recall.minRelevance in the size runs")
    parser.add_argument("--crash", action="store_true", help="kill -9 mid-write and reopen, both engines")
    parser.add_argument("--keep", action="store_true", help="keep the data dirs")
    parser.add_argument("--work-dir", help="where the per-size data dirs go (default: the system temp dir)")
    parser.add_argument("--prepare", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--build", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--serve", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--during-optimise", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--crash-child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--crash-one", help=argparse.SUPPRESS)
    parser.add_argument("--commit", action="store_true", help="only the l1_commit rate (--commit-records, batches of 10)")
    parser.add_argument("--throughput", type=int, help="only the embedding rate of this many short texts")
    parser.add_argument("--session-threads", type=int, help="threads per model run for --commit / --throughput "
                        "(default: the service's, embedding.SESSION_THREADS)")
    args = parser.parse_args()
    if args.prepare:
        print(json.dumps(run_prepare(int(args.prepare[0]), Path(args.prepare[1]), args.distinct, args.queries, args.seed)))
        return
    if args.build:
        print(json.dumps(run_build(args.build[0], int(args.build[1]), Path(args.build[2]), args.seed)))
        return
    if args.serve:
        if args.min_relevance is not None:  # 0 = every recall answers and logs its hits
            os.environ["MEMORYWEB_BENCH_MIN_RELEVANCE"] = str(args.min_relevance)
        print(json.dumps(run_serve(args.serve[0], int(args.serve[1]), Path(args.serve[2]), args.seed, args.during_optimise)))
        return
    if args.crash_child:
        run_crash_child(args.crash_child[0], Path(args.crash_child[1]))
        return
    if args.crash_one:
        print(json.dumps(run_crash(args.crash_one, 3.0)))
        return
    if args.commit:
        print(json.dumps({**run_commit(args.commit_records, args.seed, args.session_threads),
                          "sessionThreads": _threads_used(args.session_threads)}))
        return
    if args.throughput:
        print(json.dumps({**run_throughput(args.throughput, args.seed, args.session_threads),
                          "sessionThreads": _threads_used(args.session_threads)}))
        return

    report: dict[str, Any] = {"loadAverageStart": os.getloadavg()[0]}
    engines = [e for e in args.engines.split(",") if e]
    if args.crash:
        report["crash"] = []
        for engine in engines:
            res = _child(["--crash-one", engine])
            report["crash"].append(res)
            print(f"kill -9 mid-write, {engine}: {res['ackedPoints']} acknowledged points, {res['missingAcked']} of them "
                  f"missing after reopen; count {res['count']} ({res['extraUnacked']} from the unacknowledged batch); "
                  f"reopen {res['reopenSeconds']} s; searches answer: {res['searchAnswers']}", flush=True)
        return
    if not args.latency_only:
        report["throughput"] = _child(["--throughput", "2000", "--seed", str(args.seed)])
        t = report["throughput"]
        print(f"embedding: {t['textsPerSecond']} short texts/s wall, {t['textsPerCpuSecond']} per CPU-second "
              f"({t['texts']} texts, avg {t['avgChars']} chars, {t['cpus']} CPUs, load average {t['loadAverage']})", flush=True)
    rows: list[dict[str, Any]] = []
    common = ["--distinct", str(args.distinct), "--queries", str(args.queries), "--seed", str(args.seed)]
    extra = ["--min-relevance", str(args.min_relevance)] if args.min_relevance is not None else []
    started_all = time.perf_counter()
    for size in [int(s) for s in args.sizes.split(",") if s]:
        data_dir = Path(tempfile.mkdtemp(prefix=f"mw-bench-{size}-", dir=args.work_dir))
        t0 = time.perf_counter()
        prep = _child(["--prepare", str(size), str(data_dir), *common])
        reuse = size - prep["distinctEmbedded"]
        print(f"{size:>7} records: database rows {prep['rowsSeconds']} s, {prep['distinctEmbedded']} texts embedded "
              f"({prep['embedTextsPerSecond']}/s)" + (f", {reuse} records reuse those vectors with noise" if reuse else ""),
              flush=True)
        for engine in engines:
            row: dict[str, Any] = {"size": size}
            if engine == "local" and size > args.local_max:
                serve_engine = "mirror"
                row["note"] = "local mode not built at this size; mirror filled from arrays, index-only"
            else:
                serve_engine = engine
                row.update(_child(["--build", engine, str(size), str(data_dir), *common]))
            serve_args = ["--serve", serve_engine, str(size), str(data_dir), *common, *extra]
            if engine == "edge" and size <= args.during_optimise_max:
                serve_args.append("--during-optimise")
            row.update(_child(serve_args))
            rows.append(row)
            (REPO / "bench" / "out").mkdir(parents=True, exist_ok=True)
            (REPO / "bench" / "out" / f"recall-partial-{args.sizes.replace(',', '-')}.json").write_text(json.dumps(rows, indent=1))
            print(f"{size:>7} {serve_engine}: done ({round(time.perf_counter() - t0)} s so far for this size, load "
                  f"{row['loadAverage']})", flush=True)
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)
    report["sizes"] = rows
    print_table(rows)
    sys.path.insert(0, str(REPO))
    from bench.recall_phases import describe

    for row in rows:
        if row.get("recallPhases"):
            print(f"{row['size']:>7} {row['engine']} full recall, {describe(row['recallPhases'])}", flush=True)
    print(f"\nsize runs took {round(time.perf_counter() - started_all)} s", flush=True)
    out = REPO / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    if not args.latency_only:
        report["commit"] = _child(["--commit", "--commit-records", str(args.commit_records), "--seed", str(args.seed)])
        c = report["commit"]
        print(f"l1_commit with embedding: {c['recordsPerSecond']} records/s ({c['records']} records in batches of {c['batch']}; "
              f"{c['indexedPoints']} indexed, {c['pendingOps']} pending)")
    (out / f"recall-{args.sizes.replace(',', '-')}.json").write_text(json.dumps(report, indent=1))
    print(f"wrote {out}/recall-{args.sizes.replace(',', '-')}.json")


if __name__ == "__main__":
    main()
