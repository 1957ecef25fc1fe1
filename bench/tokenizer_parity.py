"""The lean tokenizer (apps/search/unigram.py) against the `tokenizers` Tokenizer that
fastembed loads for the local model: the same input ids and attention masks on a large,
varied corpus, one text at a time and in padded batches of 64.

Corpus (`corpus()`): every text under bench/data (records, queries, the strings of the
extraction, dedup and topic YAMLs), with the `query: `/`passage: ` prefixes the embedding
module adds; the calibration sentences and the model build's check texts; the module's
own edge cases; every line, paragraph and whole file of the repository's docs and Python
code (code, Markdown, long texts truncated at 512 tokens); seeded repeated-substring
strings (exact Viterbi ties) and seeded random strings over all assigned code points
(combining marks, the characters whose NFKC differs between Unicode versions, controls,
odd spaces, special tokens, full width).

    python bench/tokenizer_parity.py [--model-dir var/models] [--random 20000]
    python bench/tokenizer_parity.py --write-sample tests/search/data/tokenizer_sample.json

Prints the count of texts checked per category and every mismatch; exits 1 on any.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import unicodedata
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

EDGE_CASES = [
    "", " ", "\u3000", "\x7f", "\x1b[31mred\x1b[0m", "tab\tseparated\tvalues", "line\r\nbreaks\n\n\nhere",
    "emoji 😀😃😄 👍🏽 ❤️ 🏳️‍🌈 🧑‍💻", "全角：ＡＢＣ１２３，。！？（）【】「」《》", "mixed 中文English混合text测试",
    "ｈｔｔｐｓ：／／ｅｘａｍｐｌｅ．ｃｏｍ", "SELECT * FROM users WHERE id = 42; -- 查询",
    "```python\nimport os\nprint(os.environ.get('HOME'))\n```", "C:\\Users\\dev\\AppData\\Local\\Temp",
    "x" * 3000, "汉" * 3000, "word " * 2000, "🙂" * 600, "a\u0301" * 400, "<s>" * 600,
    "\ufeffBOM at start", "zero\u200bwidth\u200cjoiner\u200d", "e\u0301 vs \u00e9", "\u1100\u1161\u11a8 한국어",
    "Ａ\u0301 ﬁ ﬂ ㎏ ㍻ ½ ² ℃ ™ Ⅻ", "<mask> hello <unk> world </s>", "＜s＞＜/s＞＜pad＞",
]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)] + [k for k in value if isinstance(k, str)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def corpus(*, random_texts: int = 20000, seed: int = 7) -> list[tuple[str, str]]:
    import yaml

    from apps.search import calibration, embedding, model_build, unigram

    out: list[tuple[str, str]] = []
    data = REPO / "bench" / "data"
    for line in (data / "records.jsonl").read_text().splitlines():
        text = json.loads(line)["content"]
        out += [("records", text), ("records", f"passage: {text}")]
    for line in (data / "queries.jsonl").read_text().splitlines():
        text = json.loads(line)["text"]
        out += [("queries", text), ("queries", f"query: {text}")]
    for path in sorted(data.rglob("*.yaml")):
        for text in _strings(yaml.safe_load(path.read_text())):
            out += [("yaml", text), ("yaml", f"passage: {text}")]
    for text in calibration.EN + calibration.ZH:
        out += [("calibration", f"{kind}: {text}") for kind in ("query", "passage")]
    out += [("build-checks", t) for t in model_build.VERIFY_TEXTS]
    out += [("build-checks", t) for triple in embedding.CHECK_TRIPLES for t in triple]
    out += [("edge", t) for t in EDGE_CASES + unigram.SELF_CHECK_TEXTS]
    for pattern in ("docs/*.md", "*.md", "apps/**/*.py", "tests/**/*.py", "bench/*.py", "memoryweb/*.py"):
        for path in sorted(REPO.glob(pattern)):
            text = path.read_text(errors="replace")
            kind = "markdown" if path.suffix == ".md" else "code"
            out.append((f"{kind}-file", text))
            out += [(f"{kind}-paragraph", p) for p in text.split("\n\n") if p.strip()]
            out += [(f"{kind}-line", line) for line in text.splitlines() if line.strip()]
    rng = random.Random(seed)
    units = ["a", "ha", "la", "na", "ab", "abc", "-", "=", ".", "!", "*", "#", "_", "~", "0", "1", "9", "00",
             "哈", "啊", "嗯", "🙂", "😂", "ー", "ô", " ", "x ", "-=", "..."]
    for _ in range(max(1, random_texts // 4)):
        text = "".join(rng.choice(units) * rng.randint(1, 30) for _ in range(rng.randint(1, 4)))
        out.append(("repeats", text))
    out += [("random-unicode", t) for t in _random_unicode(rng, random_texts)]
    return out


def _random_unicode(rng: random.Random, n: int) -> list[str]:
    from apps.search import unigram

    assigned = [cp for cp in range(1, 0x110000) if not 0xD800 <= cp < 0xE000 and unicodedata.category(chr(cp)) != "Cn"]
    marks = [cp for cp in assigned if unicodedata.combining(chr(cp))]
    protected = unigram.protected_codepoints()
    common = [*range(0x20, 0x7F), *range(0x4E00, 0x4E00 + 500), *range(0x3040, 0x30FF), *range(0xFF01, 0xFF5F),
              *range(0xAC00, 0xAC00 + 200), *range(0x0400, 0x0450), *range(0x1F600, 0x1F650)]
    specials = ["<s>", "</s>", "<pad>", "<unk>", "<mask>", "＜s＞", " ", "  ", "\t", "\n", "\u00a0", "\u2581", "\x01"]
    pools = [assigned, marks, protected, common, common, common]
    texts = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 24)):
            if rng.random() < 0.1:
                parts.append(rng.choice(specials))
            else:
                parts.append(chr(rng.choice(rng.choice(pools))))
        texts.append("".join(parts))
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", default=str(REPO / "var" / "models"))
    parser.add_argument("--random", type=int, default=20000, help="seeded random strings (and a quarter as many repeats)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--embeddings", type=int, default=0,
                        help="also embed this many corpus texts through embedding.embed with both tokenizers")
    parser.add_argument("--write-sample", help="write a representative sample of the corpus (JSON) to this path")
    args = parser.parse_args()
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")
    os.environ["MEMORYWEB_EMBED_MODEL_DIR"] = args.model_dir
    os.environ.setdefault("MEMORYWEB_DATA_DIR", tempfile.mkdtemp(prefix="mw-parity-"))
    django.setup()
    from fastembed.common.preprocessor_utils import load_tokenizer

    from apps.search import model_build, unigram

    folder = model_build.model_dir(Path(args.model_dir))
    texts = corpus(random_texts=args.random, seed=args.seed)
    if args.write_sample:
        write_sample(Path(args.write_sample), texts, args.seed)
        return
    lean_path = folder / model_build.LEAN_TOKENIZER
    if not lean_path.exists():
        lean_path = Path(tempfile.mkdtemp(prefix="mw-lean-")) / model_build.LEAN_TOKENIZER
        unigram.convert(folder, lean_path)
    lean = unigram.load(lean_path)
    reference, _ = load_tokenizer(folder)
    started = time.perf_counter()
    counts: dict[str, int] = {}
    bad: list[tuple[str, str]] = []
    for kind, text in texts:
        counts[kind] = counts.get(kind, 0) + 1
        if unigram.compare(reference, lean, [text]):
            bad.append((kind, text))
    batches = [[t for _, t in texts[i:i + 64]] for i in range(0, len(texts), 64)]
    bad_batches = unigram.compare(reference, lean, batches, batched=True)
    for kind, n in sorted(counts.items()):
        print(f"{kind:>18}: {n:>6} texts")
    print(f"checked {len(texts)} texts one by one and in {len(batches)} padded batches of 64 "
          f"({time.perf_counter() - started:.1f} s): {len(bad)} mismatching texts, {len(bad_batches)} mismatching batches")
    for kind, text in bad[:20]:
        print(f"  MISMATCH [{kind}] {text[:120]!r}")
    differ = 0.0
    if args.embeddings:
        sample = random.Random(args.seed).sample([t for _, t in texts], min(args.embeddings, len(texts)))
        differ = compare_embeddings(sample, reference)
    sys.exit(1 if bad or bad_batches or differ > 1e-6 else 0)


def compare_embeddings(texts: list[str], reference: Any) -> float:
    """The same texts through `embedding.embed` (one run per text, raw and debiased,
    both kinds) and through fastembed in padded batches of 32 (as the centroids are
    computed), with the lean tokenizer and then the tokenizers one in the same session.
    Returns the largest absolute difference."""
    import numpy as np

    from apps.search import embedding, unigram

    loaded = embedding.get_model()
    inner = loaded.model.model  # type: ignore[attr-defined]
    lean = inner.tokenizer
    if not isinstance(lean, unigram.LeanTokenizer):
        raise SystemExit("the loaded model does not use the lean tokenizer")
    runs: dict[str, list[Any]] = {}
    for name, tok in (("lean", lean), ("tokenizers", reference)):
        inner.tokenizer = tok
        embedding.cache_clear()
        started = time.perf_counter()
        runs[name] = [embedding.embed(texts, kind=embedding.PASSAGE, raw=True),
                      embedding.embed(texts, kind=embedding.QUERY),
                      np.asarray(list(loaded.model.embed(texts, batch_size=32)))]  # type: ignore[attr-defined]
        print(f"embedded {len(texts)} texts x3 with the {name} tokenizer ({time.perf_counter() - started:.1f} s)")
    inner.tokenizer = lean
    embedding.cache_clear()
    worst = max(float(np.max(np.abs(a - b))) for a, b in zip(runs["lean"], runs["tokenizers"]))
    equal = all(np.array_equal(a, b) for a, b in zip(runs["lean"], runs["tokenizers"]))
    print(f"embeddings of {len(texts)} texts (raw passage, debiased query, fastembed batches of 32): "
          f"max |difference| {worst:.3g}, bitwise equal: {equal}")
    return worst


def write_sample(path: Path, texts: list[tuple[str, str]], seed: int) -> None:
    """Every edge case and build check, 200 random strings, 100 repeats and 40 texts of
    each other category; whole files cut to 3,000 characters, other texts to 1,500 (the
    edge cases keep their length: several truncate at 512 tokens)."""
    rng = random.Random(seed)
    by_kind: dict[str, list[str]] = {}
    for kind, text in texts:
        by_kind.setdefault(kind, []).append(text)
    sample: list[dict[str, str]] = []
    for kind, items in sorted(by_kind.items()):
        count = {"random-unicode": 200, "repeats": 100}.get(kind, 40)
        picked = items if kind in ("edge", "build-checks") else rng.sample(items, min(count, len(items)))
        limit = None if kind == "edge" else 3000 if kind.endswith("-file") else 1500
        sample += [{"kind": kind, "text": t[:limit]} for t in picked]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(sample, ensure_ascii=False, indent=0) + "\n")
    print(f"wrote {len(sample)} texts to {path}")


if __name__ == "__main__":
    main()
