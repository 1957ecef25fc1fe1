"""Rules driver of l1_extract: L0 → L1 through the same tools the LLM driver calls.

Per batch: read_l0_increment → quality gate → sentence extraction → project scope
(l1_project_get, literal path evidence) → dedup against existing records
(embed_and_search; a 30-day text fallback when the index cannot answer) → scene
attribution (list_l1_scenes) → l1_commit with the batch's nextCursor. Batches repeat
while the shard has more and the run has time.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

from django.utils import timezone

from apps.pipeline.rules.corrections import (
    CHANGE_SAID_RE,
    TAKEN_BACK_RE,
    Correction,
    bare_value,
    corrected_content,
    forget_kinds,
    forget_matches,
    forget_shares_word,
    names_the_slot,
    repeats_old_value,
    said_after_the_change,
    said_now,
    says_kind,
    slot_cues,
    subject_words,
    supersedes,
    without_history,
)
from apps.pipeline.rules.extract import ALL_REPOS_RE, Candidate, candidate_for, extract_from_message, mentions
from apps.pipeline.rules.script import simplified
from apps.pipeline.rules.text import (
    ZH_STOP_CHARS,
    absolute_paths,
    containment,
    content_tokens,
    dropped_weight,
    is_chinese,
    lexical_similarity,
    normalize,
    number_spellings,
    other_subject,
    path_within,
    resolve_relative_dates,
    same_state,
    state_search_terms,
    states,
    tokens,
    tool_key,
    tool_spellings,
    value_key,
    values,
)
from apps.pipeline.rules.units import BatchAnalysis, Said, analyse
from apps.tools.errors import NotFound, ToolError

# Dedup thresholds: the dense score must be high AND the wording must overlap, so a
# model whose scores run high for unrelated text cannot merge unrelated memories.
# Scores are cosines in the debiased space (docs/retrieval.md), measured with
# bench/dedup_scores.py on hand-written pairs (docs/pipeline.md, Dedup): unrelated records
# 0.10 median, 0.45 at most; restatements 0.62–0.91; one-value updates 0.65–0.93; task
# completions 0.64–0.86. The dedup thresholds are the highest step of 0.05 under every pair
# their rule must take, except the skip threshold.
# Skip without a value check: above every shorter text that says something else with the
# same words (at most 0.78: "I used to live in Berlin, now Munich" / "I live in Berlin").
SKIP_SCORE, SKIP_LEXICAL = 0.85, 0.8
# A restatement: every content word of the new text is already in the live record (a
# shortened or reworded repeat) — skipped at a lower dense score than a near-identical one.
# Partial containment never skips: one new word in a short sentence is often the whole
# difference ("…for the billing service" / "…for the inventory service"), measured in
# docs/pipeline.md. Restatements score 0.62 and more; the dense score cannot refuse every
# shorter text that says something else (0.48–0.78), it refuses those under 0.6.
RESTATE_SCORE, RESTATE_CONTAINMENT = 0.6, 1.0
# An extension: every content word of the live record is in the new text, which says more
# (a changed word is the refinement rule's case, which also checks the type and wording).
# The same pairs read the other way round: 0.62 and more.
EXTEND_SCORE, EXTEND_CONTAINMENT = 0.6, 1.0
# A dense candidate of a correction without the old value said: just above every unrelated
# record against such a correction (at most 0.37); 18 of 20 superseded records score more
# (0.25–0.85, median 0.66; the two below share almost no word with the correction).
CORRECTION_MIN_SCORE = 0.38
STANDALONE_KEEPS_RECORD_WORDS = 12  # a record saying this many words the change does not is not replaced by the change
# Or the record shares the correction's words: up to this many of its words are looked up
# (whole words first, then longest first; a Chinese clause of twenty characters gives as many
# bigrams), and a record so found must have one of them next to its value of the kind the
# correction states (corrections.names_the_slot).
CORRECTION_WORD_TERMS = 16
FORGET_SEARCH_TOP_K = 10
# A forget request whose words no record uses ("睡得太晚这件事就别记了" / "我一般凌晨一点才睡")
# takes the dense search's first record only when it stands clear of everything else: cosine
# (debiased, passage side) ≥ FORGET_DENSE_MIN and ≥ FORGET_DENSE_MARGIN above the second.
# Measured with bench/forget_scores.py on the 22 forget requests of both extraction sets, each
# against the user's earlier sentences: a sentence not meant came first 5 times (up to 0.363,
# short replies such as "Huge."), never 0.15 clear of the second (at most 0.114); the rule
# takes 8 of the 17 requests whose meant sentence came first and none wrongly. The margin is
# the guard: better to keep a record than to tombstone the wrong one. With the sixth held-out
# batch (27 requests): no wrong pick, 11 right; a sentence not meant scored up to 0.395.
FORGET_DENSE_MIN = 0.30
FORGET_DENSE_MARGIN = 0.15
# Neither rule taking it, the one record that uses a naming word of the subject is taken when it
# is also the first dense candidate, or among the first 3 at cosine ≥ 0.25: on the 40 requests of
# both sets (eighth held-out batch included) 6 right, 1 wrong (bench/forget_scores.py; with the
# first-3 test alone 4 right, 1 wrong — the wrong one shares "开始" with a sentence not meant);
# unchanged at 6 / 1 over the 52 requests with the ninth and tenth batches.
FORGET_SHARED_RANK, FORGET_SHARED_MIN = 3, 0.25
TEXT_SCAN_LIMIT = 2000
# A refinement or one changed value (0.65 and more), and a completed task against its open
# task (0.64 and more); the word tests tell a different statement on the same topic apart.
UPDATE_SCORE, UPDATE_LEXICAL = 0.6, 0.4
UPDATE_MAX_DROPPED = 1.0  # at most one English word (or one Chinese word) of the old record may go
# A paraphrase (new words, the same fact) is merged into the live record it restates: measured
# with bench/dedup_scores.py (debiased): paraphrases 0.38-0.86 (median 0.69), another fact of
# the same shape ("I never drink alcohol" / "… coffee") 0.36-0.83 (median 0.63), distinct
# statements on one topic 0.16-0.89 (median 0.41). No score separates them, so a wrong merge
# must lose nothing: the record keeps both wordings. At 0.7: 10 of 20 paraphrases, 4 of 16
# same-shape facts, 2 of 20 distinct statements. Said as a repeat, 0.5: 17 of 20 paraphrases.
PARAPHRASE_MERGE_SCORE = 0.7
RESTATED_MERGE_SCORE = 0.5
# Said as a repeat and sharing a word with the record ("我再强调一次啊，回答先给结论！" / "你回答问题能不能
# 先给结论再讲原因…": 0.496; "老规矩，回答还是结论放最前面" 0.473; "再提醒一下 terminology 的事…术语都保留英文"
# 0.480): merged from this score on — never skipped below RESTATED_MERGE_SCORE, so a wrong pick
# loses nothing.
RESTATED_WORDED_MERGE_SCORE = 0.4
MERGE_MAX_CHARS = 300
MERGE_RULES = ("paraphrase", "sameState")  # the record says both wordings
# Durable personal states (text.STATES) are persona facts; said in passing ("I'm teetotal, so
# skip the wine pairings") the statement may be typed episodic, and still restates the state.
STATE_TYPES = ("persona", "episodic")
CLOSE_LEXICAL = 0.2  # "finished X" shares fewer words with "need to do X"
BATCH_TIME_RESERVE = 20.0  # seconds a batch needs; no new batch starts with less left
# Messages planned and committed together (several read_l0_increment pages of l0.batchSize):
# per-commit costs (the transaction, the cursor, the index writes' flush, the scene listing)
# and the dedup search calls are shared by more messages. A batch that would need more than
# l1_commit's 200 items is planned again with half of its pages.
GROUP_MESSAGES = 100
MAX_COMMIT_RECORDS = 200
EMBED_CHUNK = 50
FALLBACK_DAYS = 30

TOPICS = {
    "work_method": ("工作约定", "conventions"),
    "work_task": ("待办", "tasks"),
    "work_fact": ("决策与事实", "decisions and facts"),
    "work_artifact": ("产物", "artifacts"),
    "persona": ("偏好与个人信息", "profile and preferences"),
    "instruction": ("回复要求", "instructions"),
    "episodic": ("近期经历", "recent events"),
}


@dataclass
class Planned:
    candidate: Candidate
    source_ids: list[str]
    timestamps: list[str]
    action: str = "store"  # store | update | skip
    replaces: list[str] | None = None
    task_state: str | None = None
    scene: dict[str, str] | None = None
    metadata: dict[str, Any] | None = None
    vector: list[float] | None = None  # queryVector of this exact content, reused by l1_commit
    content_override: str | None = None  # an update that keeps the old wording (a task closed)
    project_hint: str = ""  # the session's project when the server will fill it (scene label only)
    fixed: bool = False  # a correction's replacement: already decided, not deduplicated again
    rule: str = ""  # which dedup rule decided (counted as dedup.<rule>)
    target: str = ""  # the record (or "batch:<n>", an earlier unit of this batch) it skipped against or replaced


@dataclass
class InBatch:
    """An earlier unit of the same batch, compared like a live record: a statement and its
    restatement or refinement in one batch are one record, as they would be a batch apart."""

    record_id: str
    content: str
    type: str
    task_state: str | None
    timestamps: list[str]
    priority: int = 50
    deleted: bool = False


def message_ref(message: dict) -> str:
    if message.get("messageRef"):
        return str(message["messageRef"])
    if message.get("id"):
        return str(message["id"])
    if message.get("sourceLine") is not None:
        return f"{message.get('sessionKey')}#{message.get('sourceLine')}"
    return f"{message.get('sessionKey')}#{message.get('timestamp')}"


def iso_from_ms(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return datetime.fromtimestamp(value / 1000, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return None


def list_shards(profile, cursor: dict | None = None) -> list[str]:
    """Shards with bytes beyond the cursor (all shards for an empty or legacy cursor).

    Fully consumed shards are left out of l0Files; their offsets stay in the cursor,
    because read_l0_increment carries every offset of the cursor it was given."""
    from apps.conversations.services import l0_shard_files

    offsets = (cursor or {}).get("files")
    shards = sorted(l0_shard_files(profile))
    if not isinstance(offsets, dict):
        return [p.name for p in shards]
    pending = []
    for path in shards:
        try:
            if path.stat().st_size > int(offsets.get(path.name, 0)):
                pending.append(path.name)
        except (OSError, TypeError, ValueError):
            pending.append(path.name)
    return pending


def run(ctx) -> None:
    from apps.conversations.cursors import cursor_get

    profile = ctx.profile
    mode = profile.mode
    cursor_value = cursor_get(profile=profile, kind="l1")
    shards = list_shards(profile, cursor_value)
    if not shards:
        ctx.counts["note"] = "no L0 rows beyond the cursor"
        return
    cursor = json.dumps(cursor_value) if cursor_value else ""
    projects: dict[str, dict] = {}
    batch = 0
    pending: list[dict] = []  # increments read but not committed (a group cut short for the commit's size)
    while True:
        batch += 1
        ctx.progress("read", f"batch {batch}: reading L0", force=True)
        group = pending or [_read(ctx, shards, cursor)]
        pending = []
        while group[-1]["truncated"] and sum(len(i["messages"]) for i in group) < GROUP_MESSAGES and ctx.remaining() > BATCH_TIME_RESERVE:
            # Several increments are planned and committed as one batch: one dedup search, one
            # scene listing and one commit (with its index writes) for up to GROUP_MESSAGES.
            group.append(_read(ctx, shards, group[-1]["nextCursor"]))
        messages = [m for inc in group for m in inc["messages"]]
        next_cursor = group[-1]["nextCursor"]
        if not messages and next_cursor == cursor:
            break
        saved = dict(ctx.counts)
        planned, tombstones = _plan_batch(ctx, messages, mode, projects, group[0]["background"])
        records = tombstones + _records_for_commit(planned, mode)
        if len(records) > MAX_COMMIT_RECORDS and len(group) > 1:
            # Too much for one l1_commit: plan the first half of the group again, the rest next.
            ctx.counts.clear()
            ctx.counts.update(saved)
            half = len(group) // 2
            pending = group[half:]
            group = group[:half]
            messages = [m for inc in group for m in inc["messages"]]
            next_cursor = group[-1]["nextCursor"]
            planned, tombstones = _plan_batch(ctx, messages, mode, projects, group[0]["background"])
            records = tombstones + _records_for_commit(planned, mode)
        ctx.add("messagesRead", len(messages))
        ctx.progress("commit", f"batch {batch}: committing {len(records)} items", force=True)
        result = ctx.tool("l1_commit", {"records": records, "cursor": next_cursor, "source": "subagent"})
        _count_commit(ctx, planned, result)
        ctx.add("forgetTombstones", len(tombstones))
        cursor = next_cursor
        ctx.add("batches")
        more = bool(pending) or group[-1]["truncated"]
        if not more or ctx.remaining() < BATCH_TIME_RESERVE:
            ctx.counts["backlogRemains"] = more
            break


def _read(ctx, shards: list[str], cursor: str) -> dict[str, Any]:
    increment = ctx.tool("read_l0_increment", {"l0Files": ",".join(shards), "cursor": cursor})
    return {
        "messages": list(increment.get("messages") or []),
        "background": list(increment.get("background") or []),
        "nextCursor": json.dumps(increment.get("nextCursor") or {}, ensure_ascii=False),
        "truncated": bool(increment.get("truncated")),
    }


def _plan_batch(ctx, messages: list[dict], mode: str, projects: dict[str, dict], background: list[dict] | None = None) -> tuple[list[Planned], list[dict]]:
    """The batch's records to store/update/skip, and its forget tombstones."""
    analysis = analyse(ctx, messages, background or [], mode)
    ctx.add("candidates", len(analysis.candidates))
    planned = _merge_within_batch(analysis.candidates)
    _apply_in_batch_corrections(ctx, analysis, planned)
    forgotten_here = _forget_in_batch(ctx, analysis, planned)
    planned = [p for p in planned if p not in forgotten_here]
    for item in planned:
        item.metadata = _scope(ctx, item, mode, projects)
    claimed: set[str] = set()
    forget_ids = _forget_stored(ctx, analysis, claimed)
    planned.extend(_stored_corrections(ctx, analysis, mode, projects, claimed, forget_ids))
    for item in planned:
        item.candidate.content = without_history(item.candidate.content)
    _dedup(ctx, [p for p in planned if not p.fixed], claimed | set(forget_ids))
    _attribute_scenes(ctx, planned, mode)
    tombstones = [{"id": rid, "deleted": True, "reason": "user-forget"} for rid in forget_ids]
    return planned, tombstones


