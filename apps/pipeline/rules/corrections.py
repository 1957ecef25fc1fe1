"""Corrections and forget requests in what the user says (SPEC §5 [2026-12]).

A correction ("I was wrong — the port is 5433, not 5432", "不是周二，是周四", "my bad, we
moved to Node 22") names a new value and sometimes the old one; the record it corrects
is the one holding the old value (or, when only the new value is said, a value of the same
kind next to the same words). A forget request ("forget what I said about my ex",
"这条别记了") names a subject, or points at what was just said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from apps.pipeline.rules.text import content_tokens, is_chinese, values

CORRECTION_RE = re.compile(
    r"\b(actually|i was wrong|i'm wrong|my bad|my mistake|correction|i misspoke|sorry,? i meant|i meant|scratch that|wait,? no|not anymore|no longer"
    r"|we (moved|switched|migrated|changed|upgraded|downgraded) to|(is|are|it's) now|changed to|instead of|rather than)\b"
    r"|\bnot\s+[^,.;]+?,?\s+but\b|,\s*not\s+\w"
    r"|改成|改为|改到|更正|纠正一下|记错了|说错了|搞错了|弄错了|其实是|现在是|现在改|换成了|已经不|不再|不对[，,]|不是[^，,。]{1,20}[，,]?\s*(而)?是|是[^，,。]{1,20}[，,]?\s*不是",
    re.IGNORECASE,
)
_LEAD_RE = re.compile(
    r"^(?:(?:oh|ah|hmm|wait|sorry|oops|ok|okay)[,，!！.\s]*)*(?:actually|correction|i was wrong|i'm wrong|my bad|my mistake|i misspoke|sorry,? i meant|i meant|scratch that|wait,? no)"
    r"[\s,，:：—–\-!！.]*"
    r"|^(?:更正(?:一下)?|纠正一下|我?记错了|我?说错了|我?搞错了|我?弄错了|不好意思)[，,：:。！!\s]*",
    re.IGNORECASE,
)
_PAIRS: list[re.Pattern[str]] = [
    re.compile(r"\bnot\s+(?P<old>[^,.;]+?)\s*,?\s+but\s+(?P<new>[^,.;!]+)", re.IGNORECASE),
    re.compile(r"(?P<new>[^,;]+?)\s*,\s*not\s+(?P<old>[^,.;!]+)", re.IGNORECASE),
    re.compile(r"(?P<new>[^,;]+?)\s+(?:instead of|rather than)\s+(?P<old>[^,.;!]+)", re.IGNORECASE),
    re.compile(r"\bfrom\s+(?P<old>[\w.:-]+(?: [\w.:-]+)?)\s+to\s+(?P<new>[\w.:-]+(?: [\w.:-]+)?)", re.IGNORECASE),
    re.compile(r"不是(?P<old>[^，,。；;]+?)[，,]?\s*(?:而)?是(?P<new>[^，,。；;！!]+)"),
    re.compile(r"是(?P<new>[^，,。；;不]+?)[，,]?\s*不是(?P<old>[^，,。；;！!]+)"),
    re.compile(r"(?P<new>[^，,。；;]+?)[，,]\s*(?:而)?不是(?P<old>[^，,。；;！!]+)"),
    re.compile(r"从(?P<old>[^，,。；;]+?)(?:改成|改为|改到|换成)(?P<new>[^，,。；;！!]+)"),
]
_NEW_ONLY: list[re.Pattern[str]] = [
    re.compile(r"(?:改成|改为|改到|换成了?|现在是|其实是)(?P<new>[^，,。；;！!]+)"),
    re.compile(r"\b(?:moved|switched|migrated|changed|upgraded|downgraded) to\s+(?P<new>[^,.;!]+)", re.IGNORECASE),
    re.compile(r"\b(?:is|are|it's) now\s+(?P<new>[^,.;!]+)", re.IGNORECASE),
]


@dataclass
class Correction:
    clause: str  # the corrected statement, markers and the old value removed
    old: str  # the superseded value when it is said, else ""
    new: str  # the new value, else ""


def parse_correction(sentence: str) -> Correction | None:
    if not CORRECTION_RE.search(sentence):
        return None
    # "Wait, I said Monday — the sync runs on Tuesday, not Monday": the dash part that states the change.
    segments = [seg.strip() for seg in re.split(r"\s[—–]\s|—|\s-\s", sentence.strip()) if seg.strip()]
    if len(segments) > 1:
        stating = [seg for seg in segments if any(p.search(seg) for p in _PAIRS) or any(p.search(seg) for p in _NEW_ONLY)]
        sentence = stating[0] if stating else max(segments, key=len)
    text = _LEAD_RE.sub("", sentence.strip()).strip()
    old = new = ""
    clause = text
    for pattern in _PAIRS:
        m = pattern.search(text)
        if m:
            old, new = m.group("old").strip(), m.group("new").strip()
            # The clause keeps what is true: "the port is 5433, not 5432" → "the port is 5433".
            clause = (text[: m.start()] + _kept(m, text)).strip()
            break
    else:
        for pattern in _NEW_ONLY:
            m = pattern.search(text)
            if m:
                new = m.group("new").strip()
                break
    old = re.split(r"\s[—–-]\s|[—–…]", old)[0].strip()
    if len(old.split()) > 4:
        old = ""  # not a value but a whole clause: find the record by the new value instead
    clause = re.sub(r"^[,，:：\s—–-]+|[,，\s]+$", "", clause)
    new = _align_new(old, new)
    return Correction(clause=clause or text, old=old, new=new)


def _kept(m: re.Match[str], text: str) -> str:
    """The matched span with the old value and its negation dropped."""
    span = m.group(0)
    pattern = m.re.pattern
    if pattern.startswith((r"\bnot\s+", "不是")) or "(?:而)?不是" in pattern:
        return m.group("new") + text[m.end():]
    if "instead of" in pattern or ",\\s*not" in pattern or "不是(?P<old>" in pattern:
        return m.group("new") + text[m.end():]
    if pattern.startswith(r"\bfrom"):
        return span.replace(m.group("old"), "").replace("from", "", 1).replace("  ", " ").strip() + text[m.end():]
    return span + text[m.end():]


def _align_new(old: str, new: str) -> str:
    """The new value with the shape of the old one: "the port is 5433" for old "5432" → "5433"."""
    if not old or not new:
        return new
    shape = re.escape(old)
    shape = re.sub(r"\d+", r"\\d+", shape)
    if shape != re.escape(old):
        m = re.search(rf"(?<![\w-]){shape}(?![\w-])", new)
        if m:
            return m.group(0)
    old_vals, new_vals = values(old), values(new)
    if len(old_vals) == 1 and old_vals[0][1].strip() == old.strip() and new_vals:
        kind = old_vals[0][0]
        same = [v for k, v in new_vals if k == kind]
        if same:
            return same[-1]
    if is_chinese(old) or is_chinese(new):
        return new
    words = [w for w in new.split() if w.lower().strip(".,") not in _FILLERS]
    width = max(1, len(old.split()))
    return " ".join(words[-width:]) if len(words) > width else new


_FILLERS = frozenset({"now", "too", "also", "already", "anymore", "instead", "then", "please"})


def corrected_content(record: str, correction: Correction) -> str | None:
    """`record` with the old value replaced by the new one, when that can be done literally."""
    if correction.old and correction.new:
        pattern = re.compile(re.escape(correction.old) if is_chinese(correction.old) else rf"(?<!\w){re.escape(correction.old)}(?!\w)", re.IGNORECASE)
        if pattern.search(record):
            return pattern.sub(correction.new.replace("\\", r"\\"), record, count=1)
    target_vals = values(correction.new or correction.clause)
    if target_vals:
        kind, value = target_vals[-1]
        same = [v for k, v in values(record) if k == kind and v != value]
        if len(same) == 1:
            return record.replace(same[0], value, 1)
    return None


def supersedes(record: str, correction: Correction) -> float:
    """How strongly `record` looks like the statement being corrected (0 = not at all)."""
    if correction.old:
        pattern = re.escape(correction.old) if is_chinese(correction.old) else rf"(?<!\w){re.escape(correction.old)}(?!\w)"
        if not re.search(pattern, record, re.IGNORECASE):
            return 0.0
        return 1.0 + _context_overlap(record, correction)
    new_vals = values(correction.new or correction.clause)
    overlap = _context_overlap(record, correction)
    if new_vals:
        kind, value = new_vals[-1]
        # A value with a unit ("74kg", "5 个") names its slot well enough; a bare number needs shared words.
        if any(k == kind and v != value for k, v in values(record)) and (overlap > 0 or ":" in kind):
            return 0.5 + overlap
        return 0.0
    return overlap if overlap >= 0.5 else 0.0


def _context_overlap(record: str, correction: Correction) -> float:
    """Share of the correction's words (values left out) that the record also uses."""
    value_words = {t for _, v in values(correction.clause) for t in content_tokens(v)}
    words = content_tokens(correction.clause) - value_words - content_tokens(correction.old)
    if not words:
        return 0.0
    return len(words & content_tokens(record)) / len(words)


