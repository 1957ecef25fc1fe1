"""How close is a question to the memory it is about, versus to an unrelated memory?

memory_search says "A memory about this was removed at the user's request." when a
record tombstoned at the user's request is the closest match of the query; when recall
found nothing live, the forgotten record must clear a similarity floor
(apps.memory.services.FORGET_MATCH_MIN_SIMILARITY). This prints the cosine similarity of
hand-written questions to the memory they ask about and to memories they do not, so the
floor can be checked against the embedding space in use.

    MEMORYWEB_EMBED_MODEL_DIR=var/models .venv/bin/python bench/forget_match.py
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("MEMORYWEB_DATA_DIR", tempfile.mkdtemp(prefix="memoryweb-bench-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")

import django

django.setup()

from apps.memory.services import FORGET_MATCH_MIN_SIMILARITY
from apps.search.matching import similarities

MEMORIES = [
    "The user's sister is called Marta and lives in Porto.",
    "The deploy key for the staging box is in ~/.ssh/staging_ed25519.",
    "Billing runs on PostgreSQL 16 with a read replica.",
    "用户的女朋友叫小林，在杭州工作。",
    "Dentist appointment on the 14th at 9:30 with Dr. Silva.",
    "User mentioned earning 85k a year at the new job.",
    "User sees a therapist named Jonas every other Tuesday.",
    "用户说银行卡密码是他生日的后四位。",
    "The user prefers tabs over spaces in Go code.",
    "CI runs on the self-hosted runner in the basement.",
]
# (question, index of the memory it is about)
QUESTIONS = [
    ("What's my sister's name?", 0),
    ("where do I keep the deploy key", 1),
    ("what database does the billing service use", 2),
    ("我女朋友叫什么", 3),
    ("when is my dentist appointment", 4),
    ("what's my salary", 5),
    ("which therapist do I see", 6),
    ("我的银行卡密码", 7),
    ("tabs or spaces for go?", 8),
    ("where do the CI jobs run", 9),
    ("what's the weather like in Tokyo", None),
    ("how do I bake sourdough", None),
]


def main() -> None:
    related, unrelated = [], []
    for question, about in QUESTIONS:
        sims = similarities(question, MEMORIES)
        for i, sim in enumerate(sims):
            (related if i == about else unrelated).append(sim)
    unrelated.sort()
    print(f"pairs: {len(related)} related, {len(unrelated)} unrelated")
    print(f"related    min {min(related):.3f}  median {sorted(related)[len(related) // 2]:.3f}  max {max(related):.3f}")
    print(f"unrelated  min {unrelated[0]:.3f}  median {unrelated[len(unrelated) // 2]:.3f}  "
          f"p95 {unrelated[int(len(unrelated) * 0.95)]:.3f}  max {unrelated[-1]:.3f}")
    floor = FORGET_MATCH_MIN_SIMILARITY
    print(f"floor {floor}: related below it {sum(s < floor for s in related)}/{len(related)}, "
          f"unrelated at or above it {sum(s >= floor for s in unrelated)}/{len(unrelated)}")


if __name__ == "__main__":
    main()