def _merge_within_batch(candidates: list[Candidate]) -> list[Planned]:
    by_key: dict[tuple[str, str], Planned] = {}
    for cand in candidates:
        key = (normalize(cand.content), str(cand.message.get("sessionKey")))
        session = str(cand.message.get("sessionKey"))
        refs = [message_ref(m) for m in cand.extra_messages if str(m.get("sessionKey")) == session] + [message_ref(cand.message)]
        stamps = [s for s in (iso_from_ms(m.get("timestamp")) for m in [*cand.extra_messages, cand.message]) if s]
        if key in by_key:
            item = by_key[key]
        else:
            item = by_key[key] = Planned(candidate=cand, source_ids=[], timestamps=[], task_state=cand.task_state)
        for ref in refs:
            if ref not in item.source_ids:
                item.source_ids.append(ref)
        for stamp in stamps:
            if stamp not in item.timestamps:
                item.timestamps.append(stamp)
    return list(by_key.values())


# --------------------------------------------------------------------------- corrections and forget requests


def _best_in_batch(analysis: BatchAnalysis, planned: list[Planned], said, correction: Correction) -> tuple[Planned | None, float]:
    """The unit said earlier in the batch that the correction changes (None when none), and how strongly."""
    best, best_score = None, 0.0
    for item in planned:
        if not analysis.said_before(item.candidate, said) or (said.reason_before and item.candidate.message is said.message):
            continue
        score = supersedes(item.candidate.content, correction)
        if score > 0 and correction.weak and not names_the_slot(item.candidate.content, correction):
            continue  # a value said to hold now, with nothing to say which statement it changes
        if score > best_score:
            best, best_score = item, score
    return best, best_score


def _apply_in_batch_corrections(ctx, analysis: BatchAnalysis, planned: list[Planned]) -> None:
    """A correction of something said earlier in this batch rewrites that unit before anything
    is stored: the superseded value never becomes a record."""
    gone: list[Planned] = []
    for said in analysis.corrections:
        correction = _the_change(said.correction)
        if said.reason_before:
            # "…学生投诉太多，48 小时太长了。普通报修改成 24 小时": the complaint is the reason, not the
            # setting; it keeps what else it says, not the value given up.
            gone.extend(item for item in planned if item.candidate.message is said.message and analysis.said_before(item.candidate, said)
                        and not _without_value_given_up(item, correction))
        correction, (best, best_score) = _first_reading(said.correction, partial(_best_in_batch, analysis, planned, said))
        if best is not None and correction.new and not correction.old and best.candidate.message is not said.message \
                and _stored_naming_the_slot(ctx, analysis, correction) > best_score:
            # "所以预算放宽到三万了" is not a change of "那边春节一晚都要三千多", said earlier in the batch, when a
            # stored record has the budget next to its value ("打算住三亚亚龙湾那边 预算两万以内"): that one is changed.
            best = None
        elif best is None:
            best = _setting_just_said(analysis, planned, said)
        if best is None:
            continue
        # In one batch the unit is rewritten in place; against a stored record what holds now is its own record.
        new_content = _with_what_holds_now(best.candidate.content, correction) if correction.ended \
            else corrected_content(best.candidate.content, correction) or (
            None if correction.weak or _holds_already(best.candidate.content, correction) or _says_much_else(best.candidate.content, correction)
            else _standalone(correction))
        if not new_content:
            continue
        best.candidate.content = new_content
        _cite(best, said.message)
        said.correction = None  # applied
        ctx.add("correctionsInBatch")
    planned[:] = [p for p in planned if p not in gone]


def _the_change(correction: Correction) -> Correction:
    """The correction a record is matched with and rewritten by: a value said "now" is changed by its own
    sentence, not by the sentences said with it."""
    return replace(correction, clause=correction.own) if correction.own else correction


