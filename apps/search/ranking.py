"""Language-aware ranking of recall candidates (SPEC §3.14, §4): the dense side measured
against each language's own background, the sparse side asked in both languages, and the
query words the relevance calibration checks a record for. Pure functions over candidate
lists and texts: no database, no index, no model (services feeds them).

Why (measured in docs/retrieval.md, "Language-aware fusion"): after the centroid
debiasing, Chinese records still sit closer to *every* query than English ones (the
10th-best cosine of a query among Chinese records is ~0.05 above that among English
records, whatever the query's language). A Chinese question about an English record then
finds Chinese records ahead of it on the dense side (81 % of its dense top 5), although
among the English records alone the answer is first in 34 of 45 questions. And the sparse
side meets the other language only through dictionary expansions at a lower weight, so
same-language records sharing incidental words (用户 / "user") outvote the answer.

* Dense: a record's score is its cosine minus its language's reference — the
  `LANG_REF_RANK`-th best cosine among the pool's records of that language (a language
  with fewer records there counts the missing ones at `REF_FLOOR`, and the reference is
  never below it: in a small store a record must not stand out from nothing). The dense
  ranking sorts by that margin.
* Sparse: the query and its dictionary pseudo-translation (`bilingual.translate`) are
  both searched; a record's sparse rank is the better of its two ranks (ties: the
  original query's list first), so each language's best keyword match gets a seat.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from apps.search import bilingual, sparse
from apps.search.embedding import cjk_share

# The reference of a language is its LANG_REF_RANK-th best cosine in the dense pool of
# DENSE_POOL_FACTOR × limit candidates (10 and 4 × 15: chosen on the calibration half of
# the quality benchmark; 5, 20 and pools of 2× / 6.7× gave the same or less).
LANG_REF_RANK = 10
DENSE_POOL_FACTOR = 4
# The lower quartile of the 10th-best same-language cosine over the calibration questions.
REF_FLOOR = 0.19

# English words that ask rather than say (the sparse stop list already has what, how, …).
EN_QUESTION_WORDS = frozenset(["should", "may", "might", "must", "shall", "much", "many", "any", "some", "ever"])
_CJK_RUN = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)")


class ScoredLike(Protocol):
    @property
    def record_id(self) -> str: ...

    @property
    def score(self) -> float: ...


@dataclass(frozen=True)
class Scored:
    """A candidate of one list: record id and that list's score."""
    record_id: str
    score: float


def text_language(text: str) -> str:
    """"zh" when at least half of the text is Chinese (CJK share), else "en"."""
    return "zh" if cjk_share(text) >= 0.5 else "en"


# A record in the other language than the query's meets the sparse side only through the
# dictionary's translations, and often not at all ("前端要兼容哪些浏览器版本" shares no word with
# "pixel-studio must support Safari 16 and newer"): a same-language record the two sides both
# list in the middle then outranks the record the dense side puts first. So for the dense side's
# first STAND_IN_DEPTH records in the other language that neither BM25 list holds, the dense rank
# stands in for the missing vote, counted STAND_IN_OFFSET ranks lower (a real match counts more).
# bench/recall_quality.py: final recall@5 0.917 -> 0.931, both halves of the set; docs/retrieval.md.
STAND_IN_DEPTH = 3
STAND_IN_OFFSET = 3


def stand_in_ranks(dense: Sequence[Scored], sparse_ids: set[str], langs: Mapping[str, str], language: str) -> dict[str, int]:
    """Record id -> the rank that stands in for its sparse vote (see STAND_IN_DEPTH)."""
    return {c.record_id: rank + STAND_IN_OFFSET for rank, c in enumerate(dense[:STAND_IN_DEPTH], start=1)
            if c.record_id not in sparse_ids and langs.get(c.record_id, language) != language}


_LATIN_WORD = re.compile(r"(?<![\w-])[A-Za-z]{2,}(?![\w-])")
_CJK_CHAR = re.compile(r"[\u3400-\u9fff]")


def worded(query: str) -> bool:
    """Whether the query says words of a language (two Latin words, or two Chinese characters),
    not only identifiers ("15672", "PSP-77120"): an identifier has no language, the same
    characters stand in a record of either, so no vote stands in for it."""
    return len(_LATIN_WORD.findall(query)) >= 2 or len(_CJK_CHAR.findall(query)) >= 2


def other_language(lang: str) -> str:
    return "en" if lang == "zh" else "zh"


def language_references(pool: Sequence[Scored], langs: Mapping[str, str], *, rank: int = LANG_REF_RANK,
                        floor: float = REF_FLOOR) -> dict[str, float]:
    """Per language: the `rank`-th best cosine of the pool's records in that language
    (records in `pool` order, best first), missing ones counted at `floor`, at least `floor`."""
    by_lang: dict[str, list[float]] = {"zh": [], "en": []}
    for cand in pool:
        lang = langs.get(cand.record_id)
        if lang is not None:
            by_lang.setdefault(lang, []).append(cand.score)
    refs = {}
    for lang, scores in by_lang.items():
        ordered = sorted(scores, reverse=True)
        refs[lang] = max(floor, ordered[rank - 1] if len(ordered) >= rank else floor)
    return refs


