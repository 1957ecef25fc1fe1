"""Cost and equality of the CC-CEDICT expansion maps (`apps/search/bilingual.py`).

    .venv/bin/python bench/bilingual_dict.py --measure          # RSS and times, fresh processes
    .venv/bin/python bench/bilingual_dict.py --measure --model  # the same with the embedding model loaded first
    .venv/bin/python bench/bilingual_dict.py --dump OUT.json    # every output the maps feed
    .venv/bin/python bench/bilingual_dict.py --check-all        # artifact vs in-memory build, all keys

* `--measure` starts fresh processes (Django set up on an empty data folder, nothing
  else) and prints the RSS after `sparse.setup()`, after the first expansion of a
  Chinese and of an English text, and after one pseudo-translation each way; the time
  of that first expansion; the time to sparse-encode the 348 records of
  `bench/data/records.jsonl` in a fresh process (first use included) and again warm.
* `--dump` writes the document vector of every record, the query vector and both
  pseudo-translations of every question of `bench/data/queries.jsonl`, and the
  expansion tokens of each: run it on two checkouts and compare the files (`cmp`).
* `--check-all` (code with the artifact only) derives the maps in memory the old way
  and looks every key of every map up through the artifact, plus keys absent from
  both; prints the counts checked and the mismatches.

Only public functions of `sparse` and `bilingual` are used, so `--measure` and `--dump`
also run on a checkout from before the artifact.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "bench" / "data"
ZH_TEXT = "用户对海鲜过敏，数据库连接池的大小在配置文件里设置。"
EN_TEXT = "The deploy script rotates the database password and restarts the worker."


def _setup_django() -> None:
    os.environ.setdefault("MEMORYWEB_DATA_DIR", tempfile.mkdtemp(prefix="mw-dict-"))
    os.environ.setdefault("MEMORYWEB_EMBED_MODEL_DIR", str(REPO / "var" / "models"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
    os.environ.pop("DATABASE_URL", None)
    sys.path.insert(0, str(REPO))
    import django

    django.setup()


def _rss() -> dict[str, float]:
    out: dict[str, float] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile"):
            out[key] = round(int(value.split()[0]) / 1024.0, 1)
    return out


def _records() -> list[str]:
    return [json.loads(line)["content"] for line in (DATA / "records.jsonl").read_text().splitlines() if line.strip()]


def _queries() -> list[str]:
    return [json.loads(line)["text"] for line in (DATA / "queries.jsonl").read_text().splitlines() if line.strip()]


def child_memory(model: bool) -> dict:
    _setup_django()
    from apps.search import bilingual, sparse

    out: dict = {"django": _rss()}
    if model:  # the embedding model first, as in a web process that has answered a recall
        from apps.search import embedding

        embedding.embed([ZH_TEXT, EN_TEXT], kind="passage")
        out["model"] = _rss()
    sparse.setup()
    out["setup"] = _rss()
    started = time.perf_counter()
    zh = bilingual.expand(sparse.tokenize(ZH_TEXT))
    out["first_expand_zh_s"] = round(time.perf_counter() - started, 3)
    started = time.perf_counter()
    en = bilingual.expand(sparse.tokenize(EN_TEXT))
    out["expand_en_s"] = round(time.perf_counter() - started, 4)
    out["expanded"] = _rss()
    out["expansions"] = [zh, en]
    bilingual.translate(ZH_TEXT, to="en")
    bilingual.translate(EN_TEXT, to="zh")
    out["translated"] = _rss()
    return out


def child_encode() -> dict:
    _setup_django()
    from apps.search import sparse

    texts = _records()
    sparse.setup()
    started = time.perf_counter()
    for text in texts:
        sparse.document_vector(text)
    cold = time.perf_counter() - started
    started = time.perf_counter()
    for text in texts:
        sparse.document_vector(text)
    warm = time.perf_counter() - started
    return {"records": len(texts), "cold_s": round(cold, 3), "warm_s": round(warm, 3), "rss": _rss()}


def _child(mode: str, model: bool = False) -> dict:
    argv = [sys.executable, __file__, "--child", mode] + (["--model"] if model else [])
    proc = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=REPO)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(runs: int, model: bool) -> None:
    for i in range(runs):
        m = _child("memory", model)
        loaded = f"with the embedding model {m['model']['VmRSS']} / {m['model']['RssAnon']}; " if model else ""
        print(f"run {i + 1}: RSS MB (VmRSS / RssAnon): django {m['django']['VmRSS']} / {m['django']['RssAnon']}; {loaded}"
              f"after sparse.setup() {m['setup']['VmRSS']} / {m['setup']['RssAnon']}; "
              f"after expanding a zh and an en text {m['expanded']['VmRSS']} / {m['expanded']['RssAnon']}; "
              f"after translate both ways {m['translated']['VmRSS']} / {m['translated']['RssAnon']}")
        print(f"       first expansion (zh) {m['first_expand_zh_s']} s, then en {m['expand_en_s']} s; "
              f"zh -> {m['expansions'][0][:6]}, en -> {m['expansions'][1][:6]}")
    for i in range(runs):
        e = _child("encode")
        print(f"run {i + 1}: sparse-encode {e['records']} records: fresh process {e['cold_s']} s (first use included), "
              f"warm {e['warm_s']} s; RSS after {e['rss']['VmRSS']} MB")


def dump(path: Path) -> None:
    _setup_django()
    from apps.search import bilingual, sparse

    out: dict = {"records": [], "queries": []}
    for text in _records():
        vec = sparse.document_vector(text)
        out["records"].append({"indices": vec.indices, "values": vec.values, "expand": bilingual.expand(sparse.tokenize(text))})
    for text in _queries():
        vec = sparse.query_vector(text)
        out["queries"].append({"indices": vec.indices, "values": vec.values,
                               "en": bilingual.translate(text, to="en"), "zh": bilingual.translate(text, to="zh")})
    path.write_text(json.dumps(out, ensure_ascii=False, sort_keys=True))
    print(f"{len(out['records'])} record vectors, {len(out['queries'])} query vectors and translations -> {path}")


def check_all() -> None:
    _setup_django()
    from apps.search import bilingual

    started = time.perf_counter()
    old = bilingual.build_in_memory()
    print(f"in-memory build: {time.perf_counter() - started:.1f} s; zh_en {len(old.zh_en)}, en_zh {len(old.en_zh)}, "
          f"glosses {len(old.glosses)}")
    zh_en, en_zh = bilingual.maps()
    table = bilingual.glosses()
    print(f"artifact: {bilingual.artifact_path()}; source {bilingual.source()}")
    absent = ["", "不存在的词语组合", "qqqzzz", "数据库连接池配置", "x", "用户", "the"]
    for name, ref, new in (("zh_en", old.zh_en, zh_en), ("en_zh", old.en_zh, en_zh), ("glosses", old.glosses, table)):
        bad = [k for k in ref if new.get(k) != ref[k] or k not in new or new[k] != ref[k]]
        extra = [k for k in absent if (k in new) != (k in ref) or new.get(k) != ref.get(k)]
        keys_equal = set(new) == set(ref) and len(new) == len(ref)
        print(f"{name}: {len(ref)} keys checked, {len(bad)} mismatches; {len(absent)} probe keys, {len(extra)} mismatches; "
              f"key sets equal: {keys_equal}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--measure", action="store_true")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--model", action="store_true", help="--measure: load the embedding model first")
    parser.add_argument("--dump", type=Path)
    parser.add_argument("--check-all", action="store_true")
    parser.add_argument("--child", choices=["memory", "encode"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child_memory(args.model) if args.child == "memory" else child_encode(), ensure_ascii=False))
    elif args.dump:
        dump(args.dump)
    elif args.check_all:
        check_all()
    else:
        measure(args.runs, args.model)


if __name__ == "__main__":
    main()
