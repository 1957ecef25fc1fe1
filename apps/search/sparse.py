"""BM25 sparse vectors over a bilingual tokenizer.

Chinese runs are segmented with jieba (search mode, so `数据库连接池` also yields `数据库`,
`连接`, `连接池`); Latin words are lower-cased and stemmed with the Snowball English
stemmer; numbers and identifiers are kept; stop words and punctuation are dropped.
A token maps to a sparse index by a 32-bit murmur hash.

Document values are BM25 term-frequency saturations (k1, b, a fixed average length that
suits short memory records); query values are 1 per distinct token. The index applies
IDF (Qdrant `Modifier.IDF`), so the product is BM25.

Bilingual expansion (SPEC §4): records and queries also carry the CC-CEDICT translations
of their terms (`bilingual.expand`: Chinese words → English glosses, English words →
Chinese words) at `EXPANSION_WEIGHT` of an original term, so a question in one language
meets a record in the other on the sparse side too. Expansion tokens do not count in the
document length.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any

import mmh3

VERSION = 4  # tokens or weights changed: stored sparse vectors belong to another space
K1 = 1.2
B = 0.75
EXPANSION_WEIGHT = 0.3  # a translation counts this much of an original term (measured)
EXPAND = True
AVG_LEN = 24.0  # tokens in a typical memory record

_WORD = re.compile(r"[0-9a-z][0-9a-z_\-.]*[0-9a-z]|[0-9a-z]", re.IGNORECASE)

EN_STOP = frozenset(
    [
        "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did", "do", "does",
        "for", "from", "had", "has", "have", "he", "her", "his", "how", "i", "if", "in", "into", "is", "it",
        "its", "me", "my", "no", "not", "of", "on", "or", "our", "she", "so", "than", "that", "the", "their",
        "them", "then", "there", "these", "they", "this", "to", "was", "we", "were", "what", "when", "where",
        "which", "who", "why", "will", "with", "would", "you", "your",
    ]
)
ZH_STOP = frozenset(
    [
        "的", "了", "是", "在", "和", "与", "及", "或", "也", "都", "就", "而", "被", "把", "让", "给", "对", "从", "向", "这",
        "那", "个", "之", "于", "以", "为", "吗", "呢", "吧", "啊", "么", "着", "过", "等",
    ]
)

_init_lock = threading.Lock()
_ready = False
_stemmer: Any = None  # py_rust_stemmers.SnowballStemmer, loaded by _setup()


def setup() -> None:
    """Load jieba and the stemmer once per process (callers that use jieba directly)."""
    _setup()


def _setup() -> None:
    global _ready, _stemmer
    if _ready:
        return
    with _init_lock:
        if _ready:
            return
        import jieba
        from py_rust_stemmers import SnowballStemmer

        jieba.setLogLevel(60)
        jieba.initialize()
        _stemmer = SnowballStemmer("english")
        _ready = True


_CJK_RUN = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff]+)")
_PART_SPLIT = re.compile(r"[-_/]+")
# Latin letters with diacritics (Latin-1 Supplement, Extended-A and -B) are folded to their
# base letters before words are cut: "Alcântara" was cut into "alc" + "ntara", and a
# question that writes "Sao Paulo" or "Zurich" must meet a record that writes "São Paulo".
_ACCENTED = re.compile(r"[\u00c0-\u024f]")
_FOLD_EXTRA = {"ß": "ss", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "œ": "oe", "Œ": "OE", "ł": "l", "Ł": "L",
               "đ": "d", "Đ": "D", "þ": "th", "Þ": "Th", "ð": "d", "Ð": "D", "ı": "i"}


def _fold_char(match: re.Match[str]) -> str:
    ch = match.group()
    if ch in _FOLD_EXTRA:
        return _FOLD_EXTRA[ch]
    base = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
    return base if base.isascii() else ch


def fold_latin(text: str) -> str:
    """`text` with accented Latin letters replaced by their base letters (é -> e, ß -> ss)."""
    return _ACCENTED.sub(_fold_char, text) if _ACCENTED.search(text) else text


def tokenize(text: str) -> list[str]:
    """Index tokens of `text` (order kept, duplicates kept).

    Chinese runs go through jieba; everything else through a word pattern that keeps
    identifiers (`QX-5521`, `max_pool`, `1.29`) whole and also emits their parts."""
    _setup()
    import jieba

    from apps.search import bilingual  # imports this module: here, not at the top

    tokens: list[str] = []
    for i, run in enumerate(_CJK_RUN.split(text or "")):
        if not run:
            continue
        if i % 2 == 1:  # a CJK run
            for piece in jieba.cut_for_search(run):
                piece = piece.strip()
                if piece and piece not in ZH_STOP:
                    tokens.append(piece)
            if EXPAND:  # dictionary compounds across jieba's cut (结婚纪念日), see bilingual.compounds
                tokens.extend(word for _, _, word in bilingual.compounds(run))
            continue
        for word in _WORD.findall(fold_latin(run)):
            lowered = word.lower()
            if lowered in EN_STOP:
                continue
            tokens.append(_norm_word(lowered))
            parts = [p for p in _PART_SPLIT.split(lowered) if p]
            if len(parts) > 1:
                tokens.extend(_norm_word(p) for p in parts if p not in EN_STOP)
    return tokens


def english_tokens(text: str) -> list[str]:
    """Index tokens of an English phrase (a dictionary gloss): words, stop words dropped."""
    _setup()
    out = []
    for word in _WORD.findall(fold_latin(text)):
        lowered = word.lower()
        if lowered not in EN_STOP and lowered.isalpha() and len(lowered) > 1:
            out.append(_norm_word(lowered))
    return out


def _norm_word(word: str) -> str:
    if any(ch.isdigit() for ch in word) or not word.isalpha():
        return word
    return str(_stemmer.stem_word(word))


def token_index(token: str) -> int:
    return mmh3.hash(token, signed=False)


@dataclass
class SparseVec:
    indices: list[int]
    values: list[float]

    @property
    def empty(self) -> bool:
        return not self.indices


def _merge(weights: dict[int, float]) -> SparseVec:
    items = sorted(weights.items())
    return SparseVec([i for i, _ in items], [v for _, v in items])


def expansions(tokens: list[str]) -> list[str]:
    """Dictionary translations of index tokens (none when expansion is off)."""
    if not EXPAND or not tokens:
        return []
    from apps.search import bilingual

    return bilingual.expand(tokens)


def document_vector(text: str) -> SparseVec:
    tokens = tokenize(text)
    if not tokens:
        return SparseVec([], [])
    length = len(tokens)
    weights: dict[int, float] = {}

    def add(counts: Counter[str], scale: float) -> None:
        for token, tf in counts.items():
            value = scale * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / AVG_LEN))
            idx = token_index(token)
            weights[idx] = weights.get(idx, 0.0) + value  # hash collisions add up

    add(Counter(tokens), 1.0)
    add(Counter(expansions(tokens)), EXPANSION_WEIGHT)
    return _merge(weights)


def query_vector(text: str) -> SparseVec:
    tokens = list(dict.fromkeys(tokenize(text)))
    weights = {token_index(t): EXPANSION_WEIGHT for t in expansions(tokens)}
    weights.update({token_index(t): 1.0 for t in tokens})
    return _merge(weights)