def language_margins(pool: Sequence[Scored], langs: Mapping[str, str], *, rank: int = LANG_REF_RANK,
                     floor: float = REF_FLOOR) -> dict[str, float]:
    """record id -> cosine minus its language's reference (records without a language,
    i.e. not live any more, are left out)."""
    refs = language_references(pool, langs, rank=rank, floor=floor)
    return {c.record_id: c.score - refs[langs[c.record_id]] for c in pool if c.record_id in langs}


def by_margin(pool: Sequence[Scored], margins: Mapping[str, float]) -> list[Scored]:
    """The dense ranking in the language-corrected scale (ties keep the pool's order)."""
    return sorted((Scored(c.record_id, margins[c.record_id]) for c in pool if c.record_id in margins),
                  key=lambda c: -c.score)


def merge_by_rank(first: Sequence[Scored], second: Sequence[Scored]) -> list[Scored]:
    """One ranking from two lists of the same side: a record ranks by its better rank in
    either list, ties go to `first`'s record; each record once (its score from `first`
    when it is in both)."""
    pos_a = {c.record_id: i for i, c in enumerate(first)}
    pos_b = {c.record_id: i for i, c in enumerate(second)}
    best: dict[str, Scored] = {}
    for cand in list(first) + list(second):
        best.setdefault(cand.record_id, cand)
    missing = len(first) + len(second)

    def key(rid: str) -> tuple[int, int]:
        a, b = pos_a.get(rid, missing), pos_b.get(rid, missing)
        return min(a, b), 0 if a <= b else 1

    return [best[rid] for rid in sorted(best, key=key)]


# ------------------------------------------------------- candidate languages
# The language of a record, remembered per process: the language references need the
# language of every record of the dense pool, and reading 60 contents per recall cost
# ~3 ms. An entry is refreshed whenever recall reads the record's row (every fused
# candidate), so an edit that changes a record's language is picked up the next time it
# is a candidate; until then only the reference it contributes to is slightly off. A
# record deleted since is still dropped by the database check of the fused candidates.
LANGUAGE_CACHE_SIZE = 100_000
_languages: OrderedDict[tuple[int, str], str] = OrderedDict()
_languages_lock = threading.Lock()


def known_languages(profile_id: int, record_ids: Iterable[str]) -> tuple[dict[str, str], list[str]]:
    """The remembered languages of `record_ids` and the ids not remembered."""
    known: dict[str, str] = {}
    missing: list[str] = []
    with _languages_lock:
        for rid in record_ids:
            lang = _languages.get((profile_id, rid))
            if lang is None:
                missing.append(rid)
            else:
                known[rid] = lang
    return known, missing


def remember_languages(profile_id: int, contents: Mapping[str, str]) -> dict[str, str]:
    """Detect and remember the language of each record (id -> content); returns them."""
    langs = {rid: text_language(text) for rid, text in contents.items()}
    with _languages_lock:
        for rid, lang in langs.items():
            _languages[(profile_id, rid)] = lang
            _languages.move_to_end((profile_id, rid))
        while len(_languages) > LANGUAGE_CACHE_SIZE:
            _languages.popitem(last=False)
    return langs


def forget_languages() -> None:
    with _languages_lock:
        _languages.clear()


# ------------------------------------------------------------- query words
def query_words(query: str) -> list[frozenset[str]]:
    """The words a record should contain to answer `query`, each as the set of index
    tokens that count as it: the word's own tokens and their dictionary translations.
    Chinese runs are cut into words (jieba, precise mode); a dictionary compound across
    that cut (结婚 + 纪念日 → 结婚纪念日, `bilingual.compounds`) counts for each of its
    words, so "wedding anniversary" covers both. Stop words and question words (什么,
    哪个, 怎么, 吗, should, many, …: they ask, they do not name the topic) and single Latin
    letters are dropped."""
    sparse.setup()
    import jieba

    words: dict[str, set[str]] = {}

    def add(word: str, extra: Iterable[str] = ()) -> None:
        tokens = sparse.tokenize(word) or [word]
        words.setdefault(word, set()).update([word, *tokens, *sparse.expansions(tokens), *extra])

    for i, run in enumerate(_CJK_RUN.split(query or "")):
        if not run:
            continue
        if i % 2 == 1:
            found = bilingual.compounds(run) if sparse.EXPAND else []
            for w, start, end in jieba.tokenize(run):
                w = w.strip()
                if w and w not in sparse.ZH_STOP and not bilingual.is_question_word(w):
                    over = [c for a, b, c in found if a < end and start < b]
                    add(w, [t for c in over for t in (c, *sparse.expansions([c]))])
        else:
            for t in sparse.tokenize(run):
                if t not in EN_QUESTION_WORDS and not (len(t) == 1 and t.isalpha()):
                    add(t)
    return [frozenset(forms) for forms in words.values()]


def record_terms(content: str) -> frozenset[str]:
    tokens = sparse.tokenize(content)
    return frozenset([*tokens, *sparse.expansions(tokens)])


def coverage(words: Iterable[frozenset[str]], terms: frozenset[str]) -> float:
    """Share of the query's words that the record's terms (with translations) contain."""
    listed = list(words)
    if not listed:
        return 0.0
    return sum(1 for forms in listed if forms & terms) / len(listed)