def _without_value_given_up(item: Planned, correction: Correction) -> bool:
    """The unit without the clauses that name the correction's old value; False when nothing
    else of it is left to store."""
    content = item.candidate.content
    if not correction.old or correction.old.casefold() not in content.casefold():
        return True
    left = _without_given_up(content, correction)
    if left:
        item.candidate.content = left
    return bool(left)


def _stored_naming_the_slot(ctx, analysis: BatchAnalysis, correction: Correction) -> float:
    """How surely the correction supersedes the live record of an earlier batch that has its words next
    to a value of its kind (0 when none has)."""
    full = _full_records(ctx.profile, _records_sharing_words(ctx.profile, correction, analysis.records_by_words))
    return max([supersedes(r.content, correction) for r in full.values() if not r.deleted and names_the_slot(r.content, correction)],
               default=0.0)


def _setting_just_said(analysis: BatchAnalysis, planned: list[Planned], said) -> Planned | None:
    """The unit a change without shared words means: the latest one of the session said before it
    with a value of the change's kind, when the change says only its new value ("set the pool to
    40" … "Actually, make it 30.") or says that unit's value again beside the new one ("30, 40 was
    too many")."""
    session = str(said.message.get("sessionKey") or "")
    kinds = {k for k, _ in values(said.correction.new or said.correction.clause)}
    before = [item for item in planned if analysis.said_before(item.candidate, said) and str(item.candidate.message.get("sessionKey") or "") == session]
    for item in sorted(before, key=lambda i: (analysis.order.get(id(i.candidate.message), -1), i.candidate.position), reverse=True):
        if any(k in kinds for k, _ in values(item.candidate.content)):
            content = item.candidate.content
            if (bare_value(said.correction) or repeats_old_value(content, said.correction)) and corrected_content(content, said.correction):
                return item
            return None
    return None


ENDED_KEEP_MIN_WORDS = 4  # what else a record must still say to be kept beside what holds now
ENDED_CLAUSE_MAX_WORDS = 6  # a clause kept when the one beside it names what was given up
ENDED_CLAUSE_MAX_ZH = 20


def _without_given_up(record: str, correction: Correction) -> str:
    """A record naming something given up, without the clauses that name it ("" when too little
    else remains): a project's introduction keeps its other facts when one part of its stack is
    replaced ("rails 7.1, postgres, hotwire, sidekiq for jobs" loses only the sidekiq item;
    "服务器是阿里云的 ECS，目前用宝塔面板部署的" only the 宝塔 clause)."""
    old = correction.old.casefold()
    kept: list[str] = []
    # Cut at every sentence end, lower-case starts included ("…one ear down. we're calling her Biscuit"),
    # and between the items of a list joined into one unit ("背景先列一下： …; 技术栈：NestJS …; 收银对账是店里的阿芳负责").
    for sentence in [p for p in re.split(r"(?<=[.!?])\s+|(?<=[。！？])|(?<=;)\s+", record) if p.strip()]:
        if old not in sentence.casefold():
            kept.append(sentence)
            continue
        clauses = [i for i in re.split(r"(?<=[,，、;；])", sentence) if i.strip()]
        others = [i for i in clauses if old not in i.casefold()]
        # Only short clauses stand without the one cut out (list items, "服务器是阿里云的 ECS"); a
        # longer one ("and I had surgery on that wrist in february") is part of what was said about it
        # — unless what is cut is a short clause added after it ("现在每天早晚各吸一次信必可 Symbicort
        # 160/4.5, 在华山医院呼吸科看的": where it was prescribed, not what it is).
        short = all(_short_clause(i) for i in others) or (
            old not in clauses[0].casefold() and all(_short_clause(i) for i in clauses if old in i.casefold()))
        rest = "".join(others).strip().rstrip(",，、;；.。") if short else ""
        if len(content_tokens(rest)) >= 2:
            kept.append(rest + ("。" if is_chinese(rest) else "."))
    rest = re.sub(r";(?=\S)", "; ", (" " if not is_chinese(record) else "").join(kept).strip())
    return rest if len(content_tokens(rest)) >= ENDED_KEEP_MIN_WORDS else ""


def _short_clause(clause: str) -> bool:
    if not is_chinese(clause):
        return len(clause.split()) <= ENDED_CLAUSE_MAX_WORDS
    # A Latin word in Chinese writing counts as two characters ("serving 现在是 TorchServe 跑在两张 A10 上" is 14), not as its letters.
    return len(_LATIN_RUN_RE.sub("xx", re.sub(r"\s+", "", clause))) <= ENDED_CLAUSE_MAX_ZH


_LATIN_RUN_RE = re.compile(r"[A-Za-z0-9_.+#-]+")


def _with_what_holds_now(record: str, correction: Correction) -> str:
    left = _without_given_up(record, correction)
    return f"{left}{'' if is_chinese(left) else ' '}{correction.clause}" if left else correction.clause


def _holds_already(record: str, correction: Correction) -> bool:
    """The record already says every value the correction states ("she's turning 8" / "no wait,
    … she turns 8"): nothing of it to rewrite, and its clause does not replace the record."""
    stated = values(correction.new or correction.clause)
    held = {value_key(v) for _, v in values(record)}
    return bool(stated) and all(value_key(v) in held for _, v in stated)


def _chosen_among(record: str, correction: Correction, whole: Correction) -> str:
    """What the correcting sentence says without the clause of the one it gives up, when the record names both the old and
    the new name (it weighed them) and that stands alone; "" otherwise."""
    if not (correction.old and correction.new) or values(correction.new) or not mentions(record, correction.old) \
            or not mentions(record, correction.new):
        return ""
    chosen = said_now(replace(whole, old=correction.old, new=correction.new))
    return chosen if chosen != whole.clause and _standalone(replace(correction, clause=chosen)) else ""


def _says_much_else(record: str, correction: Correction) -> bool:
    """Whether a record says so much the change does not that the change's clause cannot stand for it."""
    return len(content_tokens(record) - content_tokens(correction.clause)) >= STANDALONE_KEEPS_RECORD_WORDS


def _standalone(correction: Correction) -> str | None:
    """The correction's own clause, when it says enough to stand alone as a record."""
    clause = correction.clause.strip()
    return clause if len(content_tokens(clause)) >= 3 and len(clause) >= 8 else None


def _cite(item: Planned, message: dict) -> None:
    ref = message_ref(message)
    if str(message.get("sessionKey")) == str(item.candidate.message.get("sessionKey")) and ref not in item.source_ids:
        item.source_ids.append(ref)
        stamp = iso_from_ms(message.get("timestamp"))
        if stamp and stamp not in item.timestamps:
            item.timestamps.append(stamp)


def _readings(whole: Correction) -> list[Correction]:
    """The corrections a stored record is matched with, in turn: the change by its own clause, then — for a change
    said in unpunctuated Chinese, whose own clause may leave out the words that name its slot ("跟你说下 刻刀改成笔刀了"
    / "…老师推荐的那种30度刀头的 … 刻细线稳多了") — as said whole."""
    change = _the_change(whole)
    return [change, whole] if change is not whole and not whole.weak else [change]


def _first_reading(whole: Correction, find: Callable[[Correction], tuple[Any, Any]]) -> tuple[Correction, tuple[Any, Any]]:
    """The first of the change's readings (_readings) for which `find` finds what it changes, and what `find` returned;
    the first reading and the last answer when none does."""
    readings = _readings(whole)
    for attempt in readings:
        found = find(attempt)
        if found[0] is not None:
            return attempt, found
    return readings[0], found


def _best_stored(correction: Correction, full: dict, scores: dict[str, float], claimed: set[str],
                 corrected_here: dict[str, Planned], forget_ids: list[str]) -> tuple[Any, set[str]]:
    """The live record the correction changes (None when none), and the records that name its slot."""
    best, best_key = None, (0.0, 0.0, 0.0, 0.0)
    worded_ids: set[str] = set()
    for record in full.values():
        if record.deleted or record.record_id in forget_ids or (record.record_id in claimed and record.record_id not in corrected_here):
            continue
        current = corrected_here[record.record_id].candidate.content if record.record_id in corrected_here else record.content
        strength = supersedes(current, correction)
        dense = scores.get(record.record_id, 0.0)
        # Without the old value said, the record must be a dense neighbour — or share the
        # correction's own words next to a value of the same kind, however it was found (a
        # long record scores low against a short change: "…，后端是用 Go 1.21 写的" / "Go 版本升到 1.22 了").
        worded = names_the_slot(current, correction)
        # "the tuesday sessions were the autumn term, … they meet on thursdays": the record's value said
        # again names it as surely as a close neighbour does.
        repeats = repeats_old_value(current, correction)
        named = worded or repeats
        if strength <= 0 or other_subject(current, correction.clause) or (not correction.old and dense < CORRECTION_MIN_SCORE and not named):
            continue
        if not correction.old and not named and record.type == "work_artifact":
            # "voted to bring the same-day cut-off forward to 13:30, … change the config, the booking page wording and the
            # confirmation email": a value said without the one it replaces changes no file the assistant made ("formats
            # as `14 Feb, 09:30`" for the confirmation email) unless the file names its slot.
            continue
        if worded:
            worded_ids.add(record.record_id)
        # A value said to hold now changes the statement that names its slot before a closer neighbour that does not;
        # a record whose value the change says again ("老周周六要去带一个乐队排练 以后改成周日下午 4 点上课" against
        # "每周六上午 10 点一节课") before one that only shares a word with it ("练习时间别给我排到 9 点以后").
        key = (float(named and correction.weak), float(repeats), strength, dense)
        if key > best_key:
            best, best_key = record, key
    return best, worded_ids


