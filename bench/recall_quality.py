"""Retrieval quality on the hand-written bilingual evaluation set in `bench/data/`.

    .venv/bin/python bench/recall_quality.py                 # the table
    .venv/bin/python bench/recall_quality.py --set heldout   # the same on the held-out set
    .venv/bin/python bench/recall_quality.py --calibrate     # fit the relevance calibration
    .venv/bin/python bench/recall_quality.py --calibrate --features margin,coverage   # another feature set
    .venv/bin/python bench/recall_quality.py --debias hard   # measure a variant
    .venv/bin/python bench/recall_quality.py --expansion-weight 0 --senses 2

The set (`bench/data/README.md`): ~350 memories of one user in code and chat modes, half
Chinese, and ~220 questions of six kinds — paraphrase, keyword (an identifier, path or
number), cross-language (split by direction: `zh→en` = a Chinese question about an
English record), stale (the fact was replaced; the replaced record is tombstoned),
project (the answer depends on the caller's project) and never (nothing stored answers
it). Every record is committed to the index the way the service stores it; replaced
records are then tombstoned.

Printed per kind and direction: recall@1 / recall@5 / MRR@10 for
* dense — cosine top-15 (`query:` embedding) with the caller's scope filter;
* sparse — BM25 top-15 with the same filter;
* hybrid — the fusion as recall runs it (language references, the translated sparse
  search, gates, RRF k = 60), before boosts and threshold;
* final — `recall_l1_records` as an agent calls it (topK 5, cwd of the query: scope,
  database check, boosts, dominance rule, relevance threshold);
and for the final pipeline the abstention: the share of never-stored questions answered
with `noRelevantMemory`, and the share of answerable questions wrongly abstained.

It runs on whatever code is in the tree it is started from (it only uses services that
existed before debiasing), so the same script measures an older checkout too.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recall import REPO, setup_django

DATA = Path(__file__).resolve().parent / "data"
K = 5
MRR_DEPTH = 10
CJK = re.compile(r"[\u3400-\u9fff]")
KINDS = ["paraphrase", "keyword", "cross zh→en", "cross en→zh", "stale", "project"]


def lang(text: str) -> str:
    cjk = len(CJK.findall(text))
    latin = len(re.findall(r"[A-Za-z]", text)) / 3.0
    return "zh" if cjk >= latin else "en"


SETS = {"dev": DATA, "heldout": DATA / "recall-heldout"}


def load(folder: Path = DATA) -> tuple[list[dict], list[dict]]:
    records = [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines() if line.strip()]
    queries = [json.loads(line) for line in (folder / "queries.jsonl").read_text().splitlines() if line.strip()]
    by_id = {r["id"]: r for r in records}
    for q in queries:
        q["lang"] = lang(q["text"])
        label = q["kind"]
        if label == "cross":
            target = lang(by_id[q["expect"][0]]["content"])
            label = f"cross {q['lang']}→{target}"
        q["label"] = label
    return records, queries


def store(records: list[dict]):
    """Create the profile and its records, index them, tombstone the replaced ones."""
    from django.utils import timezone

    from apps.accounts.models import Profile
    from apps.accounts.services import profile_create
    from apps.records.models import L1Record
    from apps.records.normalize import content_key
    from apps.search import index

    profile = profile_create(slug="quality")
    projects = sorted({r["project"] for r in records if r.get("project")})
    Profile.objects.filter(pk=profile.pk).update(known_projects=projects)
    profile.refresh_from_db()
    now = timezone.now()
    rows = [
        L1Record(profile=profile, record_id=f"l1_eval_{r['id']}", content=r["content"], type=r["type"],
                 priority=r.get("priority", 60), metadata={"scope": r.get("scope", "global"), "project": r.get("project", "")},
                 created_at=now, updated_at=now, content_key=content_key(r["content"]),
                 task_state="open" if r["type"] == "work_task" else None)
        for r in records
    ]
    L1Record.objects.bulk_create(rows, batch_size=1000)
    rows = list(L1Record.objects.filter(profile=profile).order_by("record_id"))
    started = time.perf_counter()
    for start in range(0, len(rows), 128):
        index.upsert_records(profile, rows[start : start + 128])
    gone = [f"l1_eval_{r['id']}" for r in records if r.get("deleted")]
    L1Record.objects.filter(profile=profile, record_id__in=gone).update(deleted=True)
    index.delete_points(profile, gone)
    return profile, time.perf_counter() - started


def filters_for(profile, q):
    from apps.search import index, services

    project = services.caller_project(profile=profile, session_key="", cwd=q.get("cwd", ""))
    return services.Filters(project_key=index.project_key(project))


def rank_of(ids: list[str], expect: list[str]) -> int | None:
    wanted = {f"l1_eval_{e}" for e in expect}
    return next((i + 1 for i, rid in enumerate(ids) if rid in wanted), None)


def run(records, queries) -> dict:
    from apps.hitstats.models import RecordHits
    from apps.records.models import L1Record
    from apps.search import embedding, index, services

    profile, index_seconds = store(records)
    # One query per call, as recall embeds it: the int8 model quantises activations per
    # batch, so a vector computed in a batch of 254 differs slightly from the one recall
    # computes (measured: enough to move a few answers across the threshold).
    qvecs = [embedding.embed([q["text"]], kind=embedding.QUERY)[0] for q in queries]
    live = dict(L1Record.objects.filter(profile=profile, deleted=False).values_list("record_id", "content"))
    if hasattr(services, "rank_candidates"):
        from apps.search import ranking

        live = {rid: ranking.text_language(text) for rid, text in live.items()}
    depth = 3 * K
    out = []
    for q, vec in zip(queries, qvecs):
        filters = filters_for(profile, q)
        spec = filters.spec()
        dense = index.search_dense(profile, vec, limit=depth, spec=spec)
        sparse_ = index.search_sparse(profile, q["text"], limit=depth, spec=spec)
        if hasattr(services, "rank_candidates"):  # the fusion as recall runs it, before boosts and threshold
            hybrid = services.rank_candidates(services.index_candidates(profile, q["text"], limit=depth, filters=filters), live)
        else:  # an older checkout
            hybrid = services._fuse(dense, sparse_)
        body = services.recall_records(profile=profile, query=q["text"], top_k=K, cwd=q.get("cwd", ""))
        RecordHits.objects.filter(profile=profile).delete()  # each question on the same store
        final_ids = [r["recordId"] for r in body["records"]]
        out.append({
            "id": q["id"], "label": q["label"], "never": q["kind"] == "never",
            "dense": rank_of([c.record_id for c in dense], q["expect"]),
            "sparse": rank_of([c.record_id for c in sparse_], q["expect"]),
            "hybrid": rank_of([r.record_id for r in hybrid], q["expect"]),
            "final": rank_of(final_ids, q["expect"]),
            "abstained": bool(body.get("noRelevantMemory")) or not final_ids,
            "topRelevance": body["records"][0].get("relevance") if body["records"] else None,
        })
    index.close_clients()
    return {"records": len(records), "queries": len(queries), "indexSeconds": round(index_seconds, 1), "results": out}


def summarise(rows: list[dict], mode: str) -> dict:
    n = len(rows)
    ranks = [r[mode] for r in rows]
    return {
        "n": n,
        "r1": sum(1 for x in ranks if x == 1) / n if n else 0.0,
        "r5": sum(1 for x in ranks if x is not None and x <= K) / n if n else 0.0,
        "mrr": sum(1.0 / x for x in ranks if x is not None and x <= MRR_DEPTH) / n if n else 0.0,
    }


def table(report: dict) -> str:
    rows = report["results"]
    answerable = [r for r in rows if not r["never"]]
    modes = ["dense", "sparse", "hybrid", "final"]
    lines = [f"{report['records']} records, {report['queries']} queries; indexing {report['indexSeconds']} s",
             f"{'':14}" + "".join(f"{m:>20}" for m in modes) + "   (recall@1 / recall@5 / MRR@10)"]
    groups = [("answerable", answerable)] + [(k, [r for r in answerable if r["label"] == k]) for k in KINDS]
    for label, sel in groups:
        if not sel:
            continue
        cells = ""
        for m in modes:
            s = summarise(sel, m)
            cells += f"{s['r1']:>8.3f}/{s['r5']:.3f}/{s['mrr']:.3f}"
        lines.append(f"{label:<14}{cells}   n={len(sel)}")
    never = [r for r in rows if r["never"]]
    abst = sum(1 for r in never if r["abstained"]) / len(never) if never else 0.0
    wrong = sum(1 for r in answerable if r["abstained"]) / len(answerable) if answerable else 0.0
    lines.append(f"abstention (final): never-stored answered noRelevantMemory {abst:.3f} (n={len(never)}); "
                 f"answerable wrongly abstained {wrong:.3f} (n={len(answerable)})")
    return "\n".join(lines)


# ------------------------------------------------------------ calibration
def features(records, queries) -> list[tuple[int, list[tuple[list[float], int]]]]:
    """Per query: the relevance features and labels of the records recall would return
    (topK 5, final order, no threshold), computed by the service itself."""
    from django.conf import settings

    from apps.search import services

    profile, _ = store(records)
    settings.MEMORYWEB_DEFAULTS["recall.minRelevance"] = 0.0
    out = []
    for i, q in enumerate(queries):
        outcome = services.recall_search(profile, q["text"], top_k=K, filters=filters_for(profile, q))
        wanted = {f"l1_eval_{e}" for e in q["expect"]}
        out.append((i, [(list(r.features), int(r.record_id in wanted)) for _, r in outcome.rows]))
    return out


def fit_logistic(xs, ys, *, l2: float = 1e-3, steps: int = 4000, lr: float = 0.5):
    import numpy as np

    X = np.hstack([np.ones((len(xs), 1)), np.asarray(xs, dtype=np.float64)])
    y = np.asarray(ys, dtype=np.float64)
    mu, sd = X[:, 1:].mean(0), X[:, 1:].std(0) + 1e-9
    Z = X.copy()
    Z[:, 1:] = (X[:, 1:] - mu) / sd
    w = np.zeros(X.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-Z @ w))
        grad = Z.T @ (p - y) / len(y) + l2 * np.r_[0, w[1:]]
        w -= lr * grad
    coef = w.copy()  # back to raw feature scale
    coef[1:] = w[1:] / sd
    coef[0] = w[0] - (w[1:] * mu / sd).sum()
    return coef


def log_loss(coef, items) -> float:
    import math

    total = 0.0
    for x, y in items:
        z = coef[0] + sum(c * v for c, v in zip(coef[1:], x))
        p = min(1 - 1e-9, max(1e-9, 1 / (1 + math.exp(-max(-50.0, min(50.0, z))))))
        total -= math.log(p if y else 1 - p)
    return total / max(1, len(items))


def cross_validate(train, folds: int = 10) -> tuple[float, float]:
    """Log-loss of the fit on held-out questions of the calibration half (folds of whole
    questions): mean and standard error over the folds."""
    losses = []
    for f in range(folds):
        fit = [c for j, (_, items) in enumerate(train) if j % folds != f for c in items]
        held = [c for j, (_, items) in enumerate(train) if j % folds == f for c in items]
        losses.append(log_loss(fit_logistic([x for x, _ in fit], [y for _, y in fit]), held))
    mean = sum(losses) / folds
    se = (sum((x - mean) ** 2 for x in losses) / (folds - 1)) ** 0.5 / folds ** 0.5
    return mean, se


def calibrate(records, queries) -> None:
    from apps.search import services

    feats = features(records, queries)
    train = [f for f in feats if f[0] % 2 == 0]
    xs = [x for _, items in train for x, _ in items]
    ys = [y for _, items in train for _, y in items]
    coef = fit_logistic(xs, ys)
    cv_mean, cv_se = cross_validate(train)
    print(f"fitted on the even-numbered queries ({len(ys)} returned records, {sum(ys)} of them answers); "
          f"features {services.RELEVANCE_FEATURES}:")
    print(f"RELEVANCE_COEF = ({', '.join(f'{c:.2f}' for c in coef)})")
    print(f"10-fold cross-validated log-loss on the calibration half: {cv_mean:.4f} ± {cv_se:.4f}")
    services.RELEVANCE_COEF = tuple(round(float(c), 2) for c in coef)

    def top_rel(items):
        if not items:
            return 0.0
        return max(services._relevance(tuple(x)) for x, _ in items)

    grid = [round(0.01 * i, 2) for i in range(1, 10)] + [round(0.02 * i, 2) for i in range(5, 40)]

    def kept_answer(items, t):
        """The answer is among the records that stay (relevance made monotone as recall does)."""
        floor, keep = 0.0, False
        for x, y in reversed(items):
            floor = max(floor, services._relevance(tuple(x)))
            keep = keep or (bool(y) and floor >= t)
        return keep

    def rates(sel, t):
        never = [top_rel(items) < t for i, items in sel if queries[i]["kind"] == "never"]
        ans = [top_rel(items) < t for i, items in sel if queries[i]["kind"] != "never"]
        lost = [any(y for _, y in items) and not kept_answer(items, t) for i, items in sel if queries[i]["kind"] != "never"]
        return sum(never) / len(never), sum(ans) / len(ans), sum(lost) / len(lost)

    # The threshold drops every record below it, not only whole answers: the rule counts the
    # answerable calibration questions whose answer (among the returned records) it drops.
    fine = [round(0.005 * i, 3) for i in range(1, 200)]
    chosen = max((t for t in fine if rates(train, t)[2] <= 0.03), default=0.0)
    only_abstain = max((t for t in fine if rates(train, t)[1] <= 0.03), default=0.0)
    print(f"highest threshold (steps of 0.005) dropping the answer of at most 3 % of the answerable calibration "
          f"questions: {chosen:.3f} (counting whole abstentions only it would be {only_abstain:.3f})")
    for split, sel in (("calibration (even)", train), ("held-out (odd)", [f for f in feats if f[0] % 2 == 1]), ("all", feats)):
        print(f"\n{split}: threshold → never-stored abstained / answerable abstained / answerable whose answer "
              "(in the top 5) the threshold drops")
        for t in sorted(set(grid[:9] + grid[9::2] + [chosen])):
            never, ans, lost = rates(sel, t)
            print(f"  {t:.3f}: {never:.3f} / {ans:.3f} / {lost:.3f}{'   <- chosen' if t == chosen else ''}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calibrate", action="store_true", help="fit the relevance calibration and print thresholds")
    parser.add_argument("--debias", choices=["weighted", "hard", "off"], help="dense transform variant")
    parser.add_argument("--debias-scale", type=float, help="share of the language centroid subtracted")
    parser.add_argument("--expansion-weight", type=float, help="weight of dictionary expansion terms (0 = none)")
    parser.add_argument("--senses", type=int, help="CC-CEDICT senses per headword used for expansion")
    parser.add_argument("--senses-en-zh", type=int, help="senses in which an English word finds its Chinese headwords")
    parser.add_argument("--gates", help="SPARSE_GATE,DENSE_GATE of the fusion (e.g. 0,1 = no gate)")
    parser.add_argument("--min-relevance", type=float, help="override recall.minRelevance")
    parser.add_argument("--features", help="relevance features to fit with --calibrate (comma-separated: margin, "
                        "coverage, both, 1/position)")
    parser.add_argument("--label", default="", help="name of this run in bench/out/")
    parser.add_argument("--set", choices=sorted(SETS), default="dev",
                        help="dev: the set the pipeline was measured and tuned on; heldout: a second set written "
                             "without reading the retrieval code (bench/data/recall-heldout/)")
    args = parser.parse_args()
    records, queries = load(SETS[args.set])
    setup_django(Path(tempfile.mkdtemp(prefix="mw-quality-")))
    from django.conf import settings

    from apps.search import bilingual, embedding, sparse

    if args.debias:
        embedding.DEBIAS_MODE = args.debias
    if args.debias_scale is not None:
        embedding.DEBIAS_SCALE = args.debias_scale
    if args.expansion_weight is not None:
        sparse.EXPANSION_WEIGHT = args.expansion_weight
        sparse.EXPAND = args.expansion_weight > 0
    if args.senses is not None:
        bilingual.MAX_SENSES = args.senses
    if args.senses_en_zh is not None:
        bilingual.MAX_SENSES_EN_ZH = args.senses_en_zh
    if args.gates:
        from apps.search import services

        services.SPARSE_GATE, services.DENSE_GATE = (float(x) for x in args.gates.split(","))
    if args.min_relevance is not None:
        settings.MEMORYWEB_DEFAULTS["recall.minRelevance"] = args.min_relevance
    if args.features:
        from apps.search import services

        services.RELEVANCE_FEATURES = tuple(args.features.split(","))
    if args.calibrate:
        calibrate(records, queries)
        return
    report = run(records, queries)
    print(table(report))
    out = REPO / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"recall_quality{'-' + args.label if args.label else ''}.json").write_text(json.dumps(report, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
