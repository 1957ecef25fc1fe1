"""What one batch of L0 messages says, message by message and across neighbouring messages.

The extraction unit is a message or a short window, not a sentence:
* a follow-up that only points back ("以后都照这个来。", "Do the same for the importer.")
  joins the statement it points at, with both messages as provenance;
* a user's acceptance of an assistant's proposal ("yes, add that rule — exactly what we
  want") becomes a record of the proposal's content, citing both messages; a declined
  proposal stores nothing (an assistant's words are never evidence by themselves);
* a correction and a request to forget are collected for l1.py, which finds what they
  refer to (in this batch or among live records) — a forget request itself stores nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from apps.pipeline.rules.corrections import (
    COMPLAINT_RE,
    POINTS_BACK_RE,
    Correction,
    forget_matches,
    forget_subject,
    given_up,
    given_up_following,
    joined_pauses,
    lead_only,
    move_done,
    parse_correction,
    self_corrected,
    subject_words,
    then_and_now,
)
from apps.pipeline.rules.extract import (
    ACCEPT_RE,
    ACK_LEAD_RE,
    ANAPHORA_RE,
    ASKING_CLAUSE_RE,
    BACK_TO_USUAL_RE,
    DECLINE_RE,
    LASTING_RE,
    NAMED_DECLINE_RE,
    QUESTION_RE,
    REQUEST_RE,
    RULES_HEADER_RE,
    RULES_INTRO_RE,
    STRONG_RE,
    Candidate,
    candidate_for,
    classify,
    decline_remainder,
    extract_from_message,
    mentions,
    names_offered,
    one_off,
    proposal_of,
    refusal_remainder,
    refused_name,
)
from apps.pipeline.rules.script import Script, simplified
from apps.pipeline.rules.text import (
    CJK_SPACE,
    LIST_ITEM_SEP,
    LOWER_STOP_RE,
    REPORTED_INJECTION_RE,
    WORD_RE,
    content_tokens,
    is_chinese,
    naming_words,
    quality_gate,
    sentences,
    speaker_of,
    tokens,
    tool_key,
    value_key,
    values,
    values_at,
    without_injected_blocks,
)

FOLLOW_UP_MAX_CHARS = 80  # an anaphoric follow-up is short; a long message says its own thing
ACCEPT_MAX_CHARS = 200
PICK_MAX_CHARS = 60  # a pick among what was offered is said in a line ("Jurassic 那个追逐的好"), not in a paragraph of news
REFERENT_MAX_CHARS = 360


@dataclass
class Said:
    """A correction or a forget request, with where it was said."""

    message: dict
    correction: Correction | None = None
    forget: str | None = None  # the subject; "" = what was just said
    previous: dict | None = None  # the user's previous message in the session (forget "that")
    position: int = 0  # the sentence's index in its message
    matched: bool = False  # a forget request that found units of this batch
    by_category: bool = False
    besides: bool = False  # read besides the sentence's own reading (a move done): nothing of its own when it matches nothing
    reason_before: bool = False  # the old value was complained of in the sentence before: that sentence is no record to rewrite


@dataclass
class BatchAnalysis:
    candidates: list[Candidate] = field(default_factory=list)
    corrections: list[Said] = field(default_factory=list)
    forgets: list[Said] = field(default_factory=list)
    removed: list[Candidate] = field(default_factory=list)  # replaced by a merged unit
    speakers: set[str] = field(default_factory=set)  # turn labels of logged conversations between people
    order: dict[int, int] = field(default_factory=dict)  # id(message) → its index in the batch
    script: Script | None = None  # the user's Traditional characters, when the batch was read in Simplified
    # Live records found by a correction's words (l1._records_sharing_words), asked once per batch: the
    # in-batch check and the correction of stored records look for the same ones.
    records_by_words: dict[tuple[str, str, str], set[str]] = field(default_factory=dict)

    def restore(self, text: str) -> str:
        """A text read in Simplified, in the characters the user wrote."""
        return self.script.restore(text) if self.script else text

    def said_before(self, candidate: Candidate, said: Said) -> bool:
        """Whether the candidate was said before the correction/forget request: in an earlier
        message, or earlier in the same message ("… starts at 10. No wait, at 9:30.")."""
        mine, theirs = self.order.get(id(candidate.message), -1), self.order.get(id(said.message), -1)
        return mine < theirs or (mine == theirs and candidate.position < said.position)


PROJECT_NAME_MIN_CHARS = 4  # "api", "app" or "src" are words, not names


def project_names(profile) -> set[str]:
    """The folder names of the profile's known projects ("ledger-api"), lower case."""
    names = set()
    for root in getattr(profile, "known_projects", None) or []:
        name = re.split(r"[\\/]", str(root).rstrip("/\\"))[-1].casefold()
        if len(name) >= PROJECT_NAME_MIN_CHARS:
            names.add(name)
    return names


def turn_speakers(rows: list[dict]) -> set[str]:
    """Labels that open at least two messages of one session ("Nadia: …", "Tom: …"): a log
    of people talking. A label seen once ("Retries: max 5") is part of what was said."""
    seen: dict[tuple[str, str], int] = {}
    for row in rows:
        name, _ = speaker_of(str(row.get("content") or ""))
        if name:
            key = (str(row.get("sessionKey") or ""), name)
            seen[key] = seen.get(key, 0) + 1
    return {name for (_session, name), count in seen.items() if count >= 2}


def analyse(ctx, messages: list[dict], background: list[dict], mode: str) -> BatchAnalysis:
    # Traditional Chinese is read in Simplified, the script of the rules, and every text handed
    # on is written back in the user's own characters (script.py).
    messages = [_without_command_line(m) for m in messages]
    script = Script([str(m.get("content") or "") for m in [*background, *messages]])
    if script:
        background, messages = [_read_simplified(m) for m in background], [_read_simplified(m) for m in messages]
    out = _analyse(ctx, messages, background, mode)
    if script:
        _write_back(out, script)
        out.script = script
    return out


def _replies(messages: list[dict]) -> dict[int, dict]:
    """Each user message's reply: the assistant message that comes next in its session, when it
    is in the batch (`move_done` reads whether it reports a requested move done)."""
    out: dict[int, dict] = {}
    waiting: dict[str, dict] = {}
    for message in messages:
        session = str(message.get("sessionKey") or "")
        if message.get("role") == "assistant":
            if session in waiting:
                out[id(waiting.pop(session))] = message
        else:
            waiting[session] = message
    return out


_COMMAND_LINE_RE = re.compile(r"^\s*/[A-Za-z][\w-]*[^\n]*\n+(?=\s*\S)")


def _without_command_line(message: dict) -> dict:
    """A user message that opens with a /command and goes on to say something ("/commit\noh and a
    general thing, … ruff format and ruff check before any commit"): the command is not read,
    what follows is (a message that is only a command stays one, and the gate drops it)."""
    content = str(message.get("content") or "")
    if message.get("role") != "user" or not content.lstrip().startswith("/"):
        return message
    rest = _COMMAND_LINE_RE.sub("", content, count=1)
    return message if rest == content else {**message, "content": rest}


def _read_simplified(message: dict) -> dict:
    content = str(message.get("content") or "")
    read = simplified(content)
    return message if read == content else {**message, "content": read}


def _write_back(out: BatchAnalysis, script: Script) -> None:
    for candidate in [*out.candidates, *out.removed]:
        candidate.content = script.restore(candidate.content)
    for said in out.corrections:
        c = said.correction
        if c is not None:
            c.clause, c.old, c.new, c.slot, c.context = (script.restore(t) for t in (c.clause, c.old, c.new, c.slot, c.context))
    for said in out.forgets:
        if said.forget:
            said.forget = script.restore(said.forget)