def _stored_corrections(ctx, analysis: BatchAnalysis, mode: str, projects: dict[str, dict], claimed: set[str], forget_ids: list[str]) -> list[Planned]:
    """Corrections of live records of earlier batches: the corrected record replaces the
    superseded one (`replaces` + tombstone; the version chain shows both)."""
    pending = [s for s in analysis.corrections if s.correction is not None]
    if not pending:
        return []
    queries = [" ".join(t for t in (s.correction.context, s.correction.own or s.correction.clause, s.correction.old) if t) for s in pending]
    found = _search(ctx, queries, top_k=5)
    out: list[Planned] = []
    corrected_here: dict[str, Planned] = {}  # live record id → its replacement planned in this batch
    stated_here: list[Planned] = []  # unmatched corrections of this batch, stored as plain statements
    for said, candidates in zip(pending, found):
        whole = said.correction  # what was said, stored as it is when nothing is changed by it
        correction = _the_change(whole)
        if _restate_in_batch(ctx, stated_here, said):
            continue
        ids = {c["record_id"] for c in candidates if c.get("record_id")}
        if correction.old:
            ids |= _records_containing_any(ctx.profile, number_spellings(correction.old))  # "three thousand" is "3,000" too
        by_words = _records_sharing_words(ctx.profile, correction, analysis.records_by_words) if not correction.old else set()
        ids |= by_words | _records_containing_any(ctx.profile, slot_cues(correction))
        full = _full_records(ctx.profile, ids)
        scores = {str(c.get("record_id")): float(c.get("score") or 0) for c in candidates}
        correction, (best, worded_ids) = _first_reading(whole, partial(_best_stored, full=full, scores=scores, claimed=claimed, corrected_here=corrected_here, forget_ids=forget_ids))
        if best is None and said.besides:
            continue  # its sentence was said as usual
        if best is None:
            # Nothing to correct: what is true now is a plain statement ("actually" is often just a word),
            # and a fact even when no pattern claims it (a correction states how things are).
            stated = _stated(ctx, said, said_now(whole), analysis, mode, projects)
            out.extend(stated)
            stated_here.extend(stated)
            ctx.add("correctionsUnmatched")
            continue
        earlier = corrected_here.get(best.record_id)
        current = earlier.candidate.content if earlier is not None else best.content
        left = _without_given_up(current, correction) if correction.ended else ""
        if left:
            # "we dropped sidekiq. … moved everything over to GoodJob": the introduction keeps its
            # other facts, and what holds now is a record of its own (a later forget of one matter
            # does not take the other with it).
            out.extend(_stated(ctx, said, correction.clause, analysis, mode, projects))
        # "医生给了两个方案 金属自锁托槽 2万2 隐适美 3万8 我想了下先定自锁吧" / "最后没做自锁 选了隐适美 …": a record that names both
        # weighs them; the choice replaces it whole, without the clause that names the one not taken.
        chosen = _chosen_among(current, correction, whole)
        rewritten = None if correction.ended or chosen else corrected_content(current, correction)
        if not correction.ended and not chosen and rewritten is None and not _holds_already(current, correction) and _says_much_else(current, correction):
            # "the flock is six hens now. …" against "im a paramedic, live just outside Bristol, … got four
            # hens …, theyre called Pearl, Mabel, …": the change cannot be written into a record that
            # says this much else, and replacing it by the change would lose the rest. What holds now
            # is a record of its own.
            out.extend(_stated(ctx, said, said_now(whole), analysis, mode, projects))
            ctx.add("correctionsBeside")
            continue
        new_content = (left or correction.clause) if correction.ended else chosen or (
            rewritten or (None if _holds_already(current, correction) else _standalone(correction)))
        if not new_content or normalize(new_content) == normalize(current):
            continue
        if earlier is not None:
            # A second correction of the same record in one batch ("提醒时间改成 10:00" and "频道从
            # #eng 换成 #standup"): it applies to the replacement the first one planned.
            earlier.candidate.content = new_content
            _cite(earlier, said.message)
        else:
            corrected_here[best.record_id] = _replacement_of(ctx, best, new_content, said.message, mode, projects, claimed)
            out.append(corrected_here[best.record_id])
        ctx.add("correctionsOfStored")
        if rewritten and (after := said_after_the_change(correction)):
            # "… 把 logrus 全换成 zap 了 … 你以后写新代码也用 zap 别再引 logrus 进来": the change is written into the record it
            # corrects; what the sentence goes on to say is kept as said (only what a pattern claims).
            out.extend(_stated(ctx, said, after, analysis, mode, projects, claimed_only=True))
        # Only a change that names nothing but the new tool ("决定换成 Dramatiq") is of the tool wherever it is
        # used; "we moved the marketing site from Vercel to Render" is of that site, not of the docs preview.
        given_up = _naming_the_tool_given_up(ctx.profile, current, new_content, full) if not correction.old else set()
        elsewhere = (worded_ids | given_up) - {best.record_id}
        for record, content in _same_value_elsewhere(current, new_content, correction, full, elsewhere, claimed, corrected_here):
            # "we roast on fridays and subs go out on Mondays" and "build the orders itself every Monday
            # at 6am" / "the subscription run moves to Wednesdays": the value changed wherever the slot says it.
            corrected_here[record.record_id] = _replacement_of(ctx, record, content, said.message, mode, projects, claimed)
            out.append(corrected_here[record.record_id])
            ctx.add("correctionsOfStored")
    return out


def _same_value_elsewhere(before: str, after: str, correction: Correction, full: dict[str, Any], ids: set[str],
                          claimed: set[str], corrected_here: dict[str, Planned]) -> list[tuple[Any, str]]:
    """Other live records that state, next to the correction's words, the one value the best
    record's rewrite replaced, each with the same value rewritten: a fact changed once is changed
    in every record that says it. Only a rewrite of that value counts (never a record replaced
    whole by the correction's clause), and only when the rewrite replaced exactly one value."""
    def keys(text: str) -> set[str]:
        return {_folded(k, v) for k, v in values(text)}

    gone = keys(before) - keys(after)
    came = [v for k, v in values(after) if _folded(k, v) not in keys(before)]
    if len(gone) != 1 or len(came) != 1:
        return []
    out = []
    for rid in sorted(ids):
        record = full.get(rid)
        if record is None or record.deleted or rid in claimed or rid in corrected_here:
            continue
        held = [v for k, v in values(record.content) if _folded(k, v) in gone]
        if len(held) != 1:
            continue
        # The value to replace is known now: said as the old one, the rewrite has no choice to make.
        content = corrected_content(record.content, replace(correction, old=held[0], new=came[0]))
        if content and normalize(content) != normalize(record.content) and keys(record.content) - keys(content) == gone:
            out.append((record, content))
    return out


def _naming_the_tool_given_up(profile, before: str, after: str, full: dict[str, Any]) -> set[str]:
    """Live records that name the tool a rewrite replaced by another of its kind (added to `full`).
    A tool is a slot of its own: "然后疫苗提醒：现在 Celery beat 每天早上 8 点扫一遍" says which task queue
    runs as surely as the stack record does, and after "决定换成 Dramatiq" it is as stale, though it
    shares no word with the change. `_same_value_elsewhere` then rewrites the ones that name it once."""
    keys_before, keys_after = ({tool_key(v) for _, v in values(text)} for text in (before, after))
    gone = [(k, v) for k, v in values(before) if k.startswith("tool:") and tool_key(v) not in keys_after]
    came = [(k, v) for k, v in values(after) if k.startswith("tool:") and tool_key(v) not in keys_before]
    if len(gone) != 1 or len(came) != 1 or gone[0][0] != came[0][0]:
        return set()
    kind, key = gone[0][0], tool_key(gone[0][1])
    ids = _records_containing_any(profile, tool_spellings(gone[0][1]))
    full.update(_full_records(profile, ids - set(full)))
    # Only where it is the one tool of its kind: "去年对比过 Sidekiq 和 Celery" is a comparison, not the queue in use.
    return {rid for rid in ids if rid in full and {tool_key(v) for k, v in values(full[rid].content) if k == kind} == {key}}


def _folded(kind: str, value: str) -> str:
    """A value's key, a weekday's plural folded ("Mondays" is the day of "every Monday")."""
    key = value_key(value)
    return key[:-1] if kind == "weekday" and key.endswith("days") else key


