"""Score distributions behind the rules driver's dedup and correction thresholds.

    .venv/bin/python bench/dedup_scores.py [--pairs]

Embeds the hand-written pairs of `bench/data/dedup-pairs.yaml` the way `embed_and_search`
compares a candidate with stored records (both as passages, cosine) and prints, per class,
the score distribution in the debiased space the driver sees (docs/retrieval.md) and in
the model's raw space (the scale before debiasing), plus the lexical features the rules
combine with the score. Corrections are parsed with the driver's own parser and searched
with its query (corrected clause plus the old value when it is said).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))
DATA = BENCH / "data" / "dedup-pairs.yaml"


def scores(pairs: list[tuple[str, str]], *, raw: bool) -> np.ndarray:
    from apps.search import embedding

    if not pairs:
        return np.zeros(0)
    a = embedding.embed([p[0] for p in pairs], kind=embedding.PASSAGE, raw=raw)
    b = embedding.embed([p[1] for p in pairs], kind=embedding.PASSAGE, raw=raw)
    if raw:  # the model's vectors are normalised; make sure before taking dot products
        a = a / np.linalg.norm(a, axis=1, keepdims=True)
        b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return np.sum(a * b, axis=1)


def summary(name: str, values: np.ndarray) -> str:
    if not len(values):
        return f"  {name:<34} n=0"
    q = np.percentile(values, [10, 50, 90])
    return (f"  {name:<34} n={len(values):>3}  min {values.min():.3f}  p10 {q[0]:.3f}  "
            f"median {q[1]:.3f}  p90 {q[2]:.3f}  max {values.max():.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", action="store_true", help="print every pair with its scores")
    args = parser.parse_args()
    from pipeline import setup_django

    setup_django(Path(tempfile.mkdtemp(prefix="dedup-scores-")))
    from apps.pipeline.rules.corrections import parse_correction
    from apps.pipeline.rules.text import containment, lexical_similarity

    data = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    classes: dict[str, list[tuple[str, str]]] = {
        k: [tuple(p) for p in data[k]] for k in ("restatement", "paraphrase", "distinct", "near_distinct", "contained_other", "update", "close")
    }
    said_old, new_only = [], []
    for record, sentence in data["correction"]:
        corr = parse_correction(sentence)
        if corr is None:
            print(f"  (not parsed as a correction: {sentence!r})")
            continue
        query = (corr.clause + " " + corr.old).strip()
        (said_old if corr.old else new_only).append((record, query))
    unrelated = [(u, q) for _, q in said_old + new_only for u in data["unrelated"]]
    classes["correction, old value said"] = said_old
    classes["correction, new value only"] = new_only
    classes["correction vs unrelated record"] = unrelated

    out: dict[str, dict[str, np.ndarray]] = {}
    for name, pairs in classes.items():
        out[name] = {"debiased": scores(pairs, raw=False), "raw": scores(pairs, raw=True)}
    for space in ("debiased", "raw"):
        print(f"cosine, {space} space:")
        for name in classes:
            print(summary(name, out[name][space]))
    # The shortened restatements the restatement rule can take (all their words in the record).
    full = [i for i, (old, new) in enumerate(classes["restatement"]) if containment(new, old) >= 1.0]
    print(f"restatements with every content word in the live record: {len(full)}/{len(classes['restatement'])}")
    print(summary("  their debiased scores", out["restatement"]["debiased"][full]))
    dist_full = [i for i, (old, new) in enumerate(classes["distinct"]) if containment(new, old) >= 1.0]
    print(f"distinct statements with every content word in the live record: {len(dist_full)}/{len(classes['distinct'])}")
    lex = [i for i, (old, new) in enumerate(classes["distinct"]) if lexical_similarity(new, old) >= 0.4]
    print(f"distinct statements with word overlap >= 0.4: {len(lex)}/{len(classes['distinct'])}")
    print(summary("  their debiased scores", out["distinct"]["debiased"][lex]))
    other = [i for i, (old, new) in enumerate(classes["contained_other"]) if containment(new, old) >= 1.0]
    print(f"other statements with every content word in the live record: {len(other)}/{len(classes['contained_other'])}")
    print(summary("  their debiased scores", out["contained_other"]["debiased"][other]))
    deb = {name: out[name]["debiased"] for name in classes}
    new_only_unrelated = deb["correction vs unrelated record"][len(said_old) * len(data["unrelated"]):]
    print(f"highest unrelated score of a new-value-only correction: {new_only_unrelated.max():.3f}")
    print("pairs at or above a debiased threshold:")
    for t in (0.35, 0.38, 0.4, 0.45, 0.5, 0.55, 0.6, 0.63, 0.65, 0.7, 0.8, 0.85):
        row = ", ".join(f"{name.split(',')[0] if name.startswith('correction,') else name} {int((v >= t).sum())}/{len(v)}"
                        for name, v in deb.items() if not name.startswith("correction"))
        print(f"  {t:.2f}: {row}; superseded (new value only) {int((deb['correction, new value only'] >= t).sum())}/"
              f"{len(deb['correction, new value only'])}, unrelated vs those {int((new_only_unrelated >= t).sum())}/{len(new_only_unrelated)}")
    # How the two scales relate on these pairs: a least-squares line raw -> debiased.
    allraw = np.concatenate([out[n]["raw"] for n in classes])
    alldeb = np.concatenate([out[n]["debiased"] for n in classes])
    slope, icept = np.polyfit(allraw, alldeb, 1)
    print(f"least-squares line over all pairs: debiased = {slope:.3f} * raw {icept:+.3f}")
    for t in (0.78, 0.85, 0.86, 0.93):
        print(f"  raw {t:.2f} -> {slope * t + icept:.3f}")
    if args.pairs:
        for name, pairs in classes.items():
            if name == "correction vs unrelated record":
                continue
            print(f"\n{name}:")
            for (a, b), d, r in zip(pairs, out[name]["debiased"], out[name]["raw"]):
                print(f"  {d:.3f} (raw {r:.3f})  {a}  |  {b}")
        top = np.argsort(-out["correction vs unrelated record"]["debiased"])[:8]
        print("\nhighest correction vs unrelated:")
        for i in top:
            a, b = unrelated[i]
            print(f"  {out['correction vs unrelated record']['debiased'][i]:.3f}  {a}  |  {b}")


if __name__ == "__main__":
    main()