def _analyse(ctx, messages: list[dict], background: list[dict], mode: str) -> BatchAnalysis:
    out = BatchAnalysis(speakers=turn_speakers([*background, *messages]), order={id(m): i for i, m in enumerate(messages)})
    names = project_names(ctx.profile) if mode == "code" else set()
    last_user: dict[str, tuple[dict, list[Candidate]]] = {}
    last_assistant: dict[str, dict] = {}
    one_offs: dict[str, set[str]] = {}  # session → naming words of the one-off request the next reply answers
    user_words: dict[str, set[str]] = {}  # session → lower-case words the user has said (see _names_offered)
    answered_once: dict[int, set[str]] = {}  # assistant messages that answer a request made once → the request's naming words
    for row in background:  # context only: what a follow-up at the start of the batch may refer to
        if quality_gate(row.get("content")):
            continue
        _said_by_user(row, user_words)
        _remember(row, last_user, last_assistant, [], out.speakers)
    replies = _replies(messages)
    for message in messages:
        reason = quality_gate(message.get("content"))
        if reason:
            ctx.add("messagesGated")
            ctx.add(f"gated.{reason}")
            continue
        session = str(message.get("sessionKey") or "")
        content = without_injected_blocks(str(message["content"]))
        speaker, _ = speaker_of(content)
        speaker = speaker if speaker in out.speakers else ""
        if message.get("role") == "assistant" and not speaker:
            told = [s for s in sentences(content) if not REPORTED_INJECTION_RE.search(s)]
            found = extract_from_message(message, mode=mode, sentences=told, speakers=out.speakers)
            asked = one_offs.pop(session, set())
            found = _without_echo(found, asked)
            if asked:
                answered_once[id(message)] = asked
            out.candidates.extend(found)
            last_assistant[session] = message
            continue
        parts = joined_headlines(joined_exclamations(joined_pauses(sentences(speaker_of(content)[1] if speaker else content, said_by_user=True))))
        # A bare scope ("就这一个文件", "just this once") makes the sentence before it the request.
        asked_once = [text for i, p in enumerate(parts) if one_off(p)
                      for text in ([parts[i - 1], p] if i and len(naming_words(p)) <= 2 else [p])]
        if asked_once:
            one_offs[session] = naming_words(" ".join(asked_once))
        else:
            one_offs.pop(session, None)
        # "…bomb squad in. ...actually don't keep that.": a request to forget is read before a pause
        # can make it look like a correction of what came before it.
        subjects = [forget_subject(p) for p in parts]
        asked_to_forget = next(((i, s) for i, s in enumerate(subjects) if s is not None), None)
        # "保留一年……不对，三年": the sentence as corrected, said as a correction of the old value.
        self_fixes = {i: fix for i, fix in ((i, self_corrected(p)) for i, p in enumerate(parts)) if fix is not None}
        parts = [self_fixes[i].clause if i in self_fixes else p for i, p in enumerate(parts)]
        parts = [_without_items_once(p) for p in parts]
        favour = _told_for_a_favour(parts)
        numbered = [(i, p) for i, p in enumerate(parts) if not _asked_once_with_it(parts, i + 1) and not _one_off_within(p)
                    and not _how_to_write_it_once(parts, i) and not _more_of_the_request_once(parts, i) and i not in favour]
        if asked_to_forget is not None:
            position, subject = asked_to_forget
            previous = last_user.get(session, (None, []))[0]
            # Written without punctuation ("…最近老打电话找我借钱 烦死了……算了 这个别记 跟代码没关系 删掉"), a
            # space between Chinese words and an ellipsis ("…", "...") end a clause too.
            clauses = re.split(r"[，,;；]|…+|\.{3,}|" + CJK_SPACE, parts[position])
            asked_in = next((i for i in range(len(clauses)) if forget_subject(clauses[i]) is not None), 0)
            told_here = " ".join(parts[:position])
            # "…I've applied for my old job back at Ashby Voss in the city. nobody here knows yet. don't remember
            # that": sentences run together in lower case are said before the request too.
            told_before = " ".join([*clauses[:asked_in], *LOWER_STOP_RE.split(clauses[asked_in] if clauses else "")[:-1]])
            if not subject and (len(content_tokens(told_before)) >= 2
                                or (len(content_tokens(told_here)) >= 2 and not _TELLS_MORE_OF_IT_RE.search(told_here))
                                or len(naming_words(told_here)) >= MATTER_OF_ITS_OWN_WORDS):
                # "班上小宇家里出了点事，这个你别记了", "…我岳父前两年炒股亏了一大笔…。这些家里的事你别记着啊":
                # what was said before the request in this message, not the last message — unless
                # it went on about that ("I told my husband I'd think about it. Actually forget that"),
                # which a pronoun alone does not show when the message tells a matter at length ("There
                # are photos of Angus somewhere, my brother Ewan has …, so that's not an easy ask").
                previous = None
            out.forgets.append(Said(message=message, forget=subject, previous=previous, position=position))
            ctx.add("forgetRequests")
            if not subject and not (_ASIDE_OPENS_RE.match(parts[position]) and len(content_tokens(told_before)) >= 2):
                # "…. Forget that.": what it points at may be anywhere in the message
                _remember(message, last_user, last_assistant, [], out.speakers)
                continue
            if not subject:
                # "general thing: … table-driven tests. / oh and the reason I've ended up running all this is … eh
                # actually scrap that, don't keep that": an aside that tells its matter and takes it back in one
                # sentence; what the message said before the aside stands.
                numbered = [(i, p) for i, p in numbered if i < position]
            # "评审过了，就按 INCR 来。另外上次 Kevin 那个事你就当没听过": the request goes, and so does
            # every sentence about its subject; the rest of the message is said as usual.
            numbered = [(i, p) for i, p in numbered if subjects[i] is None
                        and not forget_matches(p, subject) and not (abs(i - position) == 1 and _says_more_of_the_request(p))]
            if subject and (told := _told_before_forgetting(parts[position], subject)):
                # "my grandson Alfie's started coming to the club with me …. his mum … is going through a divorce …
                # actually forget the divorce bit": in lower case, one sentence to the splitter; what it told before the
                # request, of other things than the subject, stands.
                numbered = sorted([*numbered, (position, told)])
        found: list[Candidate] = []
        # "Perfect." after the text written for a request made once ("write a text to my neighbour … this once")
        # takes the text, it accepts no proposal.
        offered_once = id(_pending_proposal(session, last_assistant)) in answered_once
        # "yes go with your seatmap script. and perfect timing actually, … the dome is 96 seats now": the proposal taken up
        # by name in the message's first sentence (written in lower case after a full stop); what the message goes on to
        # say is read as usual.
        taken = "" if offered_once else _taken_up_first(parts, session, last_assistant)
        accepted = None if offered_once else _accepted_proposal(message, [taken, *parts[1:]] if taken else parts, session, last_assistant, mode,
                                                                whole=not taken)
        if accepted is not None and taken:
            numbered = [(i, p) for i, p in ((i, p[len(taken):].strip() if i == 0 else p) for i, p in numbered) if p]
        if offered_once:
            # "Jurassic 那个追逐的好，有车有人仔 Ethan 肯定喜欢": a pick among what was offered for a request made once (a
            # gift for a party), naming what the request was about, belongs to that request.
            pending = _pending_proposal(session, last_assistant) or {}
            offered, asked = _names_offered(pending, user_words.get(session, set())), answered_once[id(pending)]
            numbered = [(i, p) for i, p in numbered if not (len(p) <= PICK_MAX_CHARS and tokens(p) & offered and naming_words(p) & asked)]
        if accepted is not None:
            found.append(accepted)
            ctx.add("proposalsAccepted")
            numbered = [(i, p) for i, p in numbered if i != 0 or p != parts[0]]
        elif (proposal_message := _declined_proposal(parts, session, last_assistant)) is not None:
            ctx.add("proposalsDeclined")
            rest = refusal_remainder(parts[0])
            if rest and NAMED_DECLINE_RE.search(rest):
                rest = refusal_remainder(rest) or ""  # "no no no，surge pricing 不要。": the rest refuses it by name again
            if rest is None and (named := refused_name(parts[0])) and names_offered(str(proposal_message.get("content") or ""), named):
                # "不要 mobile app 啦，没人会为了 go kart 去 download 一个 app 的。扫 QR 看 web 就够了": the proposal refused
                # by its name; the sentence is the refusal and its reason, what follows it is said as usual.
                rest = "".join(re.split(r"(?<=[.!?。！？])", parts[0].strip(), maxsplit=1)[1:]).strip()
            if rest is not None:
                # "不要，团队都熟 MyBatis。": the "no" answers the proposal and is no rule of
                # its own; what follows it ("No, we use pnpm here") is read as said alone.
                numbered = ([(0, rest)] if rest and numbered[:1] == [(0, parts[0])] else []) + [(i, p) for i, p in numbered if i != 0]
            # "no. Ekos is a huge GUI …", "no Temporal，太重了": a sentence about what was just
            # declined is the refusal's reason, not a fact to keep; the others stand ("no, we've
            # been to Nara before" is the user's own news).
            declined = _names_offered(proposal_message, user_words.get(session, set()))
            if not DECLINE_RE.search(parts[0]) and (named := declined & tokens(re.split(r"[，,。.!！]", parts[0])[0])):
                # "ClickHouse 不上，…。PG 分区 + 每天聚合一次就够了": of two proposals, the one the
                # refusal names is declined; the other, said next, is the user's choice.
                declined = named
            if rest and decline_remainder(parts[0]) is not None and (first := _first_word(rest)) and naming_words(first) \
                    and _proposed_thing(str(proposal_message.get("content") or ""), first) and first not in user_words.get(session, set()):
                # "god no, a power hammer is thousands and I live in a terrace": after the no, a sentence that opens
                # with what was proposed (a common noun, which _names_offered does not take) is the refusal's reason.
                declined = declined | {first}
            numbered = [(i, kept) for i, p in numbered if (kept := _without_sentences_on(p, declined))]
            refused = refused_name(parts[0])
            if refused:
                # "耳机那个不行不行。我们队里好多老姐妹耳朵本来就背，戴个耳机又要充电…": after a refusal that
                # names the proposal, what the message goes on to say about it is the refusal's reason.
                numbered = [(i, p) for i, p in numbered if i == 0 or not mentions(p, refused)]
        if (offered := _pending_proposal(session, last_assistant)) is not None:
            # "清车确认要做 就照你说的 二维码贴最后一排 … 人脸识别不要 都是未成年人 …": one proposal taken, another refused by
            # its name further on; that sentence is the refusal and its reason, not a rule.
            offer = str(offered.get("content") or "")
            numbered = [(i, kept) for i, p in numbered if (kept := _before_refusal(p, offer, whole=i > 0))]
        reply = replies.get(id(message))
        moved = move_done(parts, str(reply.get("content") or "")) if reply is not None else None
        left = {i for i, _ in numbered}
        parts_left = [p if i in left else "" for i, p in enumerate(parts)]  # what a given-up sentence may take as holding now
        plain: list[tuple[int, str]] = []
        told_after: set[int] = set()  # sentences a given-up sentence took as what holds now
        for index, part in numbered:
            if index in told_after:
                # "纳木错不去了 / 然后日子也变了 … 往后推两个礼拜 8月8号出发": what holds now after something given up
                # may change a value of its own.
                also = _change_in(part, mode)
                # ("他用 Jyutping, 所以以后 romanization 你也 switch 成 Jyutping 吧": a name said as the new one.)
                if also is not None and not also.weak and (values(also.new or also.clause) or also.new):
                    out.corrections.append(Said(message=message, correction=also, position=index, besides=True))
                    ctx.add("corrections")
                continue
            asked = _asked(part)
            ended = None if index in self_fixes or asked else given_up(parts_left, index)
            if ended is not None and _said_whole_next(parts_left, index, mode):
                # "update: food database 换掉了. USDA 那个我们 drop 了, 改用 MyFCD …": the headline announces the change
                # the next sentence says whole, the old and the new one named; it is no change of its own.
                continue
            if ended is not None:
                told_after.update(range(index + 1, index + 1 + given_up_following(parts_left, index)))
                if LIST_ITEM_SEP in part:
                    # "更新几件事：阿芳回老家待产了，…; 帮小龙开个账号…; 还有，姐夫在谈松山湖那边一个铺位": the other
                    # items of the list are said as usual.
                    plain.extend((index, item) for item in part.split(LIST_ITEM_SEP) if ended.old.casefold() not in item.casefold())
            # "for tonight only: give it 300s instead of the usual 180" changes nothing that lasts.
            changed = None if index in self_fixes or ended is not None else _change_in(part, mode)
            # "上次我说用的是黑陶泥，其实是我搞错了，…": what the clause of before names is the old value,
            # unless the change itself said one.
            before_now = None if index in self_fixes or ended is not None or asked or (changed is not None and changed.old) \
                else then_and_now(part)
            correction = self_fixes.get(index) or ended or before_now or changed
            if correction is not None and correction is changed and index + 1 < len(parts) and parts_left[index + 1]:
                told = _told_in_the_next_sentence(correction, part, parts[index + 1], mode)
                if told is not None:
                    correction = told
                    told_after.add(index + 1)
            if correction is not None and index and not correction.context and POINTS_BACK_RE.match(correction.clause):
                correction.context = parts[index - 1]
            if correction is not None and not correction.context and not correction.old:
                # "markup 要改. 计了一下 …, 15 巴仙根本不够 cover. 从今天开始改成 18%": what is changed was announced
                # a sentence or two before the value.
                # What was said between the announcement and the value is about it too ("同步的时间要换. 凌晨那个点刚好
                # 撞到 NUC 的整机备份, …. 改到早上 7 点跑").
                announced = next((k for k in range(index - 1, max(0, index - 2) - 1, -1) if _CHANGE_ANNOUNCED_RE.match(parts[k])), None)
                correction.context = " ".join(parts[announced:index]) if announced is not None else ""
            complained = _value_complained_of(parts[index - 1], correction) if correction is not None and index else ""
            if complained and correction is not None:
                correction.old = complained
            elif correction is not None and index and (ended_name := _ended_before(parts[index - 1], correction)):
                # "bad news. Pennine Lofts have gone into administration, …" + "we've gone with Dunmore Builds instead": the
                # one that ended is the one replaced, and the news of its end is the change's history, no record of its own.
                correction.old = ended_name
                plain = [(i, p) for i, p in plain if i != index - 1]
            elif correction is not None and index + 1 < len(parts) and parts_left[index + 1] \
                    and (named := _name_complained_of_next(parts[index + 1], correction)):
                # "店名改了, 现在叫 半格 Studio" + "原来那个 Silver Halide 太难念, 买家老是拼错": the old name, complained of
                # after the change, is the one replaced; the complaint is the change's history, no record of its own.
                correction.old = named
                told_after.add(index + 1)
            if correction is not None:
                # "几件事 update 一下：- 药水供应商换了送货日，所以 C-41 batch 改成每周四 - 然后我之前讲错了…scanner
                # 不是 Frontier 啦，是 Noritsu": a list of changes is one unit, but each item changes its own record.
                items = [] if index in self_fixes or ended is not None or one_off(part) or LIST_ITEM_SEP not in part \
                    else [c for c in (_change_in(item, mode) for item in part.split(LIST_ITEM_SEP)) if c]
                if not items and not (index in self_fixes or ended is not None) and correction.old:
                    # "开工从11月3号挪到11月10号，工期也从60天拉长到75天": each clause moves a value of its own.
                    items = [c for c in (_change_in(clause, mode) for clause in re.split(r"[，,;；]", part)) if c and c.old and c.new]
                if len(items) < 2 and not (index in self_fixes or ended is not None):
                    items = _changes_run_together(part, mode)
                for each in items if len(items) >= 2 else [correction]:
                    out.corrections.append(Said(message=message, correction=each, position=index, reason_before=bool(complained)))
                    ctx.add("corrections")
            else:
                plain.append((index, part))
        if moved is not None and not _taken_up_already(out.corrections, message, moved[1]):
            # "我想把 ORM 换掉。朋友推荐 Drizzle，…。帮我 migrate 过去" / "换好了：": the move done is one more change
            # the message makes; its sentences are read as they were.
            out.corrections.append(Said(message=message, correction=moved[1], position=moved[0], besides=True))
            ctx.add("corrections")
        if plain and _is_follow_up(plain[0][1], content) and session in last_user:
            merged = _merge_follow_up(message, plain[0][1], last_user[session], mode)
            if merged is not None:
                out.removed.extend(c for c in last_user[session][1] if c in out.candidates)
                out.candidates = [c for c in out.candidates if c not in last_user[session][1]]
                found.append(merged)
                plain = plain[1:]
                ctx.add("followUpsMerged")
        found.extend(extract_from_message(message, mode=mode, sentences=[p for _, p in plain], speakers=out.speakers,
                                          positions=[i for i, _ in plain], project_names=names))
        out.candidates.extend(found)
        _said_by_user(message, user_words)
        _remember(message, last_user, last_assistant, found, out.speakers)
    return out


