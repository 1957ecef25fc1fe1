"""Retrieval benchmark: embedding throughput, index build, recall latency, l1_commit rate.

    .venv/bin/python bench/recall.py                      # 1k, 10k, 100k
    .venv/bin/python bench/recall.py --sizes 1000,10000   # a quicker run
    .venv/bin/python bench/recall.py --latency-only --sizes 10000 --distinct 2000 --min-relevance 0
                                                          # recall latency only (before/after checks)

Each size runs in its own process (so peak memory is per size) on a throwaway data dir
(SQLite + embedded Qdrant) with the model built by `make embeddings`. Records are
synthetic bilingual memories. Embedding 100k texts takes minutes, so for sizes above
`--distinct` only that many distinct texts are embedded and the remaining records reuse
those vectors with small Gaussian noise (re-normalised); sparse vectors are always
computed from each record's own text. The output says when this happened.

Measured:
* embedding throughput (short texts/s, batch 64, passage side);
* index build time (upsert of dense + sparse points, after embedding);
* recall p50/p95 without query embedding (dense + sparse search + fusion, index only),
  and of the full `recall_l1_records` service (query embedding, index, database check,
  boosts, hit logging);
* peak RSS of the process;
* l1_commit throughput with embedding (main-agent commits of 10 records through the tool
  layer, each drained into the index after commit).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def synth_text(rng: random.Random) -> str:
    fill = {"n": rng.randint(2, 99), "code": f"{rng.choice('ABCDEFGHJK')}{rng.choice('QXZW')}-{rng.randint(1000, 9999)}",
            "p": rng.randint(1024, 65000), "v": f"{rng.randint(9, 17)}.{rng.randint(0, 9)}", "team": rng.choice(TEAMS),
            "path": f"/etc/{rng.choice(TEAMS)}/{rng.choice(['app', 'svc', 'main'])}.toml"}
    if rng.random() < 0.5:
        return f"{rng.choice(ZH_SUBJECTS)}{rng.choice(ZH_FACTS).format(**fill)}。"
    text = f"{rng.choice(EN_SUBJECTS)} {rng.choice(EN_FACTS).format(**fill)}."
    return text[0].upper() + text[1:]


def setup_django(data_dir: Path) -> None:
    os.environ["MEMORYWEB_DATA_DIR"] = str(data_dir)
    os.environ["QDRANT_PATH"] = str(data_dir / "qdrant")
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


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    idx = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[idx]


# ----------------------------------------------------------------- one size
def run_size(size: int, distinct: int, queries: int, seed: int, min_relevance: float | None = None) -> dict:
    import numpy as np

    data_dir = Path(tempfile.mkdtemp(prefix=f"mw-bench-{size}-"))
    setup_django(data_dir)
    if min_relevance is not None:  # 0 = every recall answers and logs its hits, as before abstention existed
        from django.conf import settings

        settings.MEMORYWEB_DEFAULTS["recall.minRelevance"] = min_relevance
    from django.utils import timezone

    from apps.accounts.services import profile_create
    from apps.records.models import L1Record
    from apps.records.normalize import content_key
    from apps.search import embedding, index, services

    rng = random.Random(seed)
    profile = profile_create(slug="bench")
    texts = [synth_text(rng) for _ in range(size)]
    now = timezone.now()
    rows = [
        L1Record(profile=profile, record_id=f"l1_bench_{i:06d}", content=t, type="work_fact", priority=60,
                 metadata={"scope": "global", "project": ""}, created_at=now, updated_at=now, content_key=content_key(t))
        for i, t in enumerate(texts)
    ]
    L1Record.objects.bulk_create(rows, batch_size=2000)
    rows = list(L1Record.objects.filter(profile=profile).order_by("record_id"))

    embedding.get_model()
    n_distinct = min(size, distinct)
    started = time.perf_counter()
    base = embedding.embed([r.content for r in rows[:n_distinct]], kind=embedding.PASSAGE)
    embed_seconds = time.perf_counter() - started
    vectors = {}
    noise_rng = np.random.default_rng(seed)
    for i, row in enumerate(rows):
        if i < n_distinct:
            vec = base[i]
        else:
            vec = base[i % n_distinct] + noise_rng.normal(0, 0.02, base.shape[1]).astype(np.float32)
            vec = vec / np.linalg.norm(vec)
        vectors[row.record_id] = vec

    index.ensure_collection(profile)
    started = time.perf_counter()
    for start in range(0, len(rows), 512):
        chunk = rows[start : start + 512]
        index.upsert_records(profile, chunk, vectors={r.record_id: vectors[r.record_id] for r in chunk})
    build_seconds = time.perf_counter() - started

    qrng = random.Random(seed + 1)
    query_texts = [synth_text(qrng) for _ in range(queries)]
    filters = services.Filters()
    qvecs = embedding.embed(query_texts, kind=embedding.QUERY)
    index_ms = []
    languages = {}  # the database check's answer, outside the timing
    if hasattr(services, "rank_candidates"):
        from apps.search import ranking

        languages = {r.record_id: ranking.text_language(r.content) for r in rows}
    for text, vec in zip(query_texts, qvecs):
        t0 = time.perf_counter()
        if hasattr(services, "rank_candidates"):  # the language-aware ranking: dense pool, two sparse searches
            from apps.search import bilingual, ranking

            pool = index.search_dense(profile, vec, limit=ranking.DENSE_POOL_FACTOR * 15, spec=filters.spec())
            sparse_ = index.search_sparse(profile, text, limit=15, spec=filters.spec())
            translated = bilingual.translate(text, to=ranking.other_language(ranking.text_language(text)))
            sparse_t = index.search_sparse(profile, translated, limit=15, spec=filters.spec()) if translated.strip() else []
            cands = services.Candidates([], limit=15, dense=pool, sparse=sparse_, sparse_translated=sparse_t,
                                        words=ranking.query_words(text))
            services.rank_candidates(cands, {c: languages[c] for c in cands.record_ids()})
        else:
            dense = index.search_dense(profile, vec, limit=15, spec=filters.spec())
            sparse_ = index.search_sparse(profile, text, limit=15, spec=filters.spec())
            services._fuse(dense, sparse_)
        index_ms.append((time.perf_counter() - t0) * 1000)
    full_ms = []
    for i, text in enumerate(query_texts):
        t0 = time.perf_counter()
        services.recall_records(profile=profile, query=text + f" #{i}", top_k=5)  # uncached query embedding
        full_ms.append((time.perf_counter() - t0) * 1000)
    index.close_clients()
    return {
        "size": size,
        "distinctEmbedded": n_distinct,
        "vectorsReusedWithNoise": size - n_distinct,
        "embedTextsPerSecond": round(n_distinct / embed_seconds, 1),
        "indexBuildSeconds": round(build_seconds, 2),
        "recallIndexOnlyMs": {"p50": round(pct(index_ms, 0.5), 2), "p95": round(pct(index_ms, 0.95), 2)},
        "recallFullMs": {"p50": round(pct(full_ms, 0.5), 2), "p95": round(pct(full_ms, 0.95), 2)},
        "peakRssMb": round(peak_rss_mb(), 1),
        "queries": queries,
        "loadAverage": round(os.getloadavg()[0], 2),
    }


# ----------------------------------------------------------- commit throughput
def run_commit(records: int, seed: int) -> dict:
    data_dir = Path(tempfile.mkdtemp(prefix="mw-bench-commit-"))
    setup_django(data_dir)
    from apps.accounts.services import profile_create
    from apps.search import embedding, index
    from apps.search.models import IndexOp
    from apps.tools.dispatch import call_tool
    from apps.tools.registry import ToolContext

    profile = profile_create(slug="bench")
    embedding.get_model()
    rng = random.Random(seed)
    batch = 10
    started = time.perf_counter()
    stored = 0
    for turn in range(records // batch):
        texts = [f"{synth_text(rng)} (note {turn}-{i})" for i in range(batch)]
        ctx = ToolContext(profile=profile, role="agent", actor="bench", session_key="bench", turn=str(turn), cwd="/tmp")
        result = call_tool("l1_commit", {"source": "main-agent", "records": [{"content": t, "type": "work_fact"} for t in texts]}, ctx)
        stored += len(result["stored"])
    seconds = time.perf_counter() - started
    pending = IndexOp.objects.count()
    points = index.count_points(profile)
    index.close_clients()
    return {"records": stored, "seconds": round(seconds, 2), "recordsPerSecond": round(stored / seconds, 1),
            "batch": batch, "indexedPoints": points, "pendingOps": pending}


def run_throughput(n: int, seed: int) -> dict:
    data_dir = Path(tempfile.mkdtemp(prefix="mw-bench-embed-"))
    setup_django(data_dir)
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
    avg_chars = sum(map(len, texts)) / len(texts)
    # Texts per CPU-second tells what the model costs when other processes compete for
    # the cores; wall-clock texts/s is what a caller sees on this machine right now.
    return {"texts": n, "seconds": round(seconds, 2), "textsPerSecond": round(n / seconds, 1),
            "textsPerCpuSecond": round(n / cpu_seconds, 1), "avgChars": round(avg_chars, 1), "cpus": os.cpu_count(),
            "loadAverage": round(max(load_before, os.getloadavg()[0]), 2)}


def _child(args: list[str]) -> dict:
    out = subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True, text=True, cwd=str(REPO))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--distinct", type=int, default=10000, help="distinct texts embedded per size (the rest reuse vectors)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--commit-records", type=int, default=500)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--latency-only", action="store_true", help="only the per-size index and recall figures")
    parser.add_argument("--min-relevance", type=float, help="override recall.minRelevance in the size runs")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--commit", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--throughput", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_size(args.one, args.distinct, args.queries, args.seed, args.min_relevance)))
        return
    if args.commit:
        print(json.dumps(run_commit(args.commit_records, args.seed)))
        return
    if args.throughput:
        print(json.dumps(run_throughput(args.throughput, args.seed)))
        return

    report: dict = {}
    if not args.latency_only:
        report["throughput"] = _child(["--throughput", "2000", "--seed", str(args.seed)])
        t = report["throughput"]
        print(f"embedding: {t['textsPerSecond']} short texts/s wall, {t['textsPerCpuSecond']} per CPU-second "
              f"({t['texts']} texts, avg {t['avgChars']} chars, {t['cpus']} CPUs, load average {t['loadAverage']})", flush=True)
    report["sizes"] = []
    extra = ["--min-relevance", str(args.min_relevance)] if args.min_relevance is not None else []
    for size in [int(s) for s in args.sizes.split(",") if s]:
        res = _child(["--one", str(size), "--distinct", str(args.distinct), "--queries", str(args.queries), "--seed",
                      str(args.seed), *extra])
        report["sizes"].append(res)
        reuse = f" ({res['vectorsReusedWithNoise']} vectors reused with noise)" if res["vectorsReusedWithNoise"] else ""
        print(f"{size:>7} records{reuse}: build {res['indexBuildSeconds']} s; recall index-only p50 "
              f"{res['recallIndexOnlyMs']['p50']} ms p95 {res['recallIndexOnlyMs']['p95']} ms; full recall p50 "
              f"{res['recallFullMs']['p50']} ms p95 {res['recallFullMs']['p95']} ms; peak RSS {res['peakRssMb']} MB; "
              f"load average {res['loadAverage']}", flush=True)
    if args.latency_only:
        return
    report["commit"] = _child(["--commit", "--commit-records", str(args.commit_records), "--seed", str(args.seed)])
    c = report["commit"]
    print(f"l1_commit with embedding: {c['recordsPerSecond']} records/s ({c['records']} records in batches of {c['batch']}; "
          f"{c['indexedPoints']} indexed, {c['pendingOps']} pending)")
    out = REPO / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "recall.json").write_text(json.dumps(report, indent=1))
    print(f"wrote {out / 'recall.json'}")


if __name__ == "__main__":
    main()