# --------------------------------------------------------------------------- forget

_FORGET_PATTERNS: list[re.Pattern[str]] = [
    re.compile(r"(?<!don't )(?<!do not )(?<!never )\bforget\s+(?:about\s+|that\s+|what i (?:said|told you|mentioned)(?:\s+about)?\s+|everything (?:i said )?about\s+|the (?:part|thing|bit) about\s+)?(?P<subject>[^.!?]*)", re.IGNORECASE),
    re.compile(r"\b(?:don't|do not|please don't|no need to) (?:remember|keep|store|save|record|note down|memori[sz]e)\s+(?:that|this|it|what i said about|anything about|the bit about)?\s*(?P<subject>[^.!?]*)", re.IGNORECASE),
    re.compile(r"\b(?:delete|remove|erase|drop|wipe)\s+(?:the|that|this|any|all|your)?\s*(?:memor(?:y|ies)|notes?|records?)\s*(?:about|of|on|for)?\s*(?P<subject>[^.!?]*)", re.IGNORECASE),
    re.compile(r"\bstop remembering\s*(?P<subject>[^.!?]*)", re.IGNORECASE),
    re.compile(r"\b(?:scratch|drop|strike) (?:the (?:bit|part|thing)|what i said|everything i said) about\s+(?P<subject>[^.!?,]*)", re.IGNORECASE),
    re.compile(r"(?:把|关于)?(?P<subject>[^，,。！!？?]*?)(?:的事|的事情|这件事|这事|的内容|的记忆)?(?:就|也|都)?(?:别|不要|不用)(?:再)?记(?:住|下|录|着)?(?:了|啦)?"),
    re.compile(r"(?:把|关于)?(?P<subject>[^，,。！!？?]*?)(?:的事|的事情|这件事|这事|的内容|的记忆)?(?:都|也|就)?(?:忘掉|忘了吧|删掉|删除)(?:吧|它|这条记忆|这条|这个记忆)?"),
]
_FORGET_GUARD_RE = re.compile(r"\b(don't|do not|never|not) forget\b|别忘|不要忘|忘了(带|拿|关|锁|交|写|说|告诉)|我忘了", re.IGNORECASE)
_MEMORY_WORD_RE = re.compile(r"记|忘掉|忘了吧|memor|forget|remember|record|note|scratch|strike|drop (the|what)", re.IGNORECASE)
ANAPHORIC_SUBJECT_RE = re.compile(r"^(it|that|this|those|these|all that|all of that|what i (just )?said|the last (one|thing)|这条|这个|这些|那个|那条|刚才(那|说的)?(条|个|些)?|上一条|这|那|)$", re.IGNORECASE)