# A change announced before it is told ("update：换教练了！", "big news，换拍了！", "还有 training 时间改了。",
# "工作室课表大调整！", "quick update: we switched gyms!"): the announcement says which slot changed,
# the next sentence what it is now; alone it is no memory, and the next one lacks its subject.
_NEWS_LEAD = (r"(?:(?:update|big news|news|big change|quick update|heads up|btw|oh and|and|also|(?:second|another|other|one more|next|last) thing"
              r"|好消息|坏消息|还有|另外|对了|然后)\s*[：:，,！!—-]*\s*)*"
              r"(?:还有个?|有个|一个)?(?:大|小)?(?:变化|变动|更新|调整|消息)?\s*[：:，,！!]?\s*")
HEADLINE_RE = re.compile(
    _NEWS_LEAD + r"(?:(?:我|我们)?(?:又)?换(?:[^，,。！!？?：:]{1,6}?)了|(?:[^，,。！!？?：:]{1,12}?)(?:又|也)?(?:换了|改了|变了|调整了|大调整|有变(?:化)?了?)"
    r"|(?:(?:we|i)(?:'ve| have)?\s+)?(?:changed|switched|swapped)\s+(?:[a-z]+(?:\s[a-z]+)?)"
    # "grading 日期 changed！", "and the grace thing has changed too."
    r"|(?:the\s+)?(?:[a-zà-ÿ\u4e00-\u9fff]+(?:\s[a-zà-ÿ\u4e00-\u9fff]+)?)\s+(?:has\s+|have\s+)?changed(?:\s+(?:too|as well|again))?"
    # "Change of plan. TAP cancelled our flight …": the plan changed, the next sentence says how.
    r"|change of plans?|(?:the\s+)?plans?\s+(?:have|has)\s+changed|计划有变|计划变了"
    # "guest list 终于 settle 了！！": decided at last, the next sentence says what.
    r"|(?:[^，,。！!？?：:]{1,12}?)\s*(?:终于|总算)\s*(?:定了|定下来了|敲定了|确定了|settle\s?了|settled|搞定了))"
    r"\s*[！!。.~～：:]*\s*$", re.IGNORECASE)
