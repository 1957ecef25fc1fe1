"""Score distribution behind the rules driver's forget-by-meaning rule.

    .venv/bin/python bench/forget_scores.py

For every forget request ("睡得太晚这件事就别记了", "forget what I said about my sibling") in
the hand-labelled extraction conversations (`bench/data/extraction/` and
`bench/data/extraction-heldout/`), the subject the driver parses is embedded the way
`embed_and_search` embeds it (passage side, debiased) and compared with every user sentence
said before the request. Printed per request: whether the sentence the conversation's
`forgotten` trap names came first, the first and second cosine, and what the driver's words
test and its dense rule (FORGET_DENSE_MIN, FORGET_DENSE_MARGIN) take. Then the totals the
thresholds are read from: the highest cosine of a sentence that was not the one meant, and
how many requests each rule takes rightly and wrongly. The candidates here are all earlier
user sentences (the store holds fewer: only those that became records).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))
SETS = [BENCH / "data" / "extraction", BENCH / "data" / "extraction-heldout"]


def _meant(sentence: str, traps: list[dict]) -> bool:
    return any(all(any(alt.lower() in sentence.lower() for alt in kw.split("|")) for kw in t["keywords"]) for t in traps)


def requests() -> list[dict]:
    from apps.pipeline.rules.corrections import forget_subject
    from apps.pipeline.rules.text import sentences

    out = []
    for folder in SETS:
        for path in sorted(folder.glob("*.yaml")):
            conv = yaml.safe_load(path.read_text(encoding="utf-8"))
            traps = [t for t in conv.get("traps") or [] if t.get("kind") == "forgotten"]
            said: list[str] = []
            for session in conv["sessions"]:
                for turn in session["messages"]:
                    role, content = (turn[0], turn[1]) if isinstance(turn, list) else (turn["role"], turn["content"])
                    if role != "user":
                        continue
                    for sentence in sentences(content):
                        subject = forget_subject(sentence)
                        if subject and said:
                            out.append({"conversation": conv["id"], "subject": subject, "earlier": list(said),
                                        "meant": [i for i, s in enumerate(said) if _meant(s, traps)]})
                        said.append(sentence)
    return out


def _mark(taken: list[int], req: dict) -> str:
    """What a rule took: "-" nothing, "ok" only meant sentences, "WRONG" another one."""
    if not taken:
        return "-"
    return "ok" if set(taken) <= set(req["meant"]) else "WRONG"


def main() -> None:
    from pipeline import setup_django

    setup_django(Path(tempfile.mkdtemp(prefix="forget-scores-")))
    from apps.pipeline.rules.corrections import forget_matches, forget_shares_word
    from apps.pipeline.rules.l1 import FORGET_DENSE_MARGIN, FORGET_DENSE_MIN, FORGET_SHARED_MIN, FORGET_SHARED_RANK
    from apps.search import embedding

    found = requests()
    other_max = 0.0
    dense_right = dense_wrong = words_right = words_wrong = first_meant = shared_right = shared_wrong = 0
    print(f"{'conversation':32} {'subject':28} meant first? cos1   cos2   words dense shared")
    for req in found:
        q = embedding.embed([req["subject"]], kind=embedding.PASSAGE)[0]
        sims = embedding.embed(req["earlier"], kind=embedding.PASSAGE) @ q
        order = [int(i) for i in np.argsort(-sims)]
        c1 = float(sims[order[0]])
        c2 = float(sims[order[1]]) if len(order) > 1 else 0.0
        others = [float(sims[i]) for i in range(len(sims)) if i not in req["meant"]]
        other_max = max([other_max, *others])
        worded = [i for i, s in enumerate(req["earlier"]) if forget_matches(s, req["subject"])]
        dense = [order[0]] if c1 >= FORGET_DENSE_MIN and c1 - c2 >= FORGET_DENSE_MARGIN else []
        sharing = [i for i, s in enumerate(req["earlier"]) if forget_shares_word(s, req["subject"])]
        shared = sharing if len(sharing) == 1 and ((sharing[0] in order[:FORGET_SHARED_RANK] and sims[sharing[0]] >= FORGET_SHARED_MIN) or sharing[0] == order[0]) else []
        if worded or dense:
            shared = []  # the rule is asked only when the other two take nothing
        shared_right += bool(shared) and shared[0] in req["meant"]
        shared_wrong += bool(shared) and shared[0] not in req["meant"]
        words_right += bool(worded) and set(worded) <= set(req["meant"])
        words_wrong += bool(set(worded) - set(req["meant"]))
        dense_right += bool(dense) and dense[0] in req["meant"]
        dense_wrong += bool(dense) and dense[0] not in req["meant"]
        first_meant += order[0] in req["meant"]
        print(f"{req['conversation'][:32]:32} {req['subject'][:28]:28} {'yes' if req['meant'] else 'no ':5} "
              f"{'yes' if order[0] in req['meant'] else 'no ':6} {c1:.3f}  {c2:.3f}  {_mark(worded, req):>5} {_mark(dense, req):>5} {_mark(shared, req):>6}")
    print()
    print(f"requests {len(found)}, with a meant sentence {sum(1 for r in found if r['meant'])}, meant sentence first {first_meant}")
    print(f"highest cosine of a sentence not meant: {other_max:.3f}")
    print(f"words test: {words_right} right, {words_wrong} wrong")
    print(f"dense rule (cos ≥ {FORGET_DENSE_MIN}, margin ≥ {FORGET_DENSE_MARGIN}): {dense_right} right, {dense_wrong} wrong")
    print(f"one shared word (the only sentence sharing one, dense rank 1, or rank ≤ {FORGET_SHARED_RANK} with cos ≥ {FORGET_SHARED_MIN}; "
          f"when the two rules above take nothing): {shared_right} right, {shared_wrong} wrong")


if __name__ == "__main__":
    main()