def _stated(ctx, said, text: str, analysis: BatchAnalysis, mode: str, projects: dict[str, dict], *, claimed_only: bool = False) -> list[Planned]:
    """What a correction says holds now, as records of their own: the units a pattern claims, or
    one fact when none does and the correction says enough to stand alone (not with `claimed_only`). A correction that
    only takes back what was said, ending on it and naming no new value, states nothing (the value it names is the wrong one)."""
    taken_back = TAKEN_BACK_RE.search(text)
    if not said.correction.old and not said.correction.new and taken_back and not text[taken_back.end():].strip(" 。.!！~～"):
        return []  # ("我上次说错了：是超过 5 次才自动收卷" says what holds after it, and stays.)
    found = extract_from_message(said.message, mode=mode, sentences=[simplified(text)], speakers=analysis.speakers)
    for cand in found:
        cand.content = analysis.restore(cand.content)
    # A tool said to be in use now ("现在全部在 Telegram 了") is a fact even with a weak cue.
    taken_up = bool(said.correction.new) and all(k.startswith("tool:") for k, _ in values(said.correction.new))
    if not found and not claimed_only and _standalone(said.correction) and (not said.correction.weak or taken_up or CHANGE_SAID_RE.search(text)):
        fact = candidate_for(resolve_relative_dates(text, said.message.get("timestamp")), "fact", said.message, mode=mode)
        found = [fact] if fact is not None else []
    out = []
    for cand in found:
        item = Planned(candidate=cand, source_ids=[message_ref(said.message)], timestamps=[t for t in [iso_from_ms(said.message.get("timestamp"))] if t])
        item.metadata = _scope(ctx, item, mode, projects)
        out.append(item)
    return out


def _restate_in_batch(ctx, stated_here: list[Planned], said) -> bool:
    """A second change of one setting in the batch ("调到 40" … "还是调到 30 吧"): the first matched
    nothing and became a plain statement; the later one rewrites it, so only the last value is stored."""
    best, best_score = None, 0.0
    for item in stated_here:
        score = supersedes(item.candidate.content, said.correction)
        if score > best_score:
            best, best_score = item, score
    new_content = corrected_content(best.candidate.content, said.correction) if best is not None else None
    if not new_content or normalize(new_content) == normalize(best.candidate.content):
        return False
    best.candidate.content = new_content
    _cite(best, said.message)
    ctx.add("correctionsInBatch")
    return True


def _replacement_of(ctx, record, content: str, message: dict, mode: str, projects: dict[str, dict], claimed: set[str]) -> Planned:
    cand = Candidate(
        content=content, type=record.type, priority=record.priority, category="correction", message=message,
        language="zh" if is_chinese(content) else "en",
    )
    ref = message_ref(message)
    same_session = str(message.get("sessionKey") or "") == (record.session_key or "")
    item = Planned(candidate=cand, source_ids=[*(record.source_message_ids or []), ref] if same_session else [ref], timestamps=[], fixed=True)
    stamp = iso_from_ms(message.get("timestamp"))
    item.timestamps = [t for t in [stamp] if t]
    meta = dict(record.metadata or {})
    if same_session or meta.get("scope") == "global":
        item.metadata = {k: v for k, v in meta.items() if k in ("scope", "project", "projectEvidence")} or {"scope": "unknown", "project": ""}
    else:
        item.metadata = _scope(ctx, item, mode, projects)
    _replace(item, record, claimed)
    return item


def _forget_in_batch(ctx, analysis: BatchAnalysis, planned: list[Planned]) -> list[Planned]:
    """Units of this batch that a later request forgets: never stored. A subject that names a
    kind of information ("my salary", "地址") takes the units of that kind the same session
    said, when no unit uses the subject's own words."""
    gone: list[Planned] = []
    for said in analysis.forgets:
        before = [item for item in planned if item not in gone and analysis.said_before(item.candidate, said)]
        if said.forget:
            hits = [item for item in before if forget_matches(item.candidate.content, said.forget)]
            kinds = forget_kinds(said.forget) if not hits else []
            if kinds:
                session = str(said.message.get("sessionKey") or "")
                hits = [item for item in before if str(item.candidate.message.get("sessionKey") or "") == session
                        and says_kind(item.candidate.content, kinds)]
                said.by_category = bool(hits)
        else:
            hits = [item for item in before if said.previous is not None and message_ref(said.previous) in item.source_ids]
        if hits:
            said.matched = True
        gone.extend(hits)
        for corr in analysis.corrections:
            # A change said before the request ("体重涨到了七十五公斤" / "这条别记了") is forgotten too.
            if corr.correction is None or analysis.order.get(id(corr.message), -1) >= analysis.order.get(id(said.message), -1):
                continue
            about = forget_matches(corr.correction.clause, said.forget) if said.forget else corr.message is said.previous
            if about:
                corr.correction = None
                said.matched = True
                ctx.add("forgottenInBatch")
    ctx.add("forgottenInBatch", len(gone))
    return gone


def _forget_stored(ctx, analysis: BatchAnalysis, claimed: set[str]) -> list[str]:
    """Live records a forget request names: tombstoned with reason `user-forget` — the
    user's word, applied to high-value records too (l1_commit tombstones have no
    high-value guard; that guard belongs to l1_fix, an agent's correction)."""
    if not analysis.forgets:
        return []
    from apps.records.selectors import live_records_recent

    ids: list[str] = []
    subjects = [s for s in analysis.forgets if s.forget]
    found = _search(ctx, [s.forget for s in subjects], top_k=FORGET_SEARCH_TOP_K) if subjects else []
    recent = live_records_recent(profile=ctx.profile, limit=TEXT_SCAN_LIMIT)
    for said, candidates in zip(subjects, found):
        mine = [str(c["record_id"]) for c in candidates if c.get("record_id") and forget_matches(str(c.get("content") or ""), said.forget)]
        mine += [rid for rid, content, _src, _session in recent if forget_matches(content, said.forget)]
        named_kinds = forget_kinds(said.forget, alone=False) if not mine and not said.matched else []
        if named_kinds:
            # "forget my salary": what the same session said of that kind, when nothing uses the word
            # itself; otherwise the record of a kind the subject names when it is the only one of
            # that kind, or the first dense candidate.
            session = str(said.message.get("sessionKey") or "")
            kinds = forget_kinds(said.forget)
            if kinds:
                mine = [rid for rid, content, _src, rsession in recent if rsession == session and says_kind(content, kinds)]
            of_kind = {rid for rid, content, _src, _rs in recent if says_kind(content, named_kinds)}
            mine = mine or (sorted(of_kind) if len(of_kind) == 1 else [rid for _, rid in _ranked(candidates)[:1] if rid in of_kind])
            ctx.add("forgottenByKind", len(mine))
        taken_back = _taken_back_as_told(said)
        if not mine and not said.matched and not taken_back:
            mine = _clearly_first(candidates)
            ctx.add("forgottenByMeaning", len(mine))
        if not mine and not said.matched and not taken_back:
            mine = _only_one_sharing_a_word(candidates, recent, said.forget)
            ctx.add("forgottenBySharedWord", len(mine))
        if mine and _PASSAGE_RE.search(str(said.message.get("content") or "")):
            # "上个月我骂我老板那一大段，你能 delete 掉吗": the whole passage, every record of the message it was said in.
            refs = {ref for rid, _content, src, _session in recent if rid in mine for ref in (src or [])}
            mine = mine + [rid for rid, _content, src, _session in recent if rid not in mine and refs & set(src or [])]
        ids.extend(mine)
    for said in analysis.forgets:
        if said.forget or said.previous is None:
            continue
        ref = message_ref(said.previous)
        ids.extend(rid for rid, _content, src, _session in recent if ref in (src or []))
    unique = [rid for rid in dict.fromkeys(ids) if rid not in claimed]
    live = _full_records(ctx.profile, set(unique))
    unique = [rid for rid in unique if rid in live and not live[rid].deleted]
    ctx.add("forgotten", len(unique))
    return unique


# "我 partner 最近在考虑 leave, 可能去 Dubai 做 — 啊 forget it, 这个不要记": a matter told in the request's own
# message and taken back at once is not a name of something said before ("forget what I said about my ex", "the
# whole saga with next door and the council - honestly forget I ever brought it up"): no stored record is found for
# it by meaning or a shared word alone (the partner named when the user introduced themselves stays).
TAKEN_BACK_MIN_WORDS = 4
_SAID_BEFORE_RE = re.compile(r"\b(?:told|said|mentioned|brought (?:it|that|this) up|talked about|went on about)\b|说过|提过|讲过|聊过|之前|上次|上回|那天",
                             re.IGNORECASE)
_BROKEN_OFF_RE = re.compile(r"\s*(?:[—–-]+|…+|\.{3,})")


def _taken_back_as_told(said: Said) -> bool:
    content = str(said.message.get("content") or "")
    at = content.find(said.forget)
    # Broken off by a dash or a pause ("… Dubai 做 — 啊 forget it"), not named as a matter ("玩手机玩到很晚这件事就别记了").
    broken_off = at >= 0 and _BROKEN_OFF_RE.match(content, at + len(said.forget)) is not None
    return broken_off and len(content_tokens(said.forget)) >= TAKEN_BACK_MIN_WORDS and not _SAID_BEFORE_RE.search(content)


# A request that names a whole passage, not one statement of it.
_PASSAGE_RE = re.compile(r"一大段|那段|这段|整段|那些话|这些话|\bthat whole (?:bit|thing|rant|story)\b|\beverything i said\b", re.IGNORECASE)