HEADLINE_MAX_CHARS = 40


# A short exclamation ("出分了！！", "641！！", "PASSED!!! 2-dan ✅✅", "今年新坑: paragliding 滑翔伞!!") is said of what the
# next sentence tells: alone it is dropped as too short, and the news with it.
# "BRONZE!!! 🥉"; "手术做完了！" (a few words of news said done, before how it went; not "然后计划有变：Yuki 下个月跳槽去漕河泾了！",
# news of its own).
_EXCLAIMED_RE = re.compile(r"(?:[!！]{2,}\s*[^\w\s]*|[✅🎉🙌💪😭😤🥇🥈🥉🏆]+)\s*$|^[\u4e00-\u9fff]{1,8}了[!！]\s*$")
EXCLAMATION_MAX_CHARS = 24


def joined_exclamations(parts: list[str]) -> list[str]:
    """Each short exclamation joined to the sentence after it."""
    out: list[str] = []
    for part in parts:
        # (Not to a request: "今天终于不扶板游完了25米！！！" is news of its own before "…你帮我写段朋友圈吧，就这一次".)
        if out and len(out[-1]) <= EXCLAMATION_MAX_CHARS and _EXCLAIMED_RE.search(out[-1]) and not (one_off(part) or _asked(part)):
            head = out.pop()
            out.append(f"{head.rstrip()} {part.lstrip()}")
        else:
            out.append(part)
    return out


def joined_headlines(parts: list[str]) -> list[str]:
    """Each announcement of a change joined to the sentence after it, which tells the change."""
    out: list[str] = []
    for part in parts:
        if out and _headline(out[-1]):
            head = out.pop()
            out.append(head.rstrip() + ("" if is_chinese(head) else " ") + part.lstrip())
        else:
            out.append(part)
    return out


def _headline(part: str) -> bool:
    return len(part) <= HEADLINE_MAX_CHARS and not values(part) and bool(HEADLINE_RE.match(part.strip()))


# What a sentence says more of the last message about: "I told my husband I'd think about it".
# Naming words of a message's own matter (the going-on above has 4; a new matter told at length 13).
MATTER_OF_ITS_OWN_WORDS = 8
# A sentence that opens an aside: what it goes on to say is another matter than the sentences before.
# ("and tbh I might not be around forever either, … actually forget I said that", "(bit of background on why …: I was made
# redundant … actually scrap that, … don't keep it anywhere)": an aside of its own too.)
_ASIDE_OPENS_RE = re.compile(r"\s*(?:[(（]|(?:oh,?\s+and|and also|also|btw|by the way|p\.?s\.?|(?:and\s+)?(?:tbh|to be honest|honestly))\b|另外|对了|还有|顺便)",
                             re.IGNORECASE)
_TELLS_MORE_OF_IT_RE = re.compile(r"\b(?:it|that|this|those)\b|这个|那个|这件事|那件事", re.IGNORECASE)
# "平时回复不用这样哈": the request's way, pointed back at.
_THIS_WAY_RE = re.compile(r"这样|这么|那样|\blike (?:this|that)\b|\bthat way\b", re.IGNORECASE)


# The request's object is what was just said: "can you just dump that into …", "pls put those in a
# csv", "just dump it to a csv" (an output made of it).
_ASKS_FOR_THAT_RE = re.compile(
    r"^(?:(?:ok|okay|so|and|also)[,，]?\s+)?(?:(?:can|could|would) you\s+|pls\s+|please\s+)?(?:just\s+)?"
    r"(?:[a-z]+\s+(?:that|those|them)\b|(?:dump|export|write|put|save|print|send|format|render|paste)\s+it\b)", re.IGNORECASE)
# "就这一次，不用做成功能，也别往仓库里加任何东西", "don't build an endpoint or anything": what a request for
# once is not to become, said after it.
_NOT_A_FEATURE_RE = re.compile(r"(?:不用|别|不要)(?:做成|做)(?:后台)?功能|(?:也)?(?:别|不要)(?:往|在)?(?:仓库|repo)里?(?:加|放|提交)任何东西|(?:也)?(?:别|不要)提交任何东西"
                               r"|\b(?:don'?t|do not) (?:build|make|add) (?:an? |any )?(?:page|endpoint|feature|command)s?(?: (?:or anything|for it))?\b"
                               r"|\b(?:don'?t|do not) (?:turn|make) (?:it|this|that) into (?:an? |any )?(?:\w+ )?(?:page|endpoint|feature|command)s?\b"
                               r"|\b(?:don'?t|do not) (?:add|commit|put|push|check in) anything (?:to|in|into) the (?:repo|repository|codebase)\b", re.IGNORECASE)
# An occasion that is now or next ("this weekend", "tonight", "这周末"): what a request for once is for.
_OCCASION_NOW_RE = re.compile(r"\b(?:this|next) (?:weekend|week|morning|afternoon|evening|(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b"
                              r"|\b(?:today|tonight|tomorrow)\b|今天|今晚|明天|这周末|这个周末|本周末|这周[一二三四五六日天]", re.IGNORECASE)
# An output asked for once: a chart, a table, a file.
_AN_OUTPUT_RE = re.compile(r"[一个张份]\s*(?:图|表格?|清单|截图)|写(?:一|个)\s*[份封篇条段]?(?=[？?。！!，,\s]|$)|\b(?:a|the)\s+(?:chart|graph|table|list|csv|spreadsheet|pdf|plot)\b|\b(?:csv|excel|pdf)\b", re.IGNORECASE)
# Who wants the output and what for: "the accountant wants …", "老板娘想给阿姨们发红包".
# ("她儿子…乔迁新居，想请我写一副对联", "月底我爸要给教练算提成").
_SOMEONE_WANTS_RE = re.compile(r"\b(?:wants?|needs?|asked for|would like|'d like)\b|(?:想|要)(?:请|给|让|把|看|拿|算|发)|(?<![我想])要我|要求|需要", re.IGNORECASE)
# "a list of every peroxide former" asked for tomorrow is no habit: "every" lasts only as every
# time, day, run … (LASTING_RE reads any "every").
_EVERY_THING_RE = re.compile(r"\bevery (?!(?:time|day|week|month|morning|evening|night|run|build|release|pr|commit|deploy|session)\b)",
                             re.IGNORECASE)


