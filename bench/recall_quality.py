"""Retrieval quality on a labelled bilingual set: recall@5 and MRR@10 for dense-only,
sparse-only (BM25) and hybrid (RRF k=60 over 3×topK per side).

    .venv/bin/python bench/recall_quality.py [--subjects 200] [--seed 3]

The set is generated from templates: `--subjects` systems (half with English names and
English records, half with Chinese names and Chinese records), ten facts each (port,
owner, database, release day, language, on-call person, config path, timeout, region,
incident ticket) — 2,000 records by default. Each labelled query targets one record:
* exact queries repeat a rare token of the record (a port, a path, a ticket id): the
  sparse side should win;
* paraphrase queries name the system but ask about the fact in other words: every
  record of that system shares the name, so only meaning separates them;
* cross-language queries ask in the other language (the name is kept).
Half of the queries are Chinese. Nothing is tuned on this set; the numbers are what the
shipped model and tokenizer give.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recall import REPO, setup_django

EN_PRE = ["orion", "atlas", "nova", "zephyr", "quartz", "ember", "lumen", "vortex", "cobalt", "summit"]
EN_SUF = ["api", "billing", "queue", "gateway", "search", "ledger", "auth", "notifier", "scheduler", "reports"]
ZH_PRE = ["星河", "云雀", "北辰", "青松", "赤焰", "白鹭", "紫藤", "金乌", "玄武", "朱雀"]
ZH_SUF = ["支付服务", "消息队列", "用户中心", "订单系统", "搜索服务", "推荐引擎", "日志平台", "网关", "风控系统", "报表服务"]
TEAMS = ["atlas", "borealis", "cobalt", "delta", "ember", "fjord", "granite", "harbor"]
ZH_TEAMS = ["基础架构", "支付", "增长", "数据平台", "安全", "移动端", "搜索", "运维"]
DBS = ["PostgreSQL", "MySQL", "MongoDB", "Cassandra", "Redis", "ClickHouse"]
DAYS = [("Monday", "周一"), ("Tuesday", "周二"), ("Wednesday", "周三"), ("Thursday", "周四"), ("Friday", "周五")]
LANGS = ["Go", "Rust", "Java", "Python", "Kotlin", "TypeScript"]
PEOPLE = [("Alice", "张伟"), ("Bob", "李娜"), ("Carol", "王芳"), ("Dave", "刘洋"), ("Erin", "陈静"), ("Frank", "赵磊")]
REGIONS = [("Frankfurt", "法兰克福"), ("Singapore", "新加坡"), ("Virginia", "弗吉尼亚"), ("Tokyo", "东京"), ("Sydney", "悉尼")]

# kind -> (EN record, EN paraphrase query, ZH record, ZH paraphrase query, exact query or None)
FACTS = {
    "port": ("{s} listens on port {port}.", "which network port is {s} bound to",
             "{s}监听 {port} 端口。", "{s}用的是哪个端口号", "port {port}"),
    "owner": ("{s} is maintained by the {team} team.", "who looks after {s}",
              "{s}由{zteam}团队维护。", "{s}归哪个组负责", None),
    "db": ("{s} stores its data in {db}.", "what storage engine backs {s}",
           "{s}的数据存放在 {db} 里。", "{s}后端用什么数据库", None),
    "release": ("{s} is released every {day}.", "when do new versions of {s} go out",
                "{s}每{zday}发布新版本。", "{s}一般哪天上线", None),
    "lang": ("{s} is written in {lang}.", "what programming language is {s} implemented in",
             "{s}是用 {lang} 开发的。", "{s}的开发语言是什么", None),
    "oncall": ("{person} is on call for {s} this month.", "who should I page if {s} breaks",
               "{zperson}这个月负责{s}的值班。", "{s}出故障了该找谁", None),
    "config": ("{s} reads its settings from {path}.", "where does {s} load its configuration",
               "{s}从 {path} 读取配置。", "{s}的配置文件放在哪里", "{path}"),
    "timeout": ("{s} gives up on a request after {sec} seconds.", "how long does {s} wait before a request times out",
                "{s}的请求超过 {sec} 秒就放弃。", "{s}请求多久算超时", None),
    "region": ("{s} runs in the {region} data centre.", "where is {s} hosted geographically",
               "{s}部署在{zregion}机房。", "{s}的服务器在哪个城市", None),
    "incident": ("Incident {ticket} happened because {s} ran out of memory.", "what went wrong with {s} memory usage",
                 "事故 {ticket} 的原因是{s}内存耗尽。", "{s}因为什么出过事故", "{ticket}"),
}
# Cross-language paraphrase questions (asked in the other language than the record).
CROSS = {
    "port": ("{s}监听哪个端口", "which port does {s} listen on"),
    "db": ("{s}用什么数据库存数据", "which database does {s} use"),
    "lang": ("{s}是用什么语言写的", "which programming language is {s} written in"),
    "region": ("{s}部署在哪个地区", "which region does {s} run in"),
}


def build_set(subjects: int, seed: int):
    rng = random.Random(seed)
    names = [f"{p}-{s}" for p in EN_PRE for s in EN_SUF]
    znames = [f"{p}{s}" for p in ZH_PRE for s in ZH_SUF]
    rng.shuffle(names)
    rng.shuffle(znames)
    half = subjects // 2
    systems = [("en", n) for n in names[:half]] + [("zh", n) for n in znames[: subjects - half]]
    records: list[tuple[str, str]] = []  # (key, text)
    queries: list[dict] = []
    used_ports: set[int] = set()
    for idx, (lang, name) in enumerate(systems):
        port = rng.randint(2000, 65000)
        while port in used_ports:
            port = rng.randint(2000, 65000)
        used_ports.add(port)
        day, zday = rng.choice(DAYS)
        person, zperson = rng.choice(PEOPLE)
        region, zregion = rng.choice(REGIONS)
        fill = {
            "s": name, "port": port, "team": rng.choice(TEAMS), "zteam": rng.choice(ZH_TEAMS), "db": rng.choice(DBS),
            "day": day, "zday": zday, "lang": rng.choice(LANGS), "person": person, "zperson": zperson,
            "path": f"/etc/{name.split('-')[0] if lang == 'en' else 'svc' + str(idx)}/{rng.choice(['app', 'main', 'svc'])}-{idx}.toml",
            "sec": rng.randint(3, 120), "region": region, "zregion": zregion, "ticket": f"INC-{rng.randint(10000, 99999)}",
        }
        for kind, (en_rec, en_q, zh_rec, zh_q, exact) in FACTS.items():
            key = f"{idx}:{kind}"
            records.append((key, (en_rec if lang == "en" else zh_rec).format(**fill)))
            queries.append({"key": key, "kind": "paraphrase", "lang": lang, "text": (en_q if lang == "en" else zh_q).format(**fill)})
            if exact:
                queries.append({"key": key, "kind": "exact", "lang": lang, "text": exact.format(**fill)})
            if kind in CROSS:
                zh_cross, en_cross = CROSS[kind]
                text = (zh_cross if lang == "en" else en_cross).format(**fill)
                queries.append({"key": key, "kind": "cross-language", "lang": "zh" if lang == "en" else "en", "text": text})
    return records, queries


def evaluate(records, queries, *, k: int = 5, mrr_depth: int = 10) -> dict:
    from django.utils import timezone

    from apps.accounts.services import profile_create
    from apps.records.models import L1Record
    from apps.records.normalize import content_key
    from apps.search import embedding, index, services

    profile = profile_create(slug="quality")
    now = timezone.now()
    rows = [
        L1Record(profile=profile, record_id=f"l1_q_{i:05d}", content=text, type="work_fact", priority=60,
                 metadata={"scope": "global", "project": ""}, created_at=now, updated_at=now, content_key=content_key(text))
        for i, (_, text) in enumerate(records)
    ]
    L1Record.objects.bulk_create(rows, batch_size=2000)
    key_of = {f"l1_q_{i:05d}": key for i, (key, _) in enumerate(records)}
    rows = list(L1Record.objects.filter(profile=profile).order_by("record_id"))
    started = time.perf_counter()
    for start in range(0, len(rows), 256):
        index.upsert_records(profile, rows[start : start + 256])
    index_seconds = time.perf_counter() - started

    qvecs = embedding.embed([q["text"] for q in queries], kind=embedding.QUERY)
    depth = max(mrr_depth, 3 * k)
    per_mode: dict[str, list[int | None]] = {"dense": [], "sparse": [], "hybrid": []}
    for q, vec in zip(queries, qvecs):
        dense = index.search_dense(profile, vec, limit=depth)
        sparse_ = index.search_sparse(profile, q["text"], limit=depth)
        hybrid = services._fuse(dense[: 3 * k], sparse_[: 3 * k])
        for mode, ranked in (("dense", [c.record_id for c in dense]), ("sparse", [c.record_id for c in sparse_]),
                             ("hybrid", [r.record_id for r in hybrid])):
            rank = next((i + 1 for i, rid in enumerate(ranked) if key_of[rid] == q["key"]), None)
            per_mode[mode].append(rank)

    def summarise(ranks: list[int | None]) -> dict:
        n = len(ranks)
        return {
            "recallAt5": round(sum(1 for r in ranks if r is not None and r <= k) / n, 4),
            "mrr": round(sum(1.0 / r for r in ranks if r is not None and r <= mrr_depth) / n, 4),
            "queries": n,
        }

    report = {"records": len(records), "queries": len(queries), "indexSeconds": round(index_seconds, 1), "overall": {}, "byKind": {}, "byLanguage": {}}
    for mode, ranks in per_mode.items():
        report["overall"][mode] = summarise(ranks)
        for group, field in (("byKind", "kind"), ("byLanguage", "lang")):
            for value in sorted({q[field] for q in queries}):
                sel = [r for r, q in zip(ranks, queries) if q[field] == value]
                report[group].setdefault(value, {})[mode] = summarise(sel)
    index.close_clients()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--subjects", type=int, default=200)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    records, queries = build_set(args.subjects, args.seed)
    setup_django(Path(tempfile.mkdtemp(prefix="mw-quality-")))
    report = evaluate(records, queries)
    zh = sum(1 for q in queries if q["lang"] == "zh")
    print(f"{report['records']} records, {report['queries']} queries ({zh} Chinese); indexing {report['indexSeconds']} s")
    print(f"{'':16}{'dense':>16}{'sparse':>16}{'hybrid':>16}   (recall@5 / MRR@10)")
    rows = [("overall", report["overall"])] + [(f"  {k}", v) for k, v in report["byKind"].items()] + \
        [(f"  lang={k}", v) for k, v in report["byLanguage"].items()]
    for label, modes in rows:
        n = modes["hybrid"]["queries"]
        cells = "".join(f"{modes[m]['recallAt5']:>9.3f}/{modes[m]['mrr']:.3f}" for m in ("dense", "sparse", "hybrid"))
        print(f"{label:<16}{cells}   n={n}")
    out = REPO / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "recall_quality.json").write_text(json.dumps(report, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
