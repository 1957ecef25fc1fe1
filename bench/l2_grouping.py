"""How well the rules organizer's topic grouping finds the topics of a scene block.

    .venv/bin/python bench/l2_grouping.py [--show 0.3]

Embeds the hand-written members of `bench/data/l2-topics.yaml` the way the L2 rules driver
gets them (`apps.search.matching.topic_vectors`; `--passage`: the passage vectors
embed_and_search returns, for comparison), groups each block with
the driver's own `topic_groups` at several similarities and prints, per similarity:
same-topic pairs put together (recall) and pairs put together that share a topic
(precision), the same for pairs across languages (one Chinese, one English member), the
number of groups against the number of topics, and blocks whose topics come out exactly.
`--show T` prints each block's groups and labels at similarity T.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
from pathlib import Path

import yaml

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))
DATA = BENCH / "data" / "l2-topics.yaml"
THRESHOLDS = (0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=float, default=None, help="print the groups at this similarity")
    parser.add_argument("--passage", action="store_true", help="passage vectors instead of the driver's topic vectors")
    args = parser.parse_args()
    from pipeline import setup_django

    setup_django(Path(tempfile.mkdtemp(prefix="l2-grouping-")))
    from apps.pipeline.rules.l2 import TOPIC_SIMILARITY, topic_groups, topic_label
    from apps.pipeline.rules.text import is_chinese
    from apps.search import embedding, matching

    blocks = yaml.safe_load(DATA.read_text(encoding="utf-8"))["blocks"]
    prepared = []
    for name, topics in blocks.items():
        texts = [t for items in topics.values() for t in items]
        gold = [topic for topic, items in topics.items() for _ in items]
        if args.passage:
            vectors = [list(map(float, v)) for v in embedding.embed(texts, kind=embedding.PASSAGE)]
        else:
            vectors = matching.topic_vectors(texts)
        prepared.append((name, texts, gold, vectors))
    print(f"{len(prepared)} blocks, {sum(len(p[1]) for p in prepared)} members, {sum(len(set(p[2])) for p in prepared)} topics; "
          f"the driver uses {TOPIC_SIMILARITY}")
    print(f"{'similarity':>10}  {'pair recall':>12}  {'pair precision':>14}  {'cross-language recall':>22}  "
          f"{'cross-language precision':>24}  {'groups/topics':>13}  exact blocks")
    for threshold in THRESHOLDS:
        together = same = both = 0
        x_together = x_same = x_both = 0
        groups_total = topics_total = exact = 0
        for _name, texts, gold, vectors in prepared:
            groups = topic_groups(vectors, threshold=threshold)
            label = {i: n for n, g in enumerate(groups) for i in g}
            for i, j in itertools.combinations(range(len(texts)), 2):
                cross = is_chinese(texts[i]) != is_chinese(texts[j])
                t, s = label[i] == label[j], gold[i] == gold[j]
                together += t
                same += s
                both += t and s
                if cross:
                    x_together += t
                    x_same += s
                    x_both += t and s
            groups_total += len(groups)
            topics_total += len(set(gold))
            exact += sorted(sorted(g) for g in groups) == sorted(
                sorted(i for i, g in enumerate(gold) if g == topic) for topic in set(gold))
        print(f"{threshold:>10.2f}  {_pct(both, same):>12}  {_pct(both, together):>14}  {_pct(x_both, x_same):>22}  "
              f"{_pct(x_both, x_together):>24}  {groups_total:>6}/{topics_total:<6}  {exact}/{len(prepared)}")
    if args.show is not None:
        for name, texts, gold, vectors in prepared:
            zh = sum(is_chinese(t) for t in texts) * 2 >= len(texts)
            print(f"\n{name} at {args.show}:")
            for group in topic_groups(vectors, threshold=args.show):
                print(f"  [{topic_label([texts[i] for i in group], zh=zh)}]")
                for i in group:
                    print(f"      ({gold[i]}) {texts[i]}")


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f} % ({a}/{b})" if b else "n/a"


if __name__ == "__main__":
    main()