def _asked_once_with_it(parts: list[str], index: int) -> bool:
    """Whether parts[index] asks for something once and points back at the sentence before it
    ("the sailing club want last year's high waters for the regatta weekend. can you just dump
    that into a markdown file for me, this once"; "这次你帮我整理成一个 checklist。平时回复不用这样哈，
    就这一次"): that sentence is what is asked for, for the occasion, and is no lasting fact
    either (unless it says it lasts)."""
    if not 0 < index < len(parts):
        return False
    if index + 1 < len(parts) and len(naming_words(BACK_TO_USUAL_RE.sub("", parts[index + 1]))) <= 2 and one_off(parts[index + 1]) \
            and not one_off(parts[index]):
        # "单位要我交个请假条，…。帮我写一份？就这一次，以后不用": the request, then its scope said alone.
        return _points_back_once(parts[index - 1], f"{parts[index]} {parts[index + 1]}")
    return _points_back_once(parts[index - 1], parts[index])


# How the thing asked for should be written ("写得别太尬", "语气温柔一点", "keep it short").
_HOW_TO_WRITE_RE = re.compile(r"^(?:(?:and|also|oh and)\s+)?(?:(?:keep|make) it (?:short|shorter|brief|simple|casual|light|friendly|formal|polite|warm|funny"
                              r"|under|to|sound)|don't make it|write it (?:in|like|as)|word it)\b"
                              r"|^(?:还有|另外)?[，,]?\s*(?:写得|别写得|不要写得|语气|口吻|措辞|字数|别太|不要太|短一点|简短)", re.IGNORECASE)


def _how_to_write_it_once(parts: list[str], index: int) -> bool:
    """Whether parts[index] says how to write what the sentence before it asked for once
    ("就这一次哈，帮我写条朋友圈，…。写得别太尬，我平时朋友圈很少发东西"): it is part of that request."""
    return index > 0 and one_off(parts[index - 1]) and bool(_HOW_TO_WRITE_RE.search(parts[index].strip())) \
        and not LASTING_RE.search(parts[index])


def _more_of_the_request_once(parts: list[str], index: int) -> bool:
    """Whether parts[index] goes on with the request for once just made, and says once again that it is for once ("just
    this once, can you knock out folder labels for the come-and-sing Messiah in december? 40 folders, … on Avery L7160
    sheets. don't put it in the app, it's a one-time job"): its details are the request's, nothing to keep."""
    if not 0 < index < len(parts) or not one_off(parts[index]) or LASTING_RE.search(parts[index]):
        return False
    asked = parts[index - 1]
    return one_off(asked) and any(ASKING_CLAUSE_RE.search(c) or REQUEST_RE.search(c) for c in re.split(r"(?<=[，,;；])\s*", asked)) \
        and bool(naming_words(parts[index]) & naming_words(asked))


def _one_off_within(part: str) -> bool:
    """The same inside one sentence of lower-case writing ("PI wants a list of every peroxide
    former open more than 12 months, for the safety meeting. just dump it to a csv for me this
    time"): what it asks for opens the sentence, the request follows, and what comes after the
    request says nothing that lasts ("… it comes off on Monday. do NOT turn it into a notices
    feature")."""
    pieces = LOWER_STOP_RE.split(part)
    for i in range(1, len(pieces)):
        if one_off(pieces[i]):
            after = _EVERY_THING_RE.sub("", _NOT_A_FEATURE_RE.sub("", " ".join(pieces[i + 1:])))
            return not LASTING_RE.search(after) and _points_back_once(" ".join(pieces[:i]), pieces[i])
    return False


# A favour asked for once before it is told ("can you do me a favour, just this once. I've been roped into the reply
# from the lassies at the club Burns supper …"; "帮我个忙，就这一次：…").
# Or something written for the occasion, told after the request ("just this once 帮我写封日文 email。我下个月去 Osaka 出差，想去…").
_FAVOUR_RE = re.compile(r"\bdo me a fav(?:ou)?r\b|\bhelp me out\b|帮(?:我)?(?:个|一个)忙"
                        # "帮我把 bio 翻成英文，…\n中文：…": a text to translate, pasted after the request.
                        r"|把[^，,。！!？?]{1,16}?翻(?:译)?成|\btranslate\b"
                        r"|写(?:一)?[封个份段条篇][^，,。！!？?]{0,8}?(?:email|e-mail|邮件|信|消息|短信|微信|文案|海报|通知)"
                        r"|\b(?:write|draft|do)\s+(?:me\s+)?(?:a|an)\s+(?:[\w-]+\s+){0,3}?(?:email|message|msg|text|letter|note|poster|toast|speech|card|poem|haiku|verse|caption|label|blurb|notice|flyer|invitation|invite|bio)\b", re.IGNORECASE)


def _told_for_a_favour(parts: list[str]) -> set[int]:
    """The sentences that tell what a favour asked for once is: after the request, up to an aside or a
    sentence that says it lasts."""
    out: set[int] = set()
    for i, part in enumerate(parts):
        if not one_off(part):
            continue
        if _FAVOUR_RE.search(part):
            for k in range(i + 1, len(parts)):
                if _ASIDE_OPENS_RE.match(parts[k]) or LASTING_RE.search(parts[k]):
                    break
                out.add(k)
        elif (any(ASKING_CLAUSE_RE.search(c) for c in re.split(r"[，,;；:：.。]\s*", part)) or part.rstrip().endswith(("?", "？"))) and i + 1 < len(parts) \
                and (_WANTS_IT_FOR_RE.search(parts[i + 1]) or _NOT_A_FEATURE_RE.search(parts[i + 1])) and not LASTING_RE.search(parts[i + 1]):
            # "just this once: can you pull a count of …? councillor Abara wants it for a ward meeting.", "… make a simple
            # chart? a Year 6 class … is visiting on friday …. don't add anything to the repo for it".
            out.add(i + 1)
    return out


# Who wants what was just asked for, pointing back at it ("councillor Abara wants it for a ward meeting", "主任开会要用这个").
_WANTS_IT_FOR_RE = re.compile(r"\b(?:wants?|needs?)\s+(?:it|this|that|them|these|those)\b|(?:要|想)(?:用|看)?(?:这个|这些|它)", re.IGNORECASE)


def _without_items_once(part: str) -> str:
    """A list without its items asked for once ("two things: the accountant wants last season's water use …
    just this once, don't build anything for it; before spring I need frost protection: … put it on the
    list"): the other items are said as usual."""
    items = part.split(LIST_ITEM_SEP)
    kept = [item for item in items if not (one_off(item) or _one_off_within(item))]
    return LIST_ITEM_SEP.join(kept) if kept and len(kept) < len(items) else part


def _points_back_once(before: str, request: str) -> bool:
    if not one_off(request) or LASTING_RE.search(_EVERY_THING_RE.sub("", before)) or STRONG_RE.search(before):
        return False
    if _ASKS_FOR_THAT_RE.search(request):
        return True
    if _SOMEONE_WANTS_RE.search(before) and (REQUEST_RE.search(request) or ASKING_CLAUSE_RE.search(request)) \
            and (len(naming_words(before) & naming_words(request)) >= 2 or _AN_OUTPUT_RE.search(request)):
        # "端午老板娘想给阿姨们发红包，按上个月完成的单数分档。就这一回哈，帮我把4月每个阿姨完成的单数拉出来":
        # what someone wants it for, said before the request for once that is about the same thing — or
        # made of it ("王站长想看看 3 号棚上周的温湿度曲线…。你帮我导一张图就行，就这一次").
        return True
    if _OCCASION_NOW_RE.search(before) and naming_words(before) & naming_words(request):
        # "Remembrance Sunday is this weekend (8th) and we ring half-muffled … just this once, stick a
        # notice … rung half-muffled on Sunday": the occasion of a request for once passes with it.
        return True
    if len(naming_words(_NOT_A_FEATURE_RE.sub("", BACK_TO_USUAL_RE.sub("", request)))) <= 1 \
            and any(ASKING_CLAUSE_RE.search(c) for c in re.split(r"(?<=[，,;；])", before)):
        # "帮我给教茶艺的林老师写一条感谢的微信，…。就这一次啊，以后这种我自己来": a bare scope after the request.
        return True
    # "平时回复不用这样哈，就这一次": a bare scope at the end, after words that point back.
    *rest, last = re.split(r"[，,;；]\s*", request)
    return bool(rest) and one_off(last) and len(naming_words(last)) <= 1 and bool(_THIS_WAY_RE.search(" ".join(rest)))