def _only_one_sharing_a_word(candidates: list[dict], recent: list, subject: str) -> list[str]:
    """The one live record that uses a naming word of the subject ("跟我老公闹别扭" / "我老公嫌我…"),
    when it is also the first dense candidate, or among the first FORGET_SHARED_RANK with a
    cosine of at least FORGET_SHARED_MIN (bench/forget_scores.py): two weak signals that agree."""
    sharing = {rid for rid, content, _src, _session in recent if forget_shares_word(content, subject)}
    if len(sharing) != 1:
        return []
    ranked = _ranked(candidates)
    near = {rid for score, rid in ranked[:FORGET_SHARED_RANK] if score >= FORGET_SHARED_MIN} | {rid for _, rid in ranked[:1]}
    return sorted(sharing & near)


def _ranked(candidates: list[dict]) -> list[tuple[float, str]]:
    """(cosine, record id) of the dense candidates, best first."""
    return sorted(((float(c.get("score") or 0.0), str(c["record_id"])) for c in candidates if c.get("record_id")), reverse=True)


def _clearly_first(candidates: list[dict]) -> list[str]:
    """The first dense candidate when it stands clear of the others (FORGET_DENSE_MIN/MARGIN)."""
    scored = _ranked(candidates)
    if not scored or scored[0][0] < FORGET_DENSE_MIN:
        return []
    second = scored[1][0] if len(scored) > 1 else 0.0
    return [scored[0][1]] if scored[0][0] - second >= FORGET_DENSE_MARGIN else []


def _records_sharing_words(profile, correction: Correction, asked: dict[tuple[str, str, str], set[str]] | None = None) -> set[str]:
    """Live records that use the correction's own words (its values left out), longest words
    first: the record a correction means may score low in the dense search ("replicas 现在是 5"
    against a long deployment record) but names the same subject."""
    key = (correction.clause, correction.context, correction.old)
    if asked is not None and key in asked:
        return asked[key]
    import jieba

    from apps.search import sparse

    sparse.setup()  # jieba loaded once, quietly
    words = [w for w in subject_words(correction) if not w.isdigit() and (len(w) >= 3 or is_chinese(w))]
    # A Chinese clause gives many bigrams; those with a function character in them ("我跟",
    # "万了") straddle words, so the ones without come first ("预算", "主材"), and of those the
    # words the segmenter also finds ("预算" before "算放", "给全").
    segmented = set(jieba.lcut(f"{correction.clause} {correction.context}"))
    ranked = sorted(words, key=lambda w: (any(ch in ZH_STOP_CHARS for ch in w), is_chinese(w) and w not in segmented, -len(w), w))
    found = _records_containing_any(profile, ranked[:CORRECTION_WORD_TERMS])
    if asked is not None:
        asked[key] = found
    return found


def _records_containing_any(profile, words: list[str]) -> set[str]:
    """Live records using one of `words`: one scan of the profile's records, not one per word."""
    from apps.records.selectors import live_record_ids_containing_any

    return live_record_ids_containing_any(profile=profile, texts=words, limit=20 * len(words))


def _search(ctx, queries: list[str], *, top_k: int) -> list[list[dict]]:
    """embed_and_search answers per query ([] where the index could not answer)."""
    out: list[list[dict]] = [[] for _ in queries]
    for start in range(0, len(queries), EMBED_CHUNK):
        chunk = queries[start : start + EMBED_CHUNK]
        try:
            answer = ctx.tool("embed_and_search", {"queries": chunk, "topK": top_k})
        except ToolError as exc:
            ctx.counts["searchError"] = exc.message[:300]
            continue
        for entry in answer.get("results") or []:
            idx = entry.get("index")
            if isinstance(idx, int) and 0 <= idx < len(chunk) and not entry.get("fallback"):
                out[start + idx] = list(entry.get("candidates") or [])
    return out


# --------------------------------------------------------------------------- project scope


def _session_project(ctx, session_key: str, projects: dict[str, dict]) -> dict:
    if session_key not in projects:
        try:
            projects[session_key] = ctx.tool("l1_project_get", {"sessionKey": session_key})
        except ToolError as exc:
            projects[session_key] = {"flag": False, "project": "", "error": exc.message}
            ctx.add("projectLookupFailed")
    return projects[session_key]


def _scope(ctx, item: Planned, mode: str, projects: dict[str, dict]) -> dict[str, Any]:
    cand = item.candidate
    if mode == "chat":
        return {"scope": "global", "project": ""}
    paths = [p for p in absolute_paths(cand.content) if p in str(cand.message.get("content") or "")]
    session_key = str(cand.message.get("sessionKey") or "")
    if paths:
        known = [str(p) for p in (ctx.profile.known_projects or [])]
        session = _session_project(ctx, session_key, projects)
        roots = sorted(known, key=len, reverse=True)
        if session.get("flag") and session.get("project"):
            roots.append(str(session["project"]))
        for root in roots:
            if all(path_within(path, root) for path in paths):
                evidence = [{"message_id": item.source_ids[0], "path": path} for path in paths]
                return {"scope": "self", "project": root, "projectEvidence": evidence}
        return {"scope": "unknown", "project": ""}
    general = GENERAL_RE.search(cand.content) and not REPO_RE.search(cand.content)
    if cand.type == "work_method" and (general or (cand.category == "preference" and not REPO_RE.search(cand.content))):
        # Only the user's own habits hold in every project ("I always…", "in all my repos").
        return {"scope": "global", "project": ""}
    cwd = str(cand.message.get("cwd") or "")
    # A known project's workbench needs no look at the session (known projects win anyway).
    session = {} if _project_of_cwd(ctx.profile, cwd, {}) else _session_project(ctx, session_key, projects)
    root = _project_of_cwd(ctx.profile, cwd, session)
    if root:
        # Said in a known project's workbench: the message's cwd is the evidence (SPEC §3.2).
        evidence = [{"message_id": message_ref(cand.message), "path": cwd}]
        return {"scope": "self", "project": root, "projectEvidence": evidence}
    if session.get("flag"):
        item.project_hint = str(session.get("project") or "")
        return {"scope": "self"}  # the server fills the session's project
    if cand.type == "work_method" and not REPO_RE.search(cand.content):
        return {"scope": "global", "project": ""}  # a convention said outside any project
    return {"scope": "unknown", "project": ""}


def _project_of_cwd(profile, cwd: str, session: dict) -> str:
    """The known project (or the session's flagged one) that contains the workbench."""
    if not cwd:
        return ""
    roots = sorted((str(p) for p in (profile.known_projects or [])), key=len, reverse=True)
    if session.get("flag") and session.get("project"):
        roots.append(str(session["project"]))
    return next((root for root in roots if path_within(cwd, root)), "")


# A rule said about this repository, or about the user's work in general.
REPO_RE = re.compile(
    r"\b(in|for|of|to) (this|our|the) (repo|repository|project|codebase|service|app)\b|\bhere\b|\bthis (repo|repository|project|codebase)\b"
    r"|本项目|本仓库|这个(项目|仓库|工程|库|服务)|该项目|项目里|仓库里|这里", re.IGNORECASE)
GENERAL_RE = re.compile(
    r"\b(in|for|across) (all|every|any) (of )?(my |our )?(projects?|repos?|repositories|codebases?)\b|\beverywhere\b|\bglobally\b|\bin general\b"
    r"|\bi (always|never|usually|prefer|like|hate|tend to)\b|\bmy (habit|preference|style|rule of thumb)\b|\bpersonally\b|\bwherever\b"
    r"|任何项目|我(一直|总是|一般|习惯|喜欢|偏好|个人)|无论哪个项目|" + ALL_REPOS_RE.pattern, re.IGNORECASE)


# --------------------------------------------------------------------------- dedup


def _dedup(ctx, planned: list[Planned], claimed: set[str] | None = None) -> None:
    claimed = claimed if claimed is not None else set()
    planned = _skip_exact_repeats(ctx, planned, claimed)
    if not planned:
        return
    results: dict[int, list[dict]] = {}
    failed: list[int] = []
    for start in range(0, len(planned), EMBED_CHUNK):
        chunk = planned[start : start + EMBED_CHUNK]
        queries = [p.candidate.content for p in chunk]
        try:
            answer = ctx.tool("embed_and_search", {"queries": queries, "topK": 5})
        except ToolError as exc:
            ctx.counts["dedupError"] = exc.message[:300]
            failed.extend(range(start, start + len(chunk)))
            continue
        got = {}
        for entry in answer.get("results") or []:
            idx = entry.get("index")
            if isinstance(idx, int) and 0 <= idx < len(chunk) and entry.get("queryText") == queries[idx] and not entry.get("fallback"):
                got[start + idx] = list(entry.get("candidates") or [])
                if isinstance(entry.get("queryVector"), list):
                    chunk[idx].vector = entry["queryVector"]
        for idx in range(start, start + len(chunk)):
            if idx in got:
                results[idx] = got[idx]
            else:
                failed.append(idx)
    if failed:
        ctx.add("dedupFallback", len(failed))
        fallback = _text_fallback(ctx.profile, [planned[i].candidate.content for i in failed])
        for i, cands in zip(failed, fallback):
            results[i] = cands
    _add_state_candidates(ctx.profile, planned, results)
    full = _full_records(ctx.profile, {c["record_id"] for cands in results.values() for c in cands if c.get("record_id")})
    earlier = _in_batch_neighbours(planned)
    for idx, item in enumerate(planned):
        neighbours = [(j, score) for j, score in earlier.get(idx, []) if planned[j].action in ("store", "update")]
        if item.candidate.type in STATE_TYPES and states(item.candidate.content):
            near = {j for j, _ in neighbours}
            neighbours += [(j, 0.0) for j in range(idx) if j not in near and planned[j].action in ("store", "update")
                           and same_state(planned[j].content_override or planned[j].candidate.content, item.candidate.content)]
        pseudo = {f"batch:{j}": _as_record(planned[j], j) for j, _ in neighbours}
        candidates = results.get(idx, []) + [{"record_id": f"batch:{j}", "score": score} for j, score in neighbours]
        _decide(item, candidates, {**full, **pseudo} if pseudo else full, claimed)
        if item.target.startswith("batch:"):
            _settle_in_batch(item, planned[int(item.target.removeprefix("batch:"))])