def forget_subject(sentence: str) -> str | None:
    """The subject of a request to forget ("" when it points at what was just said), or None
    when the sentence is not one. "Don't forget to X" and "我忘了带钥匙" are not requests."""
    text = sentence.strip()
    if _FORGET_GUARD_RE.search(text) or not _MEMORY_WORD_RE.search(text):
        return None
    for pattern in _FORGET_PATTERNS:
        m = pattern.search(text)
        if not m:
            continue
        if pattern.pattern.startswith("(?:把|关于)") and not re.search(r"(别|不要|不用)(再)?记|忘掉|忘了吧|删掉这条|删除这条|删掉关于|删除关于|的记忆", text):
            continue
        if pattern.pattern.startswith(r"\b(?:delete|remove|erase") and not re.search(r"memor|notes? about|records? about", text, re.IGNORECASE):
            continue
        subject = m.group("subject").strip(" ,，:：。.!！")
        subject = re.sub(r"^(about|that|what i said about|me|my|the|请|帮我|麻烦|你|我的|我)\s*", "", subject, flags=re.IGNORECASE).strip()
        subject = re.sub(r"\b(please|pls|thanks|thank you)\b", "", subject, flags=re.IGNORECASE).strip(" ,，")
        subject = re.sub(r"^(把|关于)", "", subject).strip()
        subject = re.sub(r"(这个|这条|那个|那条|这件事|这事|的事情?|的内容|这些)$", "", subject).strip()
        subject = re.split(r"[,，;；—–]", subject)[0].strip()  # "forget that, we haven't agreed" → "that"
        if ANAPHORIC_SUBJECT_RE.match(subject):
            # "I told you about the budget — forget that": the subject is said before the request.
            before = text[: m.start()]
            about = re.search(r"\babout (?:the |my |our )?(?P<what>[\w\- ]{2,40}?)(?:\s+(?:yesterday|earlier|before|last \w+))?\s*(?:[—–,，-]|$)", before, re.IGNORECASE)
            return about.group("what").strip() if about else ""
        return subject
    return None


def forget_matches(record: str, subject: str) -> bool:
    """Whether `record` is about `subject`: it uses (almost) every content word of it."""
    words = content_tokens(subject) - {"said", "told", "mentioned", "thing", "stuff", "事情", "的事", "这件", "件事"}
    if not words:
        return False
    shared = len(words & content_tokens(record))
    return shared == len(words) or (len(words) >= 3 and shared / len(words) >= 0.6)