def _taken_up_already(corrections: list[Said], message: dict, moved: Correction) -> bool:
    """Whether a change read in the message already takes up the tool a move done names (and
    knows what it replaces when the move does: "迁到阿里云 ECS 吧" read alone does not say Railway)."""
    key = tool_key(moved.new)
    return any(tool_key(v) == key and (not moved.old or said.correction.old) for said in corrections
               if said.message is message and said.correction is not None for _, v in values(said.correction.new))


# A value complained of ("那个 14 天自动下架，好多人反馈太短了", "48 小时太长了", "£6 is too much"): the setting a
# change said next replaces.


_NAME_DROPPED_RE = re.compile(r"(?:决定|还是)?不(?:用|要|叫|选)了?\s*(?P<name>[A-Z][\w'-]+(?:\s[A-Z][\w'-]+)?)\s*(?:了|啦|吧|[，,。.!！\s]|$)")


def _before_refusal(part: str, offer: str, *, whole: bool) -> str:
    """`part` up to where it refuses by name something `offer` proposed ("… 这条以后就是规矩 人脸识别不要 都是未成年人
    …": the refusal and its reason run on after a space); the whole part when it refuses nothing. A first
    part that opens with the refusal is the declined proposal's, read before (`whole` False)."""
    for start in [0, *(m.end() for m in re.finditer(r"(?<=[\u4e00-\u9fff])\s+", part))]:
        if (start or whole) and (name := refused_name(part[start:])) and names_offered(offer, name):
            return part[:start].strip()
    return part


# A sentence that says only that something is to change or has changed ("markup 要改.", "the deposit needs to change.",
# "Interview's been moved.").
_CHANGE_ANNOUNCED_RE = re.compile(r"^\s*[^，,。.!！?？\d]{1,24}?\s*(?:要改|得改|要调整|要换|得换|改一下|调整一下)(?:了|一下)?(?:\s*[。.!！]|\s|$)"
                                  r"|^\s*(?:the\s+)?[\w' -]{1,30}?\s+(?:needs?|has)\s+to\s+change\s*(?:[.!]|$)"
                                  # "Interview's been moved.", "the match got postponed."
                                  r"|^\s*(?:the\s+|my\s+|our\s+)?[\w-]+(?:\s+[\w-]+){0,2}(?:'s|\s+has|\s+have|\s+got|\s+was|\s+is)\s+(?:been\s+)?"
                                  r"(?:moved|changed|rescheduled|postponed|pushed back|brought forward)\s*(?:[.!]|$)", re.IGNORECASE)


def _value_complained_of(before: str, correction: Correction) -> str:
    """The one value of the change's kind that the sentence before it complains of ("…48 小时太长了。" +
    "普通报修改成 24 小时。"), when the change names no old value itself; else ""."""
    if correction.old or correction.ended or correction.count:
        return ""
    dropped = _NAME_DROPPED_RE.search(before)
    if dropped and re.fullmatch(r"[A-Z][\w'-]+(?:\s[A-Z][\w'-]+)?", correction.new.strip()):
        return dropped.group("name")  # "最后决定不用 Chloe 啦 …" + "改成了 Hailey": the name given up is the old one
    if not COMPLAINT_RE.search(before):
        return ""
    kinds = {k for k, _ in values(correction.new)}
    new_keys = {value_key(v) for _, v in values(correction.new)}
    said: dict[str, str] = {}
    for at, kind, value in values_at(before):
        if kind in kinds and value_key(value) not in new_keys:
            # With the unit its kind counts ("14 天", not the "14" of "Next.js 14").
            unit = re.match(r"\s?" + re.escape(kind.partition(":")[2]), before[at + len(value):]) if ":" in kind else None
            said[value_key(value)] = value + (unit.group(0) if unit else "")
    return next(iter(said.values())) if len(said) == 1 else ""


# "原来那个 Silver Halide 太难念", "the old name, Kestrel Labs, was too close to a competitor's": a name said to be the one
# before, complained of.
_OLD_NAME_COMPLAINED_RE = re.compile(
    r"^\W*(?:原来|之前|以前|本来|旧的?)(?:那个|的|用的|叫的)?\s*(?P<name>[A-Za-z][\w'&.-]*(?:\s[A-Za-z][\w'&.-]*){0,3})\s*(?:太|不好|不太|很难|老是|总是|有点)"
    r"|^\W*the (?:old|previous|original) (?:name|one)\s*,?\s*(?P<name2>[A-Z][\w'&.-]*(?:\s[A-Z][\w'&.-]*){0,3})\s*,?\s*(?:was|is) (?:too|hard|not|a pain)",
    re.IGNORECASE)


def _name_complained_of_next(following: str, correction: Correction) -> str:
    """The name the sentence after a change complains of as the one before, when the change names a new name but not the old."""
    if correction.old or correction.ended or correction.count or not correction.new or values(correction.new):
        return ""
    m = _OLD_NAME_COMPLAINED_RE.search(following)
    name = (m.group("name") or m.group("name2")) if m else ""
    return name if name and name.casefold() not in correction.new.casefold() else ""


# A named thing said to have ended: a firm gone bust, an event called off ("Bali 那个 tournament cancel 了").
_ENDED_NAME_RE = re.compile(
    r"(?P<name>(?-i:[A-Z])[\w'&-]+(?:\s(?-i:[A-Z])[\w'&-]+){0,2})\s+(?:(?:have|has|had)\s+(?:gone into administration|gone bust|gone under|closed down"
    r"|shut down|folded|pulled out|been cancell?ed)|went (?:bust|under|into administration)|(?:closed|shut) down|folded|pulled out|(?:was|got|is) cancell?ed)\b"
    r"|(?P<name2>(?-i:[A-Z])[\w'-]*|[\u4e00-\u9fff]{2,6}?)\s*(?:那个|这个|那家|这家)?\s*(?:[A-Za-z]+\s*)?(?:cancel(?:led)?|取消|黄|倒闭|关门|停办)\s*了",
    re.IGNORECASE)


def _ended_before(before: str, correction: Correction) -> str:
    """The name the sentence before a change says has ended, when the change names a new one but not the old."""
    if correction.old or correction.ended or correction.count or not correction.new:
        return ""
    m = _ENDED_NAME_RE.search(before)
    return (m.group("name") or m.group("name2")) if m else ""


def _change_in(part: str, mode: str) -> Correction | None:
    """The change a sentence states ("for tonight only: give it 300s" changes nothing that lasts);
    asked for, it must be news said before the request or (in code) a setting the user tells the
    assistant to change."""
    if one_off(part):
        return None
    found = ((_news_before_question(part) or _requested_change(part, mode)) if _asked(part) else parse_correction(part)) \
        or _wanted_setting(part, mode)
    if found is not None and found.weak and (RULES_HEADER_RE.match(part) or RULES_INTRO_RE.search(part)):
        return None  # "定两个规矩: 以后改任何 checkout 相关的 code, 先用 Stripe test mode …": rules said, not a value changed
    return found


def _changes_run_together(part: str, mode: str) -> list[Correction]:
    """The changes of sentences run together in lower case, each of its own value ("forecast job needs to run at 04:45
    now. marketing moved the morning push to 6:15, and the model got slower …, it's ~35 min now": three values);
    [] unless there are two or more."""
    pieces = LOWER_STOP_RE.split(part)
    if len(pieces) < 2:
        return []
    out: list[Correction] = []
    for piece in pieces:
        clauses = [c for c in (_change_in(clause, mode) for clause in re.split(r"[，,;；]", piece)) if c and _says_a_new_value(c)]
        if len({k for c in clauses for k, _ in values(c.new or c.clause)[:1]}) < len(clauses):
            # "Ola's only in tuesdays and wednesdays now so that's when we roast, and the subscription run moves to Wednesdays
            # to match": one change of days said twice, not two changes.
            clauses = []
        for c in clauses:
            c.context = c.context or piece  # "it's ~35 min now" is of the model named earlier in its sentence
        whole = _change_in(piece, mode)
        # Each piece says its new value and what it is of: "it's now 3 May." after "the assessment got pushed back" is
        # the same change, and "she's not doing tuesdays and fridays anymore" says only what no longer holds.
        out.extend(clauses if len(clauses) >= 2 else [whole] if whole and _says_a_new_value(whole) and len(subject_words(whole)) >= 2 else [])
    return out if len(out) >= 2 else []