def _add_state_candidates(profile, planned: list[Planned], results: dict[int, list[dict]]) -> None:
    """A durable personal state restated in other words ("我吃素" / "我不吃肉") scores too low
    to be among the dense candidates: the live records that use one of its words join them."""
    for idx, item in enumerate(planned):
        if item.candidate.type not in STATE_TYPES:
            continue
        terms = state_search_terms(item.candidate.content)
        if not terms:
            continue
        have = {str(c.get("record_id")) for c in results.get(idx, [])}
        for rid in sorted(_records_containing_any(profile, list(terms)) - have):
            results.setdefault(idx, []).append({"record_id": rid, "score": 0.0})


IN_BATCH_MIN_SCORE = 0.5  # below every dedup threshold that looks at the score (0.6): only the lexical skip could still take such a pair
IN_BATCH_NEIGHBOURS = 5


def _in_batch_neighbours(planned: list[Planned]) -> dict[int, list[tuple[int, float]]]:
    """For each unit, the earlier units of the batch whose vectors are closest (cosine of the
    same debiased space the index scores in), best first."""
    import numpy as np

    with_vectors = [i for i, p in enumerate(planned) if p.vector]
    if len(with_vectors) < 2:
        return {}
    matrix = np.asarray([planned[i].vector for i in with_vectors], dtype=np.float32)
    scores = matrix @ matrix.T
    out: dict[int, list[tuple[int, float]]] = {}
    for row, i in enumerate(with_vectors):
        found = [(with_vectors[col], float(scores[row, col])) for col in range(row) if scores[row, col] >= IN_BATCH_MIN_SCORE]
        if found:
            out[i] = sorted(found, key=lambda f: f[1], reverse=True)[:IN_BATCH_NEIGHBOURS]
    return out


def _as_record(item: Planned, index: int) -> InBatch:
    cand = item.candidate
    return InBatch(record_id=f"batch:{index}", content=item.content_override or cand.content, type=cand.type,
                   task_state=item.task_state, timestamps=list(item.timestamps), priority=cand.priority)


def _settle_in_batch(item: Planned, earlier: Planned) -> None:
    """A unit decided against an earlier unit of its batch. A restatement cites its message
    on the earlier unit (same session); a refinement, a changed value or a completed task
    takes the earlier unit's place, and with it what that unit replaced."""
    same_session = str(item.candidate.message.get("sessionKey")) == str(earlier.candidate.message.get("sessionKey"))
    if item.rule in MERGE_RULES and not same_session:
        # One record cites one session: another session's wording is a record of its own.
        item.action, item.rule, item.target, item.replaces, item.content_override = "store", "", "", None, None
        return
    if item.rule in MERGE_RULES:
        # Merged into the earlier unit, which now says both.
        if earlier.content_override:
            earlier.content_override = item.content_override
        else:
            earlier.candidate.content = item.content_override or earlier.candidate.content
        earlier.vector = None
        item.action, item.rule = "skip", "mergedInBatch"
    if item.action == "skip":
        if same_session:
            for ref in item.source_ids:
                if ref not in earlier.source_ids:
                    earlier.source_ids.append(ref)
            for stamp in item.timestamps:
                if stamp not in earlier.timestamps:
                    earlier.timestamps.append(stamp)
        return
    earlier.action, earlier.rule = "skip", "replacedInBatch"
    item.replaces = list(earlier.replaces or []) or None
    item.action = "update" if item.replaces else "store"
    if earlier.task_state and item.task_state is None:
        item.task_state = earlier.task_state


def _skip_exact_repeats(ctx, planned: list[Planned], claimed: set[str]) -> list[Planned]:
    """Skip what a live record already says word for word (its normalised content key, one
    query for the batch), before anything is embedded: the dense search would only confirm
    it (score ≈ 1.0, no new word). Returns the items still to be searched."""
    from apps.records.normalize import content_key
    from apps.records.selectors import live_records_by_content_key

    keys = {id(item): content_key(item.content_override or item.candidate.content) for item in planned}
    live = live_records_by_content_key(profile=ctx.profile, keys=keys.values())
    rest = []
    for item in planned:
        record = live.get(keys[id(item)])
        closes_it = record is not None and item.task_state in ("done", "dropped") and record.type == "work_task" \
            and (record.task_state or "open") == "open"
        if record is None or record.record_id in claimed or closes_it:
            rest.append(item)
            continue
        item.action, item.rule = "skip", "same"
    if len(rest) < len(planned):
        ctx.add("dedupExactRepeats", len(planned) - len(rest))
    return rest


def _decide(item: Planned, candidates: list[dict], full: dict[str, Any], claimed: set[str]) -> None:
    cand = item.candidate
    closing = item.task_state in ("done", "dropped")
    for c in sorted(candidates, key=lambda c: c.get("score") or 0, reverse=True):
        record = full.get(str(c.get("record_id")))
        if record is None or record.deleted or record.record_id in claimed:
            continue  # not found, tombstoned or already replaced in this batch: never a target
        if other_subject(cand.content, record.content):
            continue  # "ticket 11 …" against "ticket 10 …": another thing, whatever the score
        score = float(c.get("score") or 0)
        lexical = lexical_similarity(cand.content, record.content)
        if closing and record.type == "work_task" and (record.task_state or "open") == "open":
            # "I finished X" closes the open task X: same task, new state.
            if score >= UPDATE_SCORE and lexical >= CLOSE_LEXICAL:
                _replace(item, record, claimed, content=record.content)
                item.rule, item.target = "close", record.record_id
                return
            continue
        adds_nothing = normalize(cand.content) == normalize(record.content) or tokens(cand.content) <= tokens(record.content)
        if adds_nothing and (score >= SKIP_SCORE or lexical >= SKIP_LEXICAL):
            item.action, item.rule, item.target = "skip", "same", record.record_id
            return
        same_values = _same_values(cand.content, record.content)
        contained = containment(cand.content, record.content)
        if same_values and score >= RESTATE_SCORE and contained >= RESTATE_CONTAINMENT:
            # A shortened or reworded restatement of a live record: nothing new to store.
            item.action, item.rule, item.target = "skip", "restatement", record.record_id
            return
        if (
            same_values and score >= EXTEND_SCORE and record.type == cand.type
            and containment(record.content, cand.content) >= EXTEND_CONTAINMENT
        ):
            # An extended version ("…, and also Y"): the fuller wording replaces the record.
            _replace(item, record, claimed)
            item.rule, item.target = "extension", record.record_id
            return
        if (
            score >= UPDATE_SCORE and lexical >= UPDATE_LEXICAL and record.type == cand.type
            and dropped_weight(record.content, cand.content) <= UPDATE_MAX_DROPPED
            and _changed_values(record.content, cand.content) <= 1
        ):
            # A refinement or one changed value of the same statement; two changed terms
            # ("PostgreSQL for billing" → "Redis for search") are a different statement.
            _replace(item, record, claimed)
            item.rule, item.target = "refinement", record.record_id
            return
        restated_here = cand.restated and (score >= RESTATED_MERGE_SCORE or (
            score >= RESTATED_WORDED_MERGE_SCORE and content_tokens(cand.content) & content_tokens(record.content)))
        if _values_kept(record.content, cand.content) and (record.type == cand.type or cand.restated) \
                and (restated_here or score >= PARAPHRASE_MERGE_SCORE) \
                and (cand.restated or _says_enough(cand.content)):
            # The same thing in other words ("我吃素" / "我是素食者"): one record that says both,
            # not a second copy. Said as a repeat ("as I said", "还是…的事"), a lower score will
            # do, and the record keeps its type.
            merged = _merged(record.content, cand.content)
            if merged is not None:
                _replace(item, record, claimed, content=merged)
                _adopt_type(cand, record.type, record.priority)
                item.rule, item.target = "paraphrase", record.record_id
                return
            if cand.restated and score >= RESTATED_MERGE_SCORE:
                item.action, item.rule, item.target = "skip", "restated", record.record_id
                return
        if cand.type in STATE_TYPES and record.type in STATE_TYPES and same_state(cand.content, record.content) \
                and _values_kept(record.content, cand.content):
            # One durable state in other words ("I don't drink alcohol" / "I'm teetotal"): the
            # record keeps both wordings, as a paraphrase does.
            merged = _merged(record.content, cand.content)
            if merged is None:
                item.action, item.rule, item.target = "skip", "sameState", record.record_id
                return
            _replace(item, record, claimed, content=merged)
            if "persona" in (record.type, cand.type):
                _adopt_type(cand, "persona", record.priority)
            item.rule, item.target = "sameState", record.record_id
            return
    item.action = "store"


