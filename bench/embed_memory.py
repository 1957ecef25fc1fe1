"""Memory, load time and short-text throughput of the embedding model, each in a fresh
process: `embedding.get_model()` (timed), a few texts embedded, then RSS; then short
bilingual texts (bench/recall.py's generator) embedded in batches of 64 through
`embedding.embed`, and RSS again.

    python bench/embed_memory.py                       # this checkout, lean and tokenizers
    python bench/embed_memory.py --repo /path/to/other/checkout --label before

`--repo` imports the code of another checkout (the same script measures the code before
a change); `--tokenizers lean,tokenizers` sets MEMORYWEB_EMBED_TOKENIZER per run (a
checkout without the setting ignores it).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent


def child(repo: Path, model_dir: Path, texts: int, seed: int) -> dict[str, Any]:
    os.environ["MEMORYWEB_DATA_DIR"] = tempfile.mkdtemp(prefix="mw-embed-mem-")
    os.environ["MEMORYWEB_EMBED_MODEL_DIR"] = str(model_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
    sys.path.insert(0, str(repo))
    import django

    django.setup()
    from apps.search import embedding

    sys.path.insert(0, str(HERE / "bench"))
    from recall import rss_now_mb as _status  # RSS figures read as bench/recall.py reads them
    from recall import synth_text  # the generator of bench/recall.py --throughput

    base = _status()
    started = time.perf_counter()
    embedding.get_model()
    load_seconds = time.perf_counter() - started
    embedding.embed(["warm up", "用户喜欢喝茶。", "The deploy script needs the staging token."], kind=embedding.PASSAGE)
    loaded = _status()
    rng = random.Random(seed)
    batch = [synth_text(rng) + f" #{i}" for i in range(texts)]
    load_before = os.getloadavg()[0]
    cpu = time.process_time()
    started = time.perf_counter()
    for i in range(0, len(batch), 64):
        embedding.embed(batch[i:i + 64], kind=embedding.PASSAGE)
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu
    return {
        "loadSeconds": round(load_seconds, 2), "rssBase": base, "rssLoaded": loaded, "rssAfterThroughput": _status(),
        "texts": texts, "textsPerSecond": round(texts / seconds, 1), "textsPerCpuSecond": round(texts / cpu_seconds, 1),
        "avgChars": round(sum(map(len, batch)) / len(batch), 1),
        "loadAverage": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", default=str(HERE), help="the checkout whose code is measured")
    parser.add_argument("--label", default="")
    parser.add_argument("--model-dir", default=str(HERE / "var" / "models"))
    parser.add_argument("--tokenizers", default="lean,tokenizers")
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(Path(args.repo), Path(args.model_dir), args.texts, args.seed)))
        return
    for run in range(args.runs):
        for tok in [t for t in args.tokenizers.split(",") if t]:
            env = {**os.environ, "MEMORYWEB_EMBED_TOKENIZER": tok}
            cmd = [sys.executable, __file__, "--child", "--repo", args.repo, "--model-dir", args.model_dir,
                   "--texts", str(args.texts), "--seed", str(args.seed)]
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=args.repo)
            if proc.returncode != 0:
                raise SystemExit(f"child failed:\n{proc.stderr[-3000:]}")
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            name = f"{args.label or Path(args.repo).name} tokenizer={tok}"
            print(f"{name} run {run + 1}: load {r['loadSeconds']} s; RSS after load + 3 texts {r['rssLoaded']['VmRSS']} MB "
                  f"(anon {r['rssLoaded']['RssAnon']}, peak {r['rssLoaded']['VmHWM']}; process before load "
                  f"{r['rssBase']['VmRSS']}); after {r['texts']} texts {r['rssAfterThroughput']['VmRSS']} MB "
                  f"(peak {r['rssAfterThroughput']['VmHWM']}); {r['textsPerSecond']} texts/s wall, "
                  f"{r['textsPerCpuSecond']} per CPU-second (batches of 64, avg {r['avgChars']} chars, "
                  f"load average {r['loadAverage'][0]}→{r['loadAverage'][1]})", flush=True)


if __name__ == "__main__":
    main()