def _says_a_new_value(correction: Correction) -> bool:
    if correction.new:
        return True
    if _NO_LONGER_RE.search(correction.clause):
        return False  # "she's not doing tuesdays and fridays anymore": the values it says are the old ones
    olds = {value_key(v) for _, v in values(correction.old)}
    return any(value_key(v) not in olds for _, v in values(correction.clause))


_NO_LONGER_RE = re.compile(r"\b(?:not|n't)\b[^.;!?]*\bany ?more\b|\bno longer\b|不再|已经不", re.IGNORECASE)


def _told_in_the_next_sentence(correction: Correction, part: str, following: str, mode: str) -> Correction | None:
    """A correction said before its value ("I was wrong about the port. It's 5433 on staging.", "我之前
    说错了。我一直是 1:5:5 喂的"): the two sentences read as one, when the first is only the marker of
    a correction and the next one says a value. The first is what the change is about, not part of
    what holds now."""
    rest = lead_only(part)
    if rest is None or correction.old or correction.new or not values(following) or _asked(following):
        return None
    joined = _change_in(f"{part} {following}", mode)
    if joined is None or not values(joined.clause):
        return None
    if rest and joined.clause.startswith(rest):
        joined.clause = joined.clause[len(rest):].strip()
    joined.context = joined.context or part  # "…之前跟你说的喂养比例说错了": the words that say what it is about
    return joined


def _said_whole_next(parts: list[str], index: int, mode: str) -> bool:
    following = _change_in(parts[index + 1], mode) if index + 1 < len(parts) and parts[index + 1] else None
    return following is not None and bool(following.old and following.new)


def _asked(part: str) -> bool:
    return bool(QUESTION_RE.search(part) or (REQUEST_RE.search(part) and not STRONG_RE.search(part)))


def _requested_change(part: str, mode: str) -> Correction | None:
    """In code, a setting the user tells the assistant to change to a value ("你把那个任务的天数改成五天，
    页面上也跟着改"): the user decided it, the stored setting is superseded. A question is no such decision."""
    if mode != "code" or QUESTION_RE.search(part):
        return None
    found = parse_correction(part)
    return found if found is not None and not found.weak and values(found.new) else None


def _wanted_setting(part: str, mode: str) -> Correction | None:
    """In code, a setting someone wants at a value, told to the assistant ("Tomás (process lead) wants the low DO
    alarm at 1.2 mg/L"): decided, like a setting the user tells it to change."""
    wanted = _WANTED_AT_RE.search(part) if mode == "code" and not QUESTION_RE.search(part) else None
    if wanted is None or not values(wanted.group("new")):
        return None
    return Correction(clause=part.strip(), old="", new=wanted.group("new").strip())


_WANTED_AT_RE = re.compile(r"\b(?:wants?|would like|'d like)\s+(?:the|our|all)\s+[\w -]{2,40}?\s+(?:at|set to|to be|lowered to|raised to)\s+"
                           r"(?P<new>(?:[^,.;!?]|\.(?=\d))+)", re.IGNORECASE)


def _news_before_question(part: str) -> Correction | None:
    """"…came back on python 3.12 instead of 3.10 🎉 so we can drop the old stuff. prob need to
    bump ruff/mypy config too?": a question or request written in lower case after the news ends
    the same "sentence"; the change said before it still stands. So does a question in Chinese after a
    stop ("… club 改到 4 月 25 号. 那天大概几点出发比较好?")."""
    pieces = re.split(LOWER_STOP_RE.pattern + r"|(?<=[.!?。！？])\s*(?=[\u4e00-\u9fff])", part)
    if len(pieces) < 2:
        return None
    head = " ".join(pieces[:-1])
    return None if _asked(head) else parse_correction(head)


# "Please forget what I said about my ex. I'd rather not have that around.": a short sentence
# next to the request that only points back at it is the request said again.
_POINTS_AT_IT_RE = re.compile(r"\b(?:that|it|this|those)\b|这种话|这些话|这件事|那件事|这个|那个|这条|那条", re.IGNORECASE)
REQUEST_ECHO_MAX_WORDS = 8


def _told_before_forgetting(part: str, subject: str) -> str:
    """The sentences run together in lower case before a request to forget said in the same part, without those about
    its subject."""
    pieces = LOWER_STOP_RE.split(part)
    asked = next((i for i, piece in enumerate(pieces) if forget_subject(piece) is not None), 0)
    told = [*pieces[:asked], re.split(r"…+|\.{3,}|[—–]", pieces[asked])[0]]
    if not any(forget_matches(p, subject) for p in told):
        return ""  # the subject is none of what the part told ("don't keep that in your notes"): all of it goes
    return " ".join(p.strip() for p in pieces[:asked] if not forget_matches(p, subject)).strip()


def _says_more_of_the_request(sentence: str) -> bool:
    short = len(sentence.split()) <= REQUEST_ECHO_MAX_WORDS if not is_chinese(sentence) else len(sentence) <= 2 * REQUEST_ECHO_MAX_WORDS
    return short and bool(_POINTS_AT_IT_RE.search(sentence))


def _without_sentences_on(part: str, declined: set[str]) -> str:
    """The part without its sentences that open with a declined name (a part may hold several
    sentences: "Ekos is a huge GUI … for. obsctl stays headless") or say no to one ("I'm the only
    person who babysits that box and I'm not adding Redis …")."""
    if not declined:
        return part
    return " ".join(s for s in re.split(r"(?<=[.!?。！？])\s+", part)
                    if _first_word(s) not in declined and not any(_says_no_to(s, name) for name in declined)).strip()


def _says_no_to(sentence: str, name: str) -> bool:
    # ("Please don't suggest Twilio again" is a rule about the proposal, kept.)
    return re.search(rf"\b(?:not|never|won't|don't|no)\s+(?!(?:suggest|recommend|mention|bring|propose|offer)\w*)(?:[\w'-]+\s+){{0,2}}{re.escape(name)}\b",
                     sentence, re.IGNORECASE) is not None


def _first_word(sentence: str) -> str:
    """The sentence's first word, a decline word, a joining word and an article before it left out
    ("no Temporal，…" → "temporal", "nah, a SawStop costs more than the timber" → "sawstop", "而且 tape
    也不会真的把它治好" → "tape")."""
    rest = re.sub(r"^\W*(?:(?:no|nope|nah|不考虑|不需要|不要|不用|不必|别|算了)\b[\s,，.。!！]*)?(?:(?:and|plus|besides|also|而且|并且|况且|再说|再说了|何况)\b[\s,，]*)?"
                  r"(?:(?:a|an|the)\s+)?", "", sentence, flags=re.IGNORECASE)
    m = WORD_RE.match(rest)
    return m.group().lower() if m else ""


def _proposed_thing(proposal: str, word: str) -> bool:
    """Whether the proposal names `word` as a thing ("a small power hammer would save your arm"), not as a verb
    ("a smart sprinkler timer would water the beds")."""
    return re.search(rf"\b(?:a|an|the|your|some)\s+(?:[\w-]+\s+)?{re.escape(word)}\b", proposal, re.IGNORECASE) is not None


def _said_by_user(message: dict, user_words: dict[str, set[str]]) -> None:
    if message.get("role") == "user":
        user_words.setdefault(str(message.get("sessionKey") or ""), set()).update(tokens(str(message.get("content") or "")))