def _adopt_type(cand, record_type: str, record_priority: int) -> None:
    """The merged record takes the stored record's type; a strict rule's priority (-1) is for a
    chat instruction only (SPEC §3.2), so a candidate that was one and now is not takes the
    stored record's priority — l1_commit refuses the whole batch otherwise."""
    cand.type = record_type
    if cand.priority < 0 and record_type != "instruction":
        cand.priority = record_priority


MERGE_MIN_WORDS, MERGE_MIN_ZH_CHARS = 3, 6


def _says_enough(text: str) -> bool:
    """Short remarks ("现在稳定了", "sounds fine") score high against any other short remark: a
    paraphrase needs some substance to be recognised as one."""
    words = [t for t in content_tokens(text) if not is_chinese(t)]
    zh = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    return len(words) >= MERGE_MIN_WORDS or zh >= MERGE_MIN_ZH_CHARS + 2 or len(words) + zh // 2 >= MERGE_MIN_WORDS + 1


def _merged(old: str, new: str) -> str | None:
    """The live record followed by what the new wording says, or None when that grows too long."""
    old = old.rstrip()
    zh = is_chinese(old)
    if old and old[-1] not in ".!?。！？":
        old += "。" if zh else "."
    text = f"{old}{'' if zh and is_chinese(new) else ' '}{new.strip()}"
    return text if len(text) <= MERGE_MAX_CHARS else None


def _values_kept(old: str, new: str) -> bool:
    """Every typed value of `old` is still said by `new` where `new` speaks of that kind
    (it may add one: "一个小时" → "一个小时…两个小时"), so a merge contradicts nothing."""
    vo, vn = values(old), values(new)
    return all(
        {value_key(v) for k, v in vo if k == kind} <= {value_key(v) for k, v in vn if k == kind}
        for kind in {k for k, _ in vo} & {k for k, _ in vn}
    )


def _changed_values(old: str, new: str) -> int:
    """How many typed values `new` says that `old` does not, counted per occurrence among the
    kinds both speak of. "sprint 0, ticket 0" → "sprint 1, ticket 10" changes two: another
    ticket, not a correction of the first (the word test sees one dropped token, "0")."""
    vo, vn = values(old), values(new)
    kinds = {k for k, _ in vo} & {k for k, _ in vn}
    said = {(k, value_key(v)) for k, v in vo}
    return sum(1 for k, v in vn if k in kinds and (k, value_key(v)) not in said)


def _same_values(a: str, b: str) -> bool:
    """No typed value (number, weekday, time) of one text contradicts the other's."""
    va, vb = values(a), values(b)
    return all(
        {value_key(v) for k, v in va if k == kind} == {value_key(v) for k, v in vb if k == kind}
        for kind in {k for k, _ in va} & {k for k, _ in vb}
    )


def _replace(item: Planned, record, claimed: set[str], *, content: str | None = None) -> None:
    item.action = "update"
    item.replaces = [record.record_id]
    claimed.add(record.record_id)
    if content is not None:
        item.content_override = content
    old_state = record.task_state or "open"
    if record.type == "work_task" and item.task_state is None and old_state != "open":
        item.task_state = old_state  # a closed task stays closed across an update
    for stamp in record.timestamps or []:
        if stamp not in item.timestamps:
            item.timestamps.append(stamp)


def _full_records(profile, ids: set[str]) -> dict[str, Any]:
    from apps.records.selectors import records_with_ids

    return records_with_ids(profile=profile, record_ids=ids)


def _text_fallback(profile, queries: list[str]) -> list[list[dict]]:
    """The seed's text fallback: live records of the last 30 days, compared by wording."""
    from apps.records.selectors import live_records_recent

    since = timezone.now() - timedelta(days=FALLBACK_DAYS)
    rows = live_records_recent(profile=profile, limit=TEXT_SCAN_LIMIT, since=since)
    row_tokens = [(rid, content, tokens(content)) for rid, content, _sources, _session in rows]
    out = []
    for query in queries:
        q = tokens(query)
        scored = sorted(
            ((len(q & t) / len(q | t) if q and t else 0.0, rid, content) for rid, content, t in row_tokens), reverse=True
        )[:5]
        # A lexical score stands in for the dense one: identical wording scores 1.0.
        out.append([{"record_id": rid, "content": content, "score": score} for score, rid, content in scored if score > 0])
    return out


# --------------------------------------------------------------------------- scenes


def scene_label(item: Planned, mode: str, *, zh: bool | None = None) -> str:
    cand = item.candidate
    zh = cand.language == "zh" if zh is None else zh
    topic = TOPICS.get(cand.type, ("其他", "other"))[0 if zh else 1]
    if mode == "chat":
        owner = "用户" if zh else "user"
    else:
        project = (item.metadata or {}).get("project") or item.project_hint
        owner = os.path.basename(project.replace("\\", "/").rstrip("/")) if project else ("通用" if zh else "general")
    return f"{owner}｜{topic}"


def _attribute_scenes(ctx, planned: list[Planned], mode: str) -> None:
    """One scene per owner and topic, whatever language a record is in: a pool scene with
    either language's label is reused; a new scene takes the label in the language most of
    the batch's records of that topic are in (a Chinese and an English rule about the same
    project's conventions belong to one block)."""
    live = [p for p in planned if p.action != "skip"]
    if not live:
        return
    try:
        pool = ctx.tool("list_l1_scenes", {"limit": 50}).get("scenes") or []
    except ToolError as exc:
        ctx.counts["scenePoolError"] = exc.message[:300]
        pool = []
    by_name = {str(s.get("name")): str(s.get("id")) for s in pool}
    votes: dict[tuple[str, str], list[bool]] = {}
    for item in live:
        votes.setdefault((scene_label(item, mode, zh=False), scene_label(item, mode, zh=True)), []).append(item.candidate.language == "zh")
    for item in live:
        variants = (scene_label(item, mode, zh=False), scene_label(item, mode, zh=True))
        existing = next((name for name in (scene_label(item, mode), *variants) if by_name.get(name)), None)
        if existing:
            item.scene = {"scene_id": by_name[existing]}
            continue
        zh_votes = votes[variants]
        zh = sum(zh_votes) * 2 > len(zh_votes) or (sum(zh_votes) * 2 == len(zh_votes) and zh_votes[0])  # a tie: the first record's language
        label = variants[1] if zh else variants[0]
        by_name[label] = by_name.get(label) or ""  # later items of the batch name the same new scene
        item.scene = {
            "new_scene_name": label,
            "new_scene_reason": f"no pool scene covers {item.candidate.type} memories of this owner yet",
        }


# --------------------------------------------------------------------------- commit


def _records_for_commit(planned: list[Planned], mode: str) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for item in planned:
        if item.action == "skip":
            continue
        cand = item.candidate
        msg = cand.message
        record: dict[str, Any] = {
            "content": item.content_override or cand.content,
            "type": cand.type,
            "priority": cand.priority,
            "source_message_ids": list(item.source_ids),
            "metadata": dict(item.metadata or {"scope": "unknown", "project": ""}),
            "timestamps": sorted(set(item.timestamps)),
            "sessionKey": str(msg.get("sessionKey") or ""),
            "sessionId": msg.get("sessionId"),
            "cwd": str(msg.get("cwd") or ""),
            **(item.scene or {}),
        }
        if cand.type == "work_task" and item.task_state:
            record["taskState"] = item.task_state
        if item.vector and not item.content_override:
            record["embedding"] = item.vector  # the server reuses it only for identical content
        if item.action == "update" and item.replaces:
            for old in item.replaces:
                records.append({"id": old, "deleted": True})
            record["replaces"] = list(item.replaces)
        records.append(record)
    return records


def _count_commit(ctx, planned: list[Planned], result: dict) -> None:
    ctx.add("recordsStored", sum(1 for p in planned if p.action == "store"))
    ctx.add("recordsUpdated", sum(1 for p in planned if p.action == "update"))
    ctx.add("recordsSkipped", sum(1 for p in planned if p.action == "skip"))
    for item in planned:
        if item.rule:
            ctx.add(f"dedup.{item.rule}")
    ctx.add("recordsCommitted", sum(1 for s in result.get("stored") or [] if s))
    ctx.add("tombstoned", len(result.get("tombstoned") or []))
    dropped = (result.get("valueCheck") or {}).get("dropped") or []
    ctx.add("valueCheckDropped", len(dropped))
    for key in ("provenanceMissing", "taskStateDroppedOnReplace", "priorityDefaulted"):
        if result.get(key):
            ctx.add(key, int(result[key]))
    if result.get("sceneWarns"):
        ctx.add("sceneWarns", len(result["sceneWarns"]))
    if result.get("projectWarnings"):
        ctx.add("projectWarnings", len(result["projectWarnings"]))


__all__ = ["NotFound", "message_ref", "run"]