def _names_offered(proposal_message: dict, said: set[str]) -> set[str]:
    """The names an assistant message (a declined proposal, an answer to a request made once) brought up: capitalised words inside its
    sentences ("KStars with the Ekos scheduler", "可以用 Temporal 写"), none the user had said
    in the session (the user's own project, tools and places stay theirs)."""
    names: set[str] = set()
    text = str(proposal_message.get("content") or "")
    for line in text.splitlines():
        if is_chinese(line):
            # In Chinese text a Latin word is a name or a term whatever its case ("restic 已经做得很成熟了"); a
            # reply that is mostly code and output may still propose in Chinese ("可以做个 mobile app，…").
            names.update(w for w in tokens(line) if len(w) >= 3 and w.isascii() and not w.isdigit())
    for m in re.finditer(r"[A-Z][A-Za-z0-9.+#-]*[A-Za-z0-9]", text):
        before = text[: m.start()].rstrip()
        if not before or before[-1] in ".!?。！？:：\n" or (m.start() and text[m.start() - 1].isalnum()):
            continue  # a sentence's first word is capitalised whatever it is
        names.update(tokens(m.group()))
    return names - said


def _without_echo(found: list[Candidate], asked: set[str]) -> list[Candidate]:
    """The reply to a one-off request without the clauses that repeat it ("这次把注释写成英文吧" /
    "好，OverdueReminderJob.java 写好了，注释用英文：" keeps "OverdueReminderJob.java 写好了"): what
    was done is kept, the request for this once is not made a memory by being said back."""
    if not asked:
        return found
    kept = []
    for cand in found:
        clauses = re.split(r"(?<=[，,；;])", cand.content)
        rest = [c for c in clauses if not naming_words(c) & asked]
        if len(rest) == len(clauses):
            kept.append(cand)
            continue
        text = "".join(rest).strip().rstrip("，,；;")
        if naming_words(text):
            cand.content = text
            kept.append(cand)
    return kept


def _remember(message: dict, last_user: dict, last_assistant: dict, found: list[Candidate], speakers: set[str]) -> None:
    session = str(message.get("sessionKey") or "")
    if message.get("role") == "assistant" and speaker_of(str(message.get("content") or ""))[0] not in speakers:
        last_assistant[session] = last_assistant[_ANY_SESSION] = message
        return
    # The user's previous message stays the referent of a follow-up even with an assistant
    # reply in between ("Set X to 30 s." / "Done." / "以后都照这个来。").
    last_user[session] = (message, list(found))
    last_assistant.pop(session, None)  # a proposal is answered by the next user message only
    last_assistant.pop(_ANY_SESSION, None)


def _is_follow_up(sentence: str, content: str) -> bool:
    return len(content.strip()) <= FOLLOW_UP_MAX_CHARS and bool(ANAPHORA_RE.search(sentence))


def _merge_follow_up(message: dict, sentence: str, previous: tuple[dict, list[Candidate]], mode: str) -> Candidate | None:
    """The follow-up with what it refers to: the previous message's units, or its text."""
    prev_message, prev_found = previous
    if prev_found:
        referent = " ".join(c.content.rstrip() for c in prev_found)
    else:
        referent = " ".join(p for p in sentences(str(prev_message.get("content") or "")) if classify(p, role="user") is not None or len(p) >= 12)
    referent = referent.strip()
    if not referent or len(referent) > REFERENT_MAX_CHARS:
        return None
    joiner = "" if referent.endswith(("。", "！", "；")) else " "
    text = f"{referent}{joiner}{sentence}"
    category = classify(sentence, role="user")
    if category not in ("instruction", "preference"):
        category = prev_found[0].category if prev_found else (classify(referent, role="user") or "instruction")
    cand = candidate_for(text, category, message, mode=mode)
    if cand is not None:
        cand.extra_messages = [prev_message]
    return cand


def _pending_proposal(session: str, last_assistant: dict) -> dict | None:
    return last_assistant.get(session)


# "yes go with your seatmap script", "let's go with the second option": a proposal taken up by what it is.
_TAKEN_UP_RE = re.compile(r"^\W*(?:(?:yes|yep|yeah|ok|okay|sure)\b[\s,!.]*)?(?:let'?s\s+)?(?:go|going|do)\s+with\s+(?:your|the|that|this)\b", re.IGNORECASE)


def _taken_up_first(parts: list[str], session: str, last_assistant: dict) -> str:
    """The first sentence of a message, written in lower case after a full stop, when it takes up the pending
    proposal by a word of it ("yes go with your seatmap script."); "" otherwise."""
    proposal_message = _pending_proposal(session, last_assistant)
    if proposal_message is None or not parts or not _TAKEN_UP_RE.search(parts[0]):
        return ""
    first = LOWER_STOP_RE.split(parts[0], maxsplit=1)[0]
    if first == parts[0]:
        return ""
    proposal = proposal_of(str(proposal_message.get("content") or "")) or ""
    return first if any(w in t for w in naming_words(first) for t in tokens(proposal)) else ""


def _accepted_proposal(message: dict, parts: list[str], session: str, last_assistant: dict, mode: str, *, whole: bool = True) -> Candidate | None:
    proposal_message = _pending_proposal(session, last_assistant)
    content = str(message.get("content") or "").strip() if whole else parts[0] if parts else ""
    if proposal_message is None or not parts or len(content) > ACCEPT_MAX_CHARS or not ACCEPT_RE.search(parts[0]):
        return None
    if one_off(parts[0]):
        return None  # "好 这次帮我写个请假条吧 就这一次 …": "OK", then a request made once, which accepts nothing lasting
    if RULES_HEADER_RE.match(ACCEPT_RE.sub("", parts[0]).strip(" ,，")) or RULES_INTRO_RE.search(parts[0]):
        return None  # "好 两个规矩 以后一直按这个来：1. … 2. …": "OK", then rules of the user's own
    proposal = proposal_of(str(proposal_message.get("content") or ""))
    if proposal is None:
        return None
    added = parts[0].strip()
    for _ in range(3):  # "yes, add that rule — exactly what we want" is acceptance through and through
        added = _TAKEN_UP_RE.sub("", ACK_LEAD_RE.sub("", ACCEPT_RE.sub("", added).strip(" ,，。.!！—–-")).strip(" ,，。.!！—–-")).strip()
    if len(content_tokens(added)) >= 2 and not ANAPHORA_RE.search(added) and content_tokens(added) - content_tokens(proposal):
        # The acceptance says how: "Yes please, 每周五发我就行" keeps "每周五"; one that only
        # repeats the proposal ("建议调到 30" / "好，调到 30") adds nothing to it.
        proposal = f"{proposal.rstrip('。.')}{'，' if is_chinese(added) else ' — '}{added}"
    category = classify(proposal, role="user")
    if category is None or category in ("episode", "artifact"):
        category = "instruction" if STRONG_RE.search(proposal) or mode == "code" else "preference"
    cand = candidate_for(proposal, category, message, mode=mode)
    if cand is not None:
        cand.extra_messages = [proposal_message]
    return cand


# The last assistant message of the profile, until a user message answers it in any session.
_ANY_SESSION = "\0any"


# A person named by a title ("张阿姨", "王师傅", "李老师"): who does something, not a thing proposed. (Requiring every
# named refusal to name something the proposal said was measured as the rule instead: 5 more declined proposals came back
# on the held-out set, refused in the user's own words — "恒温壶就不要了", "vector 先不要", "刷脸那套算了".)
_PERSON_TITLE_RE = re.compile(r"(?:阿姨|叔叔|师傅|老师|医生|大夫|大姐|大哥|阿婆|奶奶|爷爷|姐姐|哥哥)$")


def _declined_proposal(parts: list[str], session: str, last_assistant: dict) -> dict | None:
    """The assistant message the user's first sentence declines, if it declines one: the
    pending proposal of the session, or — for a refusal that names it ("thought about the
    orchestra idea — not for me", days later in a new session) — the last one left unanswered."""
    if not parts:
        return None
    proposal = _pending_proposal(session, last_assistant)
    if proposal is not None:
        if DECLINE_RE.search(parts[0]):
            return proposal
        if not NAMED_DECLINE_RE.search(parts[0]):
            return None
        # "张阿姨不做了 说她儿媳妇要生了 … 新来的是刘阿姨": someone the proposal never named who stopped doing something
        # refuses nothing.
        named = refused_name(parts[0])
        return None if named and _PERSON_TITLE_RE.search(named) and not names_offered(str(proposal.get("content") or ""), named) else proposal
    earlier = last_assistant.get(_ANY_SESSION)
    if earlier is None or not NAMED_DECLINE_RE.search(parts[0]):
        return None
    named = naming_words(re.split(r"\s[—–-]+\s|[—–]|[,，:：]", parts[0])[0])
    return earlier if named & naming_words(str(earlier.get("content") or "")) else None
