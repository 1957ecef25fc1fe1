"""Corrections and forget requests in what the user says (SPEC §5 [2026-12]).

A correction ("I was wrong — the port is 5433, not 5432", "不是周二，是周四", "my bad, we
moved to Node 22") names a new value and sometimes the old one; the record it corrects
is the one holding the old value (or, when only the new value is said, a value of the same
kind next to the same words). A forget request ("forget what I said about my ex",
"这条别记了") names a subject, or points at what was just said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from apps.pipeline.rules.extract import PROPER_NOUN_RE, QUESTION_RE, REQUEST_RE, STRONG_RE, TEAM_ROLE_RE, classify
from apps.pipeline.rules.text import (
    CJK_CLAUSE_BREAK,
    CJK_SPACE,
    CJK_SPACE_RE,
    DATE_NOTE_RE,
    HOST_PATTERN,
    LIST_ITEM_SEP,
    SLOT_CUES,
    STOPWORDS,
    SURNAME_ZH,
    WORDED_NUMBERS,
    ZH_DIGITS,
    ZH_STOP_CHARS,
    content_tokens,
    is_chinese,
    is_cjk_char,
    kind_spellings,
    naming_words,
    number_spellings,
    tool_spellings,
    unit_names_slot,
    value_key,
    values,
    values_at,
    zh_number,
)

# "not now, but put it on the list", "not really, but …", "never renumber, not even if it gets
# binned": after "not", words of when and how much name no value that is replaced.
_NOT_A_VALUE = (r"(?!(?:now|yet|today|tonight|right now|at the moment|for now|this time|just yet|really|only|just|sure|much|many|enough|bad|even|ever|once)\b)"
                # "I'm the lab manager, not a dev by training": what one is not, said of oneself.
                r"(?!(?:a|an)\s+[\w-]+(?:\s+[\w-]+)?\s+by\s+(?:training|trade|background|profession|nature)\b)"
                # "put this in TODO.md, not doing it tonight: …": something put off, not a value denied.
                r"(?!(?:doing|going to do|gonna do|touching|starting)\s+(?:it|this|that|them)\b)")
# "put it in TODO.md rather than doing it now", "instead of hunting through the list by number": what
# is done, or when, not a value replaced.
_NOT_DOING_IT = r"(?![a-z]+ing\b)"
# "I gave a statement, I'm not in bother, but it can't ever happen again": "but" opening a clause of
# its own (a subject of its own) goes on to say something else, it names no value instead of the denied one.
_BUT_A_VALUE = r"(?!(?:it|i|we|they|he|she|you|there)\b)"
# "we actually got 17 teams", "she actually liked it": "actually" before what happened stresses it (a
# surprise), it puts nothing said before right.
_ACTUALLY_STRESSES = (r"(?!\s+(?:got|had|made|did|went|won|sold|raised|managed|enjoyed|liked|loved|turned up|showed up|came|finished"
                      r"|ended up|sold out|filled up|worked|helped|reads|does|knows|likes|cares|listens|answers|replies|uses|works|helps|turns up|shows up)\b)")
# "So from now on I'm partnering Bhavna", "I'm training with Deepa now": who the user does it with now.
_WITH_NOW_RE = re.compile(r"\b(?:from now on|now)\b[^.!?]{0,20}?\bi'?m\s+(?:partnering|playing with|training with|teamed up with|paired with|pairing with)\s+"
                          r"(?P<new>(?-i:[A-Z])[\w'-]+(?:\s(?-i:[A-Z])[\w'-]+)?)"
                          r"|\bi'?m\s+(?:partnering|playing with|training with|teamed up with|paired with|pairing with)\s+"
                          r"(?P<new2>(?-i:[A-Z])[\w'-]+(?:\s(?-i:[A-Z])[\w'-]+)?)\s+(?:now|from now on)\b", re.IGNORECASE)

# "full set isnt £90 anymore its £100", "it's not Brenda any more, it's Carol": no longer one, what it is now said next.
_NO_LONGER = r"\b(?:isn'?t|is not|aren'?t|are not|not)\s+"
# "王阿姨回老家带孙子了 上个月换了李阿姨": one person of a title (a carer, a driving instructor) changed for another of it.
_TITLES_ZH = r"阿姨|师傅|老师|医生|大夫|教练|护工|保姆|律师|主任"
_TITLED_CHANGED = rf"(?P<old>[\u4e00-\u9fff](?P<title>{_TITLES_ZH}))[^。；;！!？?]{{0,30}}?换(?:了|成了?)(?:个|一个|新的?)?\s*(?P<new>[\u4e00-\u9fff](?P=title))"
# "阿司匹林先停了 换成氯吡格雷了", "项目部统一不用钉钉了 换成企业微信": the old one stopped, then what replaces it.
# ("USDA 那个我们 drop 了, 改用 MyFCD": the one named, then what was done with it.)
_STOPPED_FOR = (r"(?:(?P<old>[^，,。；;\s]{1,12}?)\s*(?:那个|这个)?\s*(?:我们|我)?\s*(?:先|已经|就|也)?(?:停了|停掉了|不吃了|不用了|drop\s*(?:掉)?了|砍掉?了)"
                r"|不(?:再)?用\s*(?P<old2>[^，,。；;\s]{1,12}?)\s*了)"
                r"[，,\s]+(?:改|换)(?:成|用)了?\s*(?P<new>[^，,。；;！!\s]{1,16}?)(?:了|吧)?(?=[，,。；;！!\s]|$)")
_ANY_MORE_NOW_IS = r"\s+any ?more\b\s*[,;—–]?\s*(?:it'?s|it is|they'?re|they are|now)\s+"
# "she's not doing tuesdays and fridays anymore, they've merged groups so it's wednesdays only now": the reason between.
_NO_LONGER_THEN_NOW = (_NO_LONGER + r"(?:doing\s+|going\s+(?:on\s+|to\s+)?|on\s+)?(?P<old>[^,.;!?]{1,30}?)\s+any ?more\b[^.;!?]{0,50}?"
                       r"\b(?:it'?s|it is|they'?re|they are)\s+(?P<new>[^,.;!?]+?)\s+(?:only\s+)?now\b")


# One not taken and another taken, the old one named ("最后没做自锁 选了隐适美", "我改考 CELPIP 了, 不考 IELTS 了", "I sold the
# IC-7300 … and bought a Yaesu FT-710"): pairs of old and new, and (ungrouped) cues of a correction.
# A value raised or cut to a number ("base 给到 52k 了", "预算压到 3 万", "放到一年 30 万", "cut 到每周 6 小时"), and what a
# value is said to be from now on ("打针时间以后都是 7:30pm", "现在叫 半格 Studio", "改名叫 …"): in the cues of CORRECTION_RE
# and in the patterns that take the new value (_NEW_ONLY).
_TO_A_NUMBER_ZH = r"(?:给|开|加|压|砍|放)到(?=\s*(?:\d|[一二三四五六七八九十两]))|(?<![A-Za-z])cut\s*到(?=[^，,。；;]{0,4}?\d)"
_NOW_SAID_ZH = r"以后(?:都|就)是(?=\s*\d)|(?:现在|改)叫|改名(?:叫|为|成)|新的?(?:日期|时间|地点|地址)(?:是|为|定在|改到|改成)"  # ("新日期是5月24号")
# "… so that's what we're calling it now": a new name (its cue in CORRECTION_RE; _CALLING_IT_NOW_RE takes the name).
_CALLING_IT_NOW = r"\b(?:that's|that is) what (?:we're|we are|i'm|i am|we'll be|i'll be) calling (?:it|him|her|them|the \w+) now\b"
# "the gin is now called Salt Road", "the channel's been renamed to Ops Alerts": a new name, said as such.
_NOW_CALLED = (r"\b(?:(?:is|are|'s)\s+now\s+(?:called|named)|(?:has been|have been|'s been|was|were|got|is|'s)\s+renamed(?:\s+(?:to|as))?"
               r"|(?:we|i)(?:'ve| have)?\s+renamed\s+(?:it|him|her|them|the \w+)(?:\s+(?:to|as))?)\s+")
_A_NAME_EN = r"(?-i:[A-Z])[\w'-]*(?:\s(?-i:[A-Z])[\w'-]*)*"  # words that open with a capital, in any case setting
_CHOICE_VERB = r"[跑去考学报用买读做选住打练]"  # a verb of doing or taking something: 考, 跑, 报, 用 …
_CHOICE_PAIRS = (
    # "最后没做自锁 选了隐适美", "台面最后没用岩板 … 就改成石英石了", "物流不用顺丰冷运了 年前他们涨价涨得太狠 换成京东冷链": the one
    # not taken (its reason may come between), then the one taken.
    r"(?:没|不再|不)(?:用|做|选|买|去|报|装|订|考|在)\s*(?P<old>[^，,。；;！!\s了]{1,12}?)\s*(?:做|看|住|办|读)?\s*了?(?=[，,\s])[^。；;！!]{0,60}?(?:选了|改成了?|换成了?|换到了?|改到了?|转到了?|改用了?|用了|买了|订了|装了|报了|去了)\s*(?P<new>[^，,。；;！!（(\s了]{1,20})",
    # "我改考 CELPIP 了, 不考 IELTS 了": the new one taken, then the old one given up.
    r"改(?P<verb>" + _CHOICE_VERB + r")\s*(?P<new>[^，,。；;！!\s了]{1,20}?)\s*了?\s*[，,\s]\s*(?:就|也)?不(?:再)?(?P=verb)\s*"
    r"(?P<old>[^，,。；;！!\s了]{1,20}?)\s*了",
    # "also binned the fitbit and switched to an Oura ring": one let go, and what replaced it.
    r"\b(?:binned|ditched|dropped|scrapped|got rid of)\s+(?:the\s+|my\s+|our\s+)?(?P<old>[\w.+-]+(?:\s[\w.+-]+)?)\s+(?:and|,)\s+(?:then\s+)?"
    r"(?:i\s+|we\s+)?(?:switched|moved|went over|changed)\s+to\s+(?:an?\s+|the\s+)?(?P<new>[^,.;!?]+?)(?=[,.;!?]|$)",
    # "I sold the IC-7300 to a bloke in Swindon last week and bought a Yaesu FT-710": one sold or returned, another bought.
    r"\b(?:i|we)(?:'ve| have)?\s+(?:just\s+|finally\s+)?(?:sold|returned|traded in|got rid of)\s+(?:the\s+|my\s+|our\s+)?(?P<old>[\w.+-]+(?:\s[\w.+-]+){0,2}?)(?=\s+(?:to|for|on|at|last|this|back|and)\b|[,;])[^.;!?]{0,60}?(?:\band|,)\s+(?:then\s+)?(?:i\s+|we\s+)?(?:bought|got|picked up)\s+(?:a\s+|an\s+|the\s+)?(?P<new>[A-Z][\w.+-]*(?:\s[\w.+-]+){0,3}?)(?=[,.;!?]|\s+(?:so|and|which|for|from|to|because|instead|off)\b|$)",
    # "然后我就把 Salomon 退了，换了 La Sportiva TX4 mid": one taken back or sold, another got instead.
    # (What is given up is named, not described: "把客厅那台小的卖掉了" names no value.)
    r"(?<![要想])把\s*(?P<old>(?![那这])[^，,。；;！!\s的]{1,20}?)\s*(?:退|卖|扔|退掉|卖掉|扔掉|送人|转手)了\s*[，,\s]\s*(?:又|就|然后)?\s*(?:换了|买了|换成了?|改用了?)\s*"
    r"(?:个|一个|双|一双|台|一台|块|一块|款)?\s*(?P<new>[^，,。；;！!]{1,24}?)(?=\s*[，,。；;！!]|$)",
    # "我上周已经把 logrus 全换成 zap 了": replaced everywhere, said as done (not "要把 …", "打算把 …").
    r"(?<![要想])(?<!打算)(?<!准备)(?<!计划)把\s*(?P<old>[^，,。；;！!\s]{1,20}?)\s*(?:全|都|全部|统一)(?:换成|改成|替换成|迁到|切到)了?\s*"
    r"(?P<new>[^，,。；;！!\s]{1,20})\s*了",
    # "不去北京青麦了 改成杭州的白塔画室": no longer going to one, changed to another.
    r"不(?:再)?(?:去|用|报|考|学|买|选|住|找|上)(?P<old>[^，,。；;！!\s了]{2,12}?)了\s*[，,\s]\s*(?:我们?|就)?(?:改成|换成|改去|改报|改用|改到|换到)了?\s*"
    r"(?P<new>[^，,。；;！!（(\s]{1,20})",
    # "we've lost the Tuesday slot at the sports centre …, so from next week adult sessions are Mondays and Thursdays": a
    # day lost, and the one that takes its place.
    r"\b(?:lost|gave up|given up|lose) (?:the|our) (?P<old>(?:mon|tues|wednes|thurs|fri|satur|sun)day)s? (?:slot|session|booking|spot|night|class|pitch|court)\b"
    r"[^.;!?]*?\b(?:are|is|will be|moves? to|now) (?P<new>(?:mon|tues|wednes|thurs|fri|satur|sun)days?)",
    # "所以我们现在看七宝那边, 不去联洋了": the one looked at now, and the one given up after it.
    r"(?:现在|改)(?:看|去|选|住)\s*(?P<new>[^，,。；;！!\s]{2,10}?)(?:那边|那一带|那块|这边)?\s*[，,]\s*不(?:去|看|选|住|考虑)(?P<old>[^，,。；;！!\s了]{2,10})了",
    # "张阿姨不做了 说她儿媳妇要生了 得回安徽带孙子 新来的是刘阿姨": someone who stopped, and who came in their place.
    r"(?P<old>[^，,。；;！!\s]{2,8}?)\s*(?:不(?:做|干)了|走了|辞职了)[^。；;！!]{0,40}?新来的(?:是|叫)\s*(?P<new>[^，,。；;！!\s]{2,8})",
    # "上马不抽了, 改跑杭马", "雅思不考了 改考托福": one given up, another of its kind taken instead.
    # ("所以 long protocol 不做了, 改成 antagonist protocol": names of Latin words, spaces and all.)
    r"(?P<old>(?:[A-Za-z][\w.+-]*\s+){0,2}[^，,。；;！!\s]{1,12}?)\s*(?:就|也)?不(?:再)?(?:" + _CHOICE_VERB + r"|抽)了\s*[，,\s]\s*(?:我们?|就)?"
    r"改(?:[成为]|" + _CHOICE_VERB + r")\s*(?P<new>[A-Za-z][\w.+-]*(?:\s[A-Za-z][\w+-]*)?|[^，,。；;！!（(\s]{1,20})",
)


def _ungrouped(pattern: str) -> str:
    """A pair's pattern as a cue inside CORRECTION_RE: its named groups (and references to them) left unnamed."""
    return re.sub(r"\(\?P<\w+>", "(?:", pattern).replace("(?P=title)", "(?:" + _TITLES_ZH + ")").replace("(?P=verb)", _CHOICE_VERB)


CORRECTION_RE = re.compile(
    # "Her flying weight is 780 grams. Well, turns out that's her fat weight, … she flies best at 745": found to be
    # otherwise, said of what was just said (a pronoun points back at it; "turns out the bug was in the parser" is news).
    r"\b(?:it\s+)?turns out(?=,?\s+(?:that's|that is|that was|it's|it is|it was|she's|he's|they're|they are)\b)|"
    + _NO_LONGER + r"[^,.;!?]{1,30}?" + _ANY_MORE_NOW_IS + r"|"
    + _ungrouped(_TITLED_CHANGED) + r"|" + _ungrouped(_STOPPED_FOR) + r"|" + _ungrouped(_NO_LONGER_THEN_NOW) + r"|"
    r"\b(actually" + _ACTUALLY_STRESSES + r"|i was wrong|i'm wrong|i got (?:the |my |that |our )?[\w' -]{1,30}? wrong\b|my bad|my mistake|correction|i misspoke|sorry,? i meant|i meant|scratch that|wait,? no|no,? wait|not anymore|no longer"
    r"|we (moved|switched|migrated|changed|upgraded|downgraded) to|(is|are|it's) now|changed to|(?:instead of|rather than)\s+" + _NOT_DOING_IT +
    r"|(replaced|swapped) \S+(?: \S+)? (with|for)|(dropped|went down|went up|increased|reduced|decreased|rose|bumped|raised|lowered) to|is (down|up) to"
    r"|(moved(?: up| down| over| back| out)?|changed|switched|postponed|pushed|pushed back|brought forward|rescheduled|shifted|moves|shifts|switches|is moving|is switching|is shifting) to|change of plans?|i (said|told you|mentioned) .{1,60}\bbut|i (wrote|typed|put|said) [^.;!?]{2,60}[,;.] (it's|it is|(it|that) should|should be)\b"
    r"|(switched|moved|migrated|changed|upgraded) from|\b(?:re-?tested|re-?did|redid|re-?took|retook|re-?ran|reran|re-?weighed)\b|\bnew (?:pb|pr|personal best)\b|^\s*(?:oh,?\s*)?wait\b(?![\s,]*(?:for|until|till|on|and see|a (?:sec|second|minute|bit))\b)"
    # "went from 20 to 25" is a change; "went from Lisbon to Porto" is a trip.
    r"|went from (?=[$€£¥]?\d|(one|two|three|four|five|six|seven|eight|nine|ten|a|an)\b)"
    r"|not\s+\d+(?:\.\d+)?\s+[a-z]+\b[^,.;]{0,20}?\bany ?more)\b"
    r"|\bnot\s+[^\s,，。]{2,20}\s+any ?more\s*[，,]\s*(?:换|改)"
    r"|^[\w ]{2,30} update\s*[:：]|^update( on [^:：]{1,40})?\s*[:：]"
    # "and the grace thing has changed too. the new terms and conditions say 21 days …": a change announced, told after.
    r"|^\s*(?:and\s+|also\s+|oh\s+and\s+)?(?:the\s+|our\s+|my\s+)?[\w'-]+(?:\s+[\w'-]+){0,2}\s+(?:has|have)\s+changed(?:\s+(?:too|as well|again))?\s*[.!:]\s+(?=\S)"
    # "they're later than i thought, he reckons the first lot start 6 April": what was thought before, put right.
    r"|\b(?:later|earlier|sooner|bigger|smaller|more|less|fewer|higher|lower|longer|shorter|further|closer)\s+than\s+(?:i|we)\s+(?:thought|said|expected|figured|reckoned|told you)\b"
    # "written exam got pushed …, new date is 5th July": the new value of a thing named by its slot.
    r"|\bnew (?:date|time|day|deadline|venue|address|price|fee|rent|slot) is\b"
    # "我们整体往后推两个礼拜 8月8号出发": moved by so long, to the date said next.
    r"|(?:往后推|往后挪|推迟|推后|延后|提前)了?\s*[一两二三四五六七八九十\d]+\s*个?\s*(?:礼拜|星期|周|天|月)(?=[\s，,]*[^，,。；;]{0,6}?\d{1,2}\s*月\s*\d{1,2}\s*[号日])"
    # "店要搬了 房东不续租 新店在百草路": where the new one is.
    r"|(?:^|(?<=[，,。；;\s]))新(?:店|地址|址|场地|办公室|门店|仓库|工作室)(?:在|是|开在|搬到)"
    # "合作社定了10月28号就开摘，提前了一个多礼拜": a date, then said to have moved.
    r"|\d{1,2}\s*月\s*\d{1,2}\s*[号日][^，,。；;]{0,12}[，,]\s*(?:又)?(?:提前|推迟|延后|延期|推后)了"
    rf"|\bnot\s+{_NOT_A_VALUE}[^,.;]+?,?\s+but\s+{_BUT_A_VALUE}|[,，]\s*not\s+{_NOT_A_VALUE}[\w$€£¥]|(?<!for )(?<!until )(?<!right )(?<!not )(?<!do it )(?<!do that )(?<!do this )\bnow\s*[.!]?\s*$"
    # "还有目标改了 年底要攒五万": what changed, then its new value in the next clause.
    # (Not "不要再手动去改了，…就这一个库": told not to change by hand, and "一个" is "a".)
    r"|[\u4e00-\u9fff]{1,6}(?<![去再])(?:改了|变了)(?=[\s，,：:]+[^，,。；;]{0,16}?(?:\d|[两二三四五六七八九十]+\s*(?:万|千|百|块|元|点|号|天)))"
    # "所庆的曲子换了 同事们投票选了 《夜空中最亮的星》": a work said to have changed, then its new title.
    r"|[\u4e00-\u9fff]{1,6}(?:改了|变了|换了)(?=[\s，,：:]+[^，,。；;]{0,16}?《)"
    # "起订量改一下 … 一个品种 30 棵起就行": what is to change, then its value later in the sentence.
    # ("价格要调 下个月一号开始全身推拿 148 别的项目不动": the price to be changed, then its new value.)
    r"|^\s*[\u4e00-\u9fffA-Za-z]{1,8}\s*(?:(?:要|得)?(?:改|调)一下|要(?:调|改|涨|降)(?:了|价)?)(?=[\s，,：:][^。；;!?！？]*?\d)"
    # "我女儿说想听《光阴的故事》 说那首更合适 我就改这首了": switched to the work just named.
    r"|《[^《》]{1,40}》[^。；;！!？?]{0,30}?(?:改|换)(?:成)?这(?:首|本|部|出)(?:了|吧)"
    # "cabin 最后还是听你的，订了 Deck 7 midship balcony": in the end, another value taken.
    r"|最后还是[^。；;！!？?]{0,12}?(?:订|选|定|买|换)了(?=[^，,。；;]{0,12}?\d)"
    # "所以我改订了 11 月 8 号出发的那一班": booked again, for another value.
    r"|改(?:订|签|约|报|买)了?(?=[^，,。；;]{0,12}?(?:\d|[一二三四五六七八九十两]))"
    + "".join("|" + _ungrouped(p) for p in _CHOICE_PAIRS) +
    # (Not "历史数据其实是有的": it exists after all, no value replaced.)
    r"|改成|改为|改到|改在|改做(?=[^，,。；;]{0,12}\d)|改用|换用|更正|重新(?:算|商量|核算|评估)了|纠正一下|记错了|说错了|(?:算漏|算错|漏算|少算|多算)了|(?<![A-Za-z])(?:switch|change)\s*成|说(?:短|长|少|多|早|晚|小|大|低|高)了|定(?:短|长|少|多|早|晚|小|大|低|高)了|搞错了|弄错了|(?:说|写|讲)的不对(?=[\s，,。：:]|$)|说岔了|搞混了|弄混了|记混了|(?<!我)(?<!本职)(?<!本身)(?<!本行)其实是(?!有的|有)|实际上?(?:一直|都)?是(?=\s*\d)|现在是|" + _NOW_SAID_ZH + r"|现在改|换成了|(?:现在|后来|最后)换成(?![^，,。；;！!？?]*(?:[吗吧？?]|的话))|(?<![帮给请])换成\s?[^，,。；;！!？?\s]{1,16}?(?:\s[A-Za-z0-9][\w:-]*(?:\s?[点号])?)?(?:的[^，,。；;！!？?\s]{1,6})?\s?了(?![吗吧])|变成了?|变为|已经不|不再|不对[，,]"
    r"|顺延到|顺延至|延到|推到(?=[^，,。；;]{0,6}?(?:\d|[一二三四五六七八九十]))|降到|降至|升到|升至|提高到|增加到|" + _TO_A_NUMBER_ZH + r"|减少到|涨到|(?:涨|降|调|提)价到|调整为|调整到|调到|迁到|迁移到|迁去|搬到|搬去|挪到|改去|砍一半|砍半|减半|缩短一半|翻倍|翻一番|缩到|缩小到|扩到|扩大到|放大到|加大到|增大到|放宽到|收紧到|改发到|不用了|从[^，,。；;]{1,30}(?:换成|改成|改为|改到|转成|转为)"
    r"|不是(?!\s*不是)[^，,。]{1,20}[，,]?\s*(而)?是|是[^，,。]{1,20}[，,]?\s*不是|不(?:再)?是\s*[^，,。；;\s了]{1,12}?\s*了[^。；;！!]{0,30}?(?:现在按|现在用|以后按)"
    r"|(?:切到?|切换到|换到|迁到|改用|转到)[^，,。；;！!]{1,20}[，,][^，,。；;！!]{1,20}(?:停用|弃用|下线|关停|就停(?=[，,。；;！!\s]|$))"
    r"|(?:迁到|迁移到|搬到|换到|切到)了?[^，,。；;！!]{1,30}[，,][^，,。；;！!]{1,20}(?:没续|不续了|退掉了|退了|停了|关了|不用了)"
    r"|从[^，,。；;]{1,20}(?:离职|辞职)了?[，,][^，,。；;]{0,12}?(?:开始)?在"
    r"|之前(?:接|用|走|是|买|选)的?[^，,。；;\s]{2,12}[，,][^，,。；;]{0,20}?(?:换成|改成|换到|改用)"
    r"|\b(?:we're|we are|we'll be|it's|it is|it'll be|they're|they are)\s+(?:now\s+)?(?:going to be\s+|gonna be\s+)?(?:on|at|in)\s+[^,.;!?]+?\s+instead\b(?!\s+of\b)"
    r"|" + _CALLING_IT_NOW +
    r"|" + _NOW_CALLED + _A_NAME_EN +
    r"|" + _WITH_NOW_RE.pattern +
    # "so I've gone with the Llangollen Railway instead": a choice made in place of another.
    r"|\b(?:i|we)(?:'ve| have)?\s+(?:gone|went|going|go)\s+with\s+[^,.;!?]+?\s+instead\b(?!\s+of\b)"
    # "from the October sale we start closing at 8pm instead": a time or place said to be otherwise.
    r"|\b(?:at|on|until|till)\s+[^,.;!?\s]+(?:\s+[^,.;!?\s]+){0,2}\s+instead\b(?!\s+of\b)"
    # "make the service reminder go out at ten months instead": a setting told to be otherwise.
    r"|(?:^|[.!?:：]\s+)(?:(?:ok|so|and|just|please|pls)\s+)?(?:make|set|have)\s+(?:the|our|my|it|them|that|this)\b[^.!?]{1,60}?\binstead\b(?!\s+of\b)",
    re.IGNORECASE,
)
# A change said with a verb of change and where it went, with words between ("we upgraded the
# service to Python 3.12", "ops raised its memory to 4 GB", "the exam got moved up to June 13",
# "出发推迟到 10 月 4 号", "预算加到两万五"): a correction when what follows names a typed value.
_CHANGE_VERBS_EN = (r"moved|moves|moving|shifted|shifts|shifting|changed|changing|switched|switching|migrated|upgraded|downgraded|bumped|raised|lowered|increased|reduced|cut|extended|shortened"
                    r"|pushed|postponed|rescheduled|brought|slipped|dropped|upped|capped|tightened|loosened|relaxed"
                    r"|widened|narrowed|doubled|halved|tripled|lengthened|lifted|knocked|dialled|dialed|turned"
                    # "we've put the target up to £2,500" (not "put the kids to bed").
                    r"|put(?=\s+(?:[\w'-]+\s+){0,3}(?:up|down)\s+to\b)"
                    # "voted to bring the same-day cut-off forward to 13:30" (not "bring the kids to school").
                    r"|bring(?=\s+(?:[\w'-]+\s+){0,4}(?:forward|back)\s+to\b)"
                    # "prices go up on 1 April: follow-up goes to €65" (to a figure; not "she goes to Leeds"; "goes up to £310
                    # from 1 april" is a value said to hold from then, read as such).
                    r"|(?:goes|go|went)(?=\s+to\s+[£$€¥]?\d)")
CHANGE_TO_RE = re.compile(
    rf"\b(?:{_CHANGE_VERBS_EN})\b(?:\s+(?:up|back|down|forward|out))?(?:\s+(?!(?:on)?to\b)[\w'-]+){{0,4}}?,?\s+(?:on)?to\s+(?P<new>(?:[^,;!.?]|[.,](?=\d))+)"
    # "timeout tighten 到 90 秒": an English verb before the Chinese "到" in mixed writing.
    r"|(?:推迟|推后|往后推|往后挪|推(?=\s*到\s*(?:\d|[一二三四五六七八九十]+\s*月|下个?|后天|明天|月底|年底|周|礼拜|星期))|提前|延后|延期|改期|挪|加|减|缩短|延长|放宽|收紧|扩|砍|提|压|升级|换|改签|tighten|loosen|bump|raise|lower|reduce|increase|extend|shorten|migrate|migrated|switch|switched|move|moved)\s*到(?P<new_zh>[^，,。；;！!？?]+)",
    re.IGNORECASE,
)
# Words that say a value holds now, not before ("it's April 25 now", "these days", "more like",
# "现在", "目前"): a correction only with a typed value, and only of a live record that has a
# value of that kind next to the same words (supersedes); otherwise the sentence is a plain statement.
# "现在的借阅规则：…" names what holds and introduces it: no cue.
# From a day on ("从明天（16 号）起", "从 3 月 1 号开始"): when a change holds, not a value of it.
_FROM_NEXT_START = r"(?:下周|下个?月|下礼拜|明年)开始"
_FROM_NEXT_START_RE = re.compile(_FROM_NEXT_START)
_FROM_DAY = (r"从\s*(?:今天|明天|后天|这周|本周|这个月|本月|下周[一二三四五六日天]?|下个?月|下礼拜[一二三四五六日天]?|\d{1,2}\s*月\s*\d{1,2}\s*[号日]|\d{1,2}\s*[号日])"
             r"(?:（[^）]{1,16}）)?\s*(?:开始|起)"
             # "下个月起全部走极兔": "起" says "from … on" without "从" ("明天开始放假" says when something starts).
             r"|(?<![\u4e00-\u9fff])(?:明天|这周|本周|这个月|本月|下周|下个?月|下礼拜)起(?!来|床|飞)"
             # "下个月开始 每个 order 30 sen": "开始" before what holds for each one from then on.
             r"|(?<![\u4e00-\u9fff])" + _FROM_NEXT_START + r"(?=\s*(?:每|都|一律|统一|全部|所有))")
_FROM_DAY_RE = re.compile(_FROM_DAY)
# The same without "从", when more is said after it ("12 月起合并到徐汇那边的分馆", "3 月 1 号开始在 N26 做"): still when,
# never the value that changed ("今年采摘季11月5号开始，…" says the date the season starts: that is its value).
_SINCE_DAY_RE = re.compile(r"(?:\d{1,2}|[一二三四五六七八九十]{1,3})\s*月(?:\s*(?:\d{1,2}|[一二三四五六七八九十]{1,3})\s*[号日])?(?:\s*(?:初|中|底))?\s*(?:起|开始)(?!来)"
                           r"(?=\s*[^\s，,。；;！!？?])")
# "老师说期中考试听写是每个词念三遍 让我们在家也按这个练 那就改吧": the value said before it is agreed to as the new one.
_AGREED_CHANGE = r"(?:那就|那|就)(?:按这个|照这个|这么)?改(?=吧|了吧|一下吧)"
_AGREED_CHANGE_RE = re.compile(_AGREED_CHANGE)
WEAK_CUE_RE = re.compile(
    r"(?<!for )(?<!until )(?<!right )(?<!by )(?<!just )(?<!till )\bnow\b(?!\s+(?:that|and then|on)\b)|\bthese days\b|\bnowadays\b|\bmore like\b|\bfrom now on\b"
    r"|\bany ?more\b|\b(?:from|starting|as of) this (?:month|week|year|season|term)\b"
    # "so from the next bottling run (run 212) it goes out at 41.5% ABV": from the next one on.
    r"|\b(?:from|starting(?: from| with)?)\s+(?:the\s+)?next\s+(?:[\w-]+\s+){0,2}?(?:run|batch|order|season|term|month|week|year|release|issue|cycle|shift|delivery|invoice|bill|payment)\b"
    # "from 1 April the bench rate is £52 an hour": from a date on.
    r"|\b(?:from|starting|as of)\s+(?:the\s+)?(?:\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*"
    r"|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\s+\d{1,2}(?:st|nd|rd|th)?)\b|\bended up\b(?!\s+(?:in|at|on)\b)|\bin the end\b|\bfinal\b(?=\s*(?:是|[:：]|is\b|number\b|count\b))|(?<![到至])(?:现在|目前|如今)(?!的[^，,。:：]{0,12}[:：]|最[^，,。:：]{0,6}[:：]|有个|有一个)|最后(?:定|决定|改|选)|后来(?:改|换)|又(?:改|换|变|涨|降)了?"
    # "以后每一档一个半小时", "所以以后就用京东发了": from now on, said at the head of a clause (not "下班以后", after something).
    r"|(?:^|(?<=[，,。；;:：\s])|(?<=所以)|(?<=因此))以后(?=每|都|就|改|一律|统一|[^，,。；;\d\s]{1,10}\d)"
    # "卡包以后卖 188": a price from now on, after what it is the price of.
    r"|以后(?=(?:卖|收)\s*\d)"
    # "从明天（16 号）起玉米潮粮 0.98 一斤": from a day on, like "from 1 April".
    r"|" + _FROM_DAY
    + r"|" + _AGREED_CHANGE,
    re.IGNORECASE,
)
# A change that is planned or asked for has not happened ("下周要把 Triton 升级到 24.08", "we
# should bump it to 3 replicas", "兽医让减到 12 公斤"): a task or a wish, not a correction.
_INTENT_RE = re.compile(
    r"\b(?:will|'ll|going to|gonna|plan(?:s|ning)?|wants?|needs?|should|have to|has to|let's|let us|about to|hope|would like|'d like"
    r"|try(?:ing)? to|can you|could you|please|asked \w+ to|told \w+ to)\b[^,.;]{0,40}$"
    # ("我不能请假 出发只能推到 7 月 25 号": 请假 is taking leave, not "please".)
    r"|(?:要|想|打算|计划|准备|得|需要|应该|让|请(?!假|客|教)|帮我|下周|明天|以后|回头)[^，,。；;]{0,10}$",
    re.IGNORECASE,
)
_LEAD_RE = re.compile(
    r"^(?:(?:oh|ah|hmm|wait|sorry|oops|ok|okay|no|hold on)[,，!！.\s]*)*(?:actually|hold on|(?:a |one |small |quick )?correction(?: to what i said(?: before| earlier)?)?|i was wrong|i'm wrong"
    r"|my bad|my mistake|i misspoke|sorry,? i meant|i meant|scratch that|wait,? no|no,? wait"
    # "also I got the closed day wrong when I first explained all this.": the mistake owned, the fix next.
    r"|(?:also,?\s+)?i got (?:the |my |that |our )?[\w' -]{1,30}? wrong(?:\s+(?:when|last time|before|earlier)\b[^.;!?]{0,50})?)"
    r"[\s,，:：—–\-!！.]*"
    r"|^(?:先?更正(?:一下)?|纠正一下|(?:哎|唉|啊|呃|诶)?(?:我发现)?我?(?:上次|刚才|之前)?(?:(?:跟|和)你)?我?(?:(?:说|讲)的[\u4e00-\u9fff]{1,6}?)?(?:记错了|说错了|搞错了|弄错了|说岔了|搞混了|弄混了|记混了)(?:一个东西|一个地方|一件事|个事)?|不好意思|(?:哦|噢|啊)?不对(?:不对)?)[，,：:。！!\s]*",
    re.IGNORECASE,
)
_PAIRS: list[re.Pattern[str]] = [
    # "防晒 not 安耐晒 anymore，换理肤泉大哥大了": no longer the old one, changed to the new one (mixed writing).
    re.compile(r"\bnot\s+(?P<old>[^\s,，。]{2,20})\s+any ?more\s*[，,]\s*(?:换|改)(?:成|到|用)?了?\s*(?P<new>[^，,。；;！!\s]{2,20}?)\s*了?(?=[，,。；;！!\s]|$)",
               re.IGNORECASE),
    # "its not 2 points a win anymore, they voted 3 points for a win": no longer one count, now another of the same thing.
    re.compile(r"\bnot\s+(?P<old>\d+(?:\.\d+)?\s+(?P<unit>[a-z]+))\b[^,.;]{0,20}?\bany ?more\b[,;]?\s+[^.;]{0,30}?\b(?P<new>\d+(?:\.\d+)?\s+(?P=unit))\b",
               re.IGNORECASE),
    re.compile(_NO_LONGER + r"(?P<old>[^,.;!?]{1,30}?)" + _ANY_MORE_NOW_IS + r"(?:now\s+)?(?P<new>(?:[^,.;!?]|\.(?=\d))+)", re.IGNORECASE),
    re.compile(_NO_LONGER_THEN_NOW, re.IGNORECASE),
    re.compile(_TITLED_CHANGED),
    re.compile(_STOPPED_FOR),
    # "its 22 runs not 18": a number said against the old one, with no comma between.
    re.compile(r"\b(?P<new>\d+(?:\.\d+)?)(?:\s?[a-z%]+)?\s+not\s+(?P<old>\d+(?:\.\d+)?)(?!\w|\.\d)", re.IGNORECASE),
    re.compile(rf"\bnot\s+{_NOT_A_VALUE}(?P<old>[^,.;]+?)\s*,?\s+but\s+{_BUT_A_VALUE}(?P<new>[^,.;!]+)", re.IGNORECASE),
    # (A comma between digits groups thousands: "it's 4,212 Machins, not the three thousand I told you".)
    re.compile(rf"(?P<new>(?:[^,;，；]|(?<=\d),(?=\d{{3}}(?!\d)))+?)\s*[,，]\s*not\s+{_NOT_A_VALUE}(?P<old>(?:[^,.;!，。；]|\.(?=\d))+)", re.IGNORECASE),
    re.compile(r"(?P<new>[^,;]+?)\s+(?:instead of|rather than)\s+" + _NOT_DOING_IT + r"(?P<old>(?:[^,.;!]|\.(?=\d))+)", re.IGNORECASE),  # "3.12 instead of 3.10"
    re.compile(r"\bfrom\s+(?P<old>[\w.:-]+(?: [\w.:-]+)?)\s+to\s+(?P<new>[\w.:-]+(?: [\w.:-]+)?)", re.IGNORECASE),
    # ("不是不是 …", Cantonese "唔係唔係": "no, no", a marker, not "not X but Y".)
    re.compile(r"不是(?!\s*不是)(?P<old>[^，,。；;]+?)[，,]?\s*(?:而)?是(?P<new>[^，,。；;！!]+)"),
    # "水分那条 不是 14.5 了 今年早稻水分普遍偏高 改成 15% 起扣": no longer the old value, changed to the new one.
    # "汛限水位降了 不是 186.5 了 现在按 185.8 米": what it is gone by now.
    # ("预约截止不是九点了 往后挪到晚上十点": moved later.)
    re.compile(r"不(?:再)?是\s*(?P<old>[^，,。；;\s了]{1,12}?)\s*了[^。；;！!]{0,30}?(?:改成了?|改为|换成了?|变成了?|现在是|现在按|现在用|以后按|(?:往后|往前)?(?:挪到|推到|延到|改到|提前到))\s*(?P<new>[^，,。；;！!]+)"),
    re.compile(r"是(?P<new>[^，,。；;不]+?)[，,]?\s*不是(?P<old>[^，,。；;！!]+)"),
    re.compile(r"(?P<new>[^，,。；;]+?)[，,]\s*(?:而)?不是(?P<old>[^，,。；;！!]+)"),
    # ("从下周开始改成每周四", "从 9 月 1 号起工时费改成 ¥150/小时": from when, not from what.)
    re.compile(r"从(?!" + _FROM_DAY[1:] + r")(?P<old>[^，,。；;]+?)(?<!开始)(?<!起)(?:改成了?|改为|改到|换成了?)(?P<new>[^，,。；;！!]+)"),
    re.compile(r"\b(?:replaced|swapped)\s+(?P<old>[\w.:+-]+(?: [\w.:+-]+)?)\s+(?:with|for)\s+(?P<new>[^,.;!]+?)(?=\s+(?:last|this|on|in|because|since|as)\b|[,.;!]|$)", re.IGNORECASE),
    # "Feast 不再用了，我们改用自研的 feature service": what is dropped and what replaces it.
    re.compile(r"(?P<old>[\w.+-]+(?: [\w.+-]+)?)\s*(?:已经)?不再(?:用|使用|维护|支持)了?[，,]\s*(?:我们)?(?:决定)?(?:改用|换成|换用|改成)(?P<new>[^，,。；;！!]+)"),
    # "物理机换成了三台 ECS": a short subject changed into something else.
    # (Not a person who made the change: "我现在换成20厘米的绷子了" says the new value only, "纸我换成宝虹了" names the slot
    # and the new value; nor a decision: "决定换成 FastAPI 了".)
    re.compile(r"^(?!(?:(?:我|我们|你|他|她|它|咱们?)(?:现在|也|又|已经|就|都)?|(?:决定|打算|准备|还是|最后|后来|现在)\s?)(?:换成|替换))(?P<old>[^，,。；;\s]{1,12}?)(?<!我)(?<!我们)(?<!你)(?<!他)(?<!她)(?:换成了?|替换成了?|替换为)(?P<new>[^，,。；;！!]+)"),
    re.compile(r"(?P<old>[\w.+-]+(?: [\w.+-]+)?)\s*(?:已经)?不再(?:用|使用|维护|支持)了?[，,]\s*(?:\S{0,6}?)(?:迁到|迁移到|改发到|转到|挪到)(?P<new>[^，,。；;！!]+)"),
    *(re.compile(p, re.IGNORECASE) for p in _CHOICE_PAIRS),
    # "告警现在改发到钉钉了，飞书不用了": the new one first, the dropped one after.
    re.compile(r"(?P<new>[^，,。；;]+?)[，,]\s*(?P<old>[^，,。；;\s]{1,12}?)(?:就)?(?:不再用|不用)了"),
    # "公司全面切飞书了，下个月企业微信停用": switched to the new one, the old one retired.
    # ("公司下周全面切飞书了，钉钉月底就停": when, after the old one.)
    re.compile(r"(?:切到?|切换到|换到|迁到|改用|转到)(?P<new>[^，,。；;！!了]{1,20}?)了?[，,]\s*(?:下个?月|下周|月底|年底|明年|之后|以后|马上|很快|年底前)?"
               r"(?P<old>[^，,。；;\s]{1,12}?)(?:下个?月|下周|月底|年底|明年|之后|以后|马上|很快|年底前)?(?:就|会|将|也)?(?:停用|弃用|下线|关停|不再用|不用|停掉|停)了?(?=[，,。；;！!\s]|$)"),
    # "上周末整套迁到了阿里云 ECS（杭州），腾讯云那台到期没续费": moved, and the old one let go.
    re.compile(r"(?:迁到|迁移到|搬到|换到|切到)了?(?P<new>[^，,。；;！!（(]{1,20}?)\s*(?:[（(][^）)]*[）)])?[，,]\s*(?P<old>[^，,。；;\s]{1,12}?)"
               r"(?:那台|那个|那边|那家)?(?:月底|年底|下个?月|下周|这个月)?(?:已经)?(?:到期)?(?:就|也)?(?:没续费?|不续了|退掉了|退了|停了|关了|不用了)"),
    # "我已经从 Zalando 离职了，4 月 1 号开始在 N26 做 analytics engineer": a job left for another.
    re.compile(r"(?:我)?(?:已经)?\s*从\s*(?P<old>[^，,。；;\s]{1,20}?)\s*(?:离职|辞职|走人)了?[，,]\s*[^，,。；;]{0,12}?(?:开始)?在\s*(?P<new>[^，,。；;！!\s]{1,20}?)\s*(?:做|当|上班|工作)"),
    # "短信验证码之前接的阿里云，公司这边统一采购换成腾讯云短信了": what it was before, then what it became.
    re.compile(r"之前(?:接|用|走|是|买|选)的?(?P<old>[^，,。；;\s]{2,12})[，,][^，,。；;]{0,20}?(?:换成|改成|换到|改用)了?(?P<new>[^，,。；;！!]{2,20})"),
    # "I said we close on Mondays, but from October it'll be Tuesdays."
    re.compile(r"\bi (?:said|told you|mentioned)\s+(?:that\s+)?(?P<old>[^.;!?]+?),?\s+but\s+(?P<new>[^.;!?]+)", re.IGNORECASE),
    # "I wrote Margaret Pell up there, it's Marjorie Pell" (a slip owned and put right, see joined_pauses).
    re.compile(r"\bi (?:wrote|typed|put|said)\s+(?P<old>[^.;!?,]+?)(?:\s+(?:up there|above|earlier|before|last time|in there))?\s*[,;.]\s*"
               r"(?:it's|it is|(?:it|that) should (?:be|say|read)|should be)\s+(?:actually\s+)?(?P<new>[^.;!?,]+)", re.IGNORECASE),
]
_NAME_RUN_RE = re.compile(r"\b(?!I\b)[A-Z][a-z][\w'-]*(?:\s+[A-Z][a-z][\w'-]*)*")
_GONE_WITH_RE = re.compile(r"\b(?:i|we)(?:'ve| have)?\s+(?:gone|went|going|go)\s+with\s+(?:the\s+)?(?P<new>[^,.;!?]+?)\s+instead\b", re.IGNORECASE)
_CALLING_IT_NOW_RE = re.compile(r"\bcalled (?P<new>[A-Z][\w'-]*(?:\s[A-Z][\w'-]*)*)[^.;!?]{0,40}?" + _CALLING_IT_NOW)
_NOW_CALLED_RE = re.compile(_NOW_CALLED + f"(?P<new>{_A_NAME_EN})", re.IGNORECASE)


def _renamed(clause: str) -> bool:
    """Whether the clause gives something a new name and says nothing else of it."""
    return bool(_CALLING_IT_NOW_RE.search(clause) or _NOW_CALLED_RE.search(clause))
_NEW_ONLY: list[re.Pattern[str]] = [
    _GONE_WITH_RE,
    # "the field next to it was called Cae Derw, oak field, so that's what we're calling it now": a new name.
    _CALLING_IT_NOW_RE,
    _NOW_CALLED_RE,
    # "change of plan for the Calder Cup, I'm going in at -90": where the user now enters.
    re.compile(r"\bi'?m (?:now )?(?:going in|competing|fighting|entering|racing|playing|riding|running|going) (?:at|in) (?P<new>-?\d[^,.;!?]*)", re.IGNORECASE),
    _WITH_NOW_RE,
    # "so from September we're on the last Sunday of the month instead": where things stand now, said with "instead".
    re.compile(r"\b(?:we're|we are|we'll be|it's|it is|it'll be|they're|they are)\s+(?:now\s+)?(?:going to be\s+|gonna be\s+)?(?:on|at|in)\s+(?P<new>[^,.;!?]+?)\s+instead\b", re.IGNORECASE),
    re.compile(r"\bnew (?:date|time|day|deadline|venue|address|price|fee|rent|slot) is\s+(?P<new>(?:[^,.;!]|\.(?=\d))+)", re.IGNORECASE),
    re.compile(r"(?:(?<![A-Za-z])(?:switch|change)\s*成|改成了?|改为|改到|改用|换用|统一成|统一为|换成了?|换到|变成了?|变为|现在是|" + _NOW_SAID_ZH + r"|其实是|实际上?(?:一直|都)?是(?=\s*\d)|降到|降至|升到|升至|提高到|增加到|" + _TO_A_NUMBER_ZH + r"|减少到|涨到|(?:涨|降|调|提)价到|调整为|调整到|调到|迁到|迁移到|迁去|搬到|搬去|改去|缩到|缩小到|扩到|扩大到|放大到|加大到|增大到|放宽到|收紧到|改发到)(?P<new>[^，,。；;！!]+)"),
    re.compile(r"\b(?:moved(?: up| down| over| back| out)?|changed|switched|postponed|pushed back|pushed|brought forward|rescheduled|shifted|moves|shifts|switches|is moving|is switching|is shifting) to"
               r"\s+(?P<new>(?:[^,.;!]|\.(?=\d))+)", re.IGNORECASE),
    re.compile(r"(?:^[\w ]{2,30} update|^update(?: on [^:：]{1,40})?)\s*[:：]\s*(?P<new>[^.;!。；！]+)", re.IGNORECASE),
    re.compile(r"(?P<new>\d{1,2}\s*月\s*\d{1,2}\s*[号日])[^，,。；;]{0,12}[，,]\s*(?:又)?(?:提前|推迟|延后|延期|推后)了"),
    re.compile(r"\b(?:moved|switched|migrated|changed|upgraded|downgraded) to\s+(?P<new>(?:[^,.;!]|\.(?=\d))+)", re.IGNORECASE),
    # "change of plan on alerts btw, move them over to Pushover": told to move, after a word that says it changes.
    # ("…, so the county moved it to Taunton, same date": moved, after the word that says it changed.)
    re.compile(r"\b(?:move|switch|swap|change|moved|switched|swapped|changed|shifted)\s+(?:it|them|that|those|these|everything|it all|(?:the|our|all the)\s+[\w-]+(?:\s[\w-]+)?)"
               r"\s+(?:over\s+|across\s+|back\s+)?to\s+(?P<new>[^,.;!]+)", re.IGNORECASE),
    re.compile(r"\b(?:dropped|went down|went up|increased|reduced|decreased|rose|bumped|raised|lowered) to\s+(?P<new>(?:[^,.;!]|\.(?=\d))+)|\bis (?:down|up) to\s+(?P<new2>(?:[^,.;!]|\.(?=\d))+)", re.IGNORECASE),
    re.compile(r"\b(?:is|are|it's) now\s+(?P<new>(?:[^,.;!]|\.(?=\d))+)", re.IGNORECASE),
    # "上回我说的骨架竹子记错了 是水竹", "I was wrong about the make. they're MacRannoch, 1960s": the mistake
    # owned, then what it is (a name; `counterpart` finds the one it replaces).
    re.compile(r"(?:记错|说错|搞错|弄错|搞混|记混|弄混)了?[，,\s]*(?:应该|其实)?是\s*(?P<new>[^，,。；;！!\s]{1,12})"),
    # "之前算漏了 1 到 3 月的绩效 加上以后一共应该是 41200": a sum counted again, and what it comes to.
    re.compile(r"(?:算漏|算错|漏算|少算|多算)了?[^。！!？?]{0,30}?(?:一共|总共|合计|加起来)?应该是\s*(?P<new>[^，,。；;！!\s]{1,12})"),
    re.compile(r"(?i:(?:^|\bwrong\s+)about\s+(?:the|my|our|his|her|their)\s+[\w ]{1,20}?[.;:,]\s*(?:they're|it's|they are|it is|that's|he's|she's)\s+(?:an?\s+|the\s+)?)"
               r"(?P<new>[A-Z][\w'-]+(?:\s[A-Z][\w'-]+){0,2})"),
    re.compile(r"\b(?:is|are|it's|runs|starts)\s+(?P<new>[^,;!]+?)\s+now\s*[.!]?\s*$", re.IGNORECASE),
]


@dataclass
class Correction:
    clause: str  # the corrected statement, markers and the old value removed
    old: str  # the superseded value when it is said, else ""
    new: str  # the new value, else ""
    weak: bool = False  # said with a weak cue only ("现在", "now"): no record of its own when nothing matches
    slot: str = ""  # what moved ("the docs site" of "moved the docs site from X to Y"): a record of X must name it too
    count: tuple[int, str] | None = None  # "got a fourth node": (4, "node"), the new count of the thing
    context: str = ""  # the sentence an "it's … now" points back at ("they had to move the study. it's 17 March now")
    ended: bool = False  # `old` was given up; `clause` is what the message says holds now, the record's new content
    # A value said "now" when the clause says more after its sentence ("so we're up to 16 taps now." of "… now. the
    # screen layout needs to fit all 16 across the 3 TVs"): what a record is matched with and rewritten by.
    own: str = ""


# A move said as "from X to Y" with what moved ("we moved the marketing site from Vercel to
# Render", "we switched CI from Jenkins to GitHub Actions", "数据库从 MySQL 迁到了 PostgreSQL",
# "把缓存从 Memcached 换成 Redis 了"): X is the old value, Y the new one, and the words before
# "from"/"从" name the slot — a record that says X of something else is not the one it changes.
_FROM_TO_EN = re.compile(
    r"\b(?P<verb>moved|switched|migrated|changed|upgraded|downgraded|ported|converted|shifted"
    # "rent went up from 950 to 1100": an amount that went up or down.
    r"|(?:go|goes|going|went|gone|come|comes|came)\s+(?:up|down)|rose|raised|increased|reduced|dropped|bumped|lowered)\b"
    r"(?P<between>(?:\s+(?!from\b)[\w'./-]+){0,5}?)\s+from\s+(?P<old>[^,;!?]+?)\s+(?:over\s+)?(?:to|onto|into)\s+"
    r"(?P<new>(?:[^,;!?.]|\.(?=\w))+)",
    re.IGNORECASE,
)
_FROM_TO_ZH = re.compile(
    r"从(?!" + _FROM_DAY[1:] + r")\s*(?P<old>[^，,。；;！!？?从]{1,24}?)(?<!开始)(?<!起)\s*(?:迁移到|迁到|切换到|切到|换到|转到|挪到|搬到|升级到|换成|改成|改为|改到|改用|转成|转为|(?:拉长|延长|缩短|提高|降低|涨|降|提|加|减|推迟|提前)到)了?\s*"
    r"(?P<new>[^，,。；;！!？?]+)"
)
# Words before "from" that do not say what moved ("we finally moved everything from …").
_SLOT_NOISE = frozenset({
    "moved", "switched", "migrated", "changed", "upgraded", "downgraded", "ported", "converted", "shifted",
    "finally", "officially", "fully", "completely", "already", "just", "recently", "everything", "all", "stuff", "thing", "over",
    "update", "quick", "heads", "fyi", "news", "actually", "last", "week", "month", "yesterday", "today", "ago", "team",
    "终于", "已经", "最近", "上周", "昨天", "今天", "前天", "正式", "全部", "总算", "刚刚", "我们", "上个", "个月",
})


_SLOT_FILLER_ZH_RE = re.compile(r"^(?:\s|[^\w\s]|另外|还有|对了|顺便|\b(?:btw|fyi|also|oh|and|so|ok|okay)\b|我们|我|他们|公司|团队|已经|终于|最近|上周|上个?月|"
                                r"昨天|前天|今天|刚刚|上礼拜|上星期|把)+", re.IGNORECASE)


def _from_to(sentence: str) -> Correction | None:
    text = _strip_lead(sentence)
    m = _FROM_TO_EN.search(text)
    zh = None if m else _FROM_TO_ZH.search(text)
    found = m or zh
    if found is None:
        return None
    before = text[: found.start()]
    clause_start = max(before.rfind(ch) for ch in ",，;；:：—") + 1
    if _INTENT_RE.search(before):
        return None  # "we want to move CI from …", "下个月要把数据库从 …": planned, not done
    old = found.group("old").strip()
    new = _trim_new(found.group("new"))
    if m:
        old = re.sub(r"^(?:the|our|a|an)\s+", "", old, flags=re.IGNORECASE)
        new = re.split(r"\s+(?:and|with|which|but|because|so|after|before|on|in|for|at|by|to)\b", new, maxsplit=1, flags=re.IGNORECASE)[0]
        new = re.sub(r"^(?:the|our|a|an)\s+", "", new, flags=re.IGNORECASE).strip()
        slot = (before[clause_start:] + " " + m.group("between")).strip()
    else:
        new = re.sub(r"\s*(?:了|啦|的|上|去|来)+$", "", new).strip()
        # ("👌 另外 btw 我们上周从 Apollo 迁到 Nacos 了": words that lead in or say when name no slot.)
        slot = _SLOT_FILLER_ZH_RE.sub("", before[clause_start:]).strip()
    # Numbers and other typed values have their own rules (a value of the kind next to the same
    # words); this one is for names: hosts, tools, products, places — and for a move between
    # two values of one kind ("the wedding moved from June 14 to June 21").
    old_values, new_values = values(old), values(new)
    if old_values and all(k.startswith("tool:") for k, _ in old_values):
        # A tool is a name ("from Vercel to Render", "从 MySQL 迁到了 TiDB"): what moved is the slot a
        # record of the old one must name too.
        old_values = []
    if old_values:
        same = [v for k, v in new_values if k == old_values[0][0]]
        if len(old_values) != 1 or not same:
            return None
        return Correction(clause=_clause_of(text), old=old_values[0][1], new=same[0])
    if not old or not new or len(old.split()) > 4 or len(new.split()) > 4:
        return None
    # What is true now: "we moved the marketing site to Render", "数据库迁到了 PostgreSQL".
    dropped = (r"\bfrom\s+" if m else r"从\s*") + re.escape(found.group("old")) + r"\s*"
    clause = text[: found.start()] + re.sub(dropped, "" if zh else " ", found.group(0), count=1) + text[found.end():]
    clause = re.sub(r"\s{2,}", " ", clause).strip()
    return Correction(clause=_clause_of(clause), old=old, new=new, slot=slot)


# One more of something said with its ordinal ("the cluster got a fourth node", "we added a third
# replica", "我们加了第三个副本", "又买了第二台打印机"): the count of that thing is now the ordinal's
# number, and the record that counts it ("three nodes", "replicas: 2", "两个副本") holds the old one.
_ORDINAL_TEXT = "second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth"
_ORDINALS_EN = {w: i for i, w in enumerate(_ORDINAL_TEXT.split(), start=2)}
_NUMBER_WORDS_EN = {w: n for w, n in WORDED_NUMBERS.items() if n <= 12}
_COUNT_ADDED_EN = re.compile(
    r"\b(?:got|gained|added|bought|hired|adopted|welcomed|spun up|brought up|set up|opened|now has|now have|has now|have now)\b"
    r"(?:\s+(?!a\b|an\b)[\w'-]+){0,4}?\s+(?:a|an|its|our|their|his|her|my)\s+"
    rf"(?P<ord>{'|'.join(_ORDINALS_EN)}|\d{{1,2}}(?:st|nd|rd|th))\s+(?P<words>[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*)?)",
    re.IGNORECASE,
)
_COUNT_ADDED_ZH = re.compile(
    r"(?:加了|添了|新增了?|增加了|多了|买了|扩了|上了|招了|养了|装了|开了)[^，,。；;]{0,8}?第\s?(?P<ord>[二三四五六七八九十]{1,3}|\d{1,2})\s?"
    r"(?P<mw>[个台张只位条块辆套间名])(?P<words>[A-Za-z][\w-]*|[\u4e00-\u9fff]{1,4})"
)
_MEASURE = "[个台张只位条块辆套间名]"


def _zh_numeral(n: int) -> str:
    if n < 10:
        return "两" if n == 2 else ZH_DIGITS[n]
    tens, ones = divmod(n, 10)
    return ("" if tens == 1 else ZH_DIGITS[tens]) + "十" + (ZH_DIGITS[ones] if ones else "")


def _count_added(sentence: str) -> Correction | None:
    text = _strip_lead(sentence)
    m = _COUNT_ADDED_EN.search(text) or _COUNT_ADDED_ZH.search(text)
    if m is None or _INTENT_RE.search(text[: m.start()]):
        return None
    ordinal = m.group("ord").lower()
    if ordinal in _ORDINALS_EN:
        n = _ORDINALS_EN[ordinal]
    elif ordinal[:1].isdigit():
        n = int(re.match(r"\d+", ordinal).group(0))
    else:
        n = zh_number(ordinal)
    if n < 2:
        return None
    words = [w for w in m.group("words").split() if w.lower() not in STOPWORDS]
    if not words:
        return None
    noun = words[0] if is_chinese(m.group("words")) or re.search(r"[\u4e00-\u9fff]", m.group("words")) else " ".join(words)
    return Correction(clause=_clause_of(text), old="", new=str(n), count=(n, noun))


def _count_in(record: str, noun: str) -> re.Match[str] | None:
    """Where `record` counts `noun` ("three nodes", "3 worker nodes", "replicas: 2", "两个副本"): the
    match, its number in group "num"."""
    if re.search(r"[\u4e00-\u9fff]", noun):
        # "第三只猫是朋友家的": the thing is the longest start of what follows that the record counts;
        # words may stand between the measure word and it ("两个只读副本").
        for k in range(min(len(noun), 4), 0, -1):
            thing = re.escape(noun[:k])
            m = re.search(rf"(?P<num>\d+|[一两二三四五六七八九十]+)\s?(?:{_MEASURE}[\u4e00-\u9fff]{{0,4}}?|{_MEASURE}?)\s?{thing}", record)
            if m:
                return m
        return None
    numbers = r"\d+|" + "|".join(_NUMBER_WORDS_EN)
    for word in reversed(noun.split()):  # "a third read replica": the replicas; "a fourth node last week": the nodes
        name = re.escape(_singular_of(word)) + r"(?:s|es)?"
        m = (re.search(rf"\b(?P<num>{numbers})\s+(?:[\w-]+\s+)?{name}\b", record, re.IGNORECASE)
             or re.search(rf"\b{name}\s*[:=]?\s*(?P<num>\d+)\b", record, re.IGNORECASE))
        if m:
            return m
    return None


def _singular_of(word: str) -> str:
    word = word.lower()
    return word[:-2] if word.endswith(("ses", "xes", "ches", "shes")) else word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _count_value(m: re.Match[str]) -> int:
    said = m.group("num").lower()
    return int(said) if said.isdigit() else _NUMBER_WORDS_EN.get(said) or zh_number(said)


def _count_written_like(n: int, old: str) -> str:
    """`n` in the way the record wrote its count: digits, English words or Chinese numerals."""
    if old.isdigit():
        return str(n)
    if old.lower() in _NUMBER_WORDS_EN:
        words = {v: k for k, v in _NUMBER_WORDS_EN.items()}
        word = words.get(n, str(n))
        return word.capitalize() if old[:1].isupper() else word
    return _zh_numeral(n)


def _slot_words(correction: Correction) -> set[str]:
    return content_tokens(correction.slot) - _SLOT_NOISE


def _names_slot(slot: set[str], words: set[str]) -> bool:
    """A word of the slot in `words`, in any of its forms ("hosting" / "hosted on", "deploy" /
    "deployed to": the shared stem of four letters or more)."""
    return any(w == t or (w.isascii() and t.isascii() and min(len(w), len(t)) >= 4 and _stem(w) == _stem(t)) for w in slot for t in words)


def _stem(word: str) -> str:
    return re.sub(r"(?:ing|ed|ment|s|er)$", "", word.lower())


# "刚才说抹到角是我说错了 我们一直是抹到元": the clause that takes back what was said names the old value; it is
# not part of what holds now.
# Said in Cantonese too ("头先讲 tea charge $2.50 系错嘅，…").
_RETRACTED_RE = re.compile(r"^(?:刚才|刚刚|之前|上次|前面|昨天|头先|啱先|啱啱)?我?(?:说|讲)(?:的)?(?:是)?\s*(?P<old>[^，,。；;]{2,24}?)\s*"
                           r"(?:(?:是我|我)?(?:说错|搞错|记错|弄错|写错|讲错)了|(?:系|是)错(?:嘅|咗|的|了))[，,。！!\s]*(?=\S)")


def parse_correction(sentence: str) -> Correction | None:
    found = _parse(sentence)
    if found is not None and (retracted := _RETRACTED_RE.match(unled := _strip_lead(found.clause))) is not None:
        typed = values(retracted.group("old"))  # "tea charge $2.50": the value, which the record may say in other words
        found.clause, found.old = unled[retracted.end():], found.old or (typed[0][1] if len(typed) == 1 else retracted.group("old"))
    if found is not None and found.old and found.new and (day := _one_day(found.old)) and day == _one_day(found.new):
        found.old = ""  # "改成 Thursday 周四": the new day said in both languages, not a day replacing another
    if found is not None and not found.count:
        # The corrected statement says what is true now; the value it replaces is history
        # ("之前是200米，现在是500米了" → "现在是500米了", also its `old` when none was said).
        clause, before = _now_only(found.clause)
        if clause:
            found.clause = clause
        if before and not found.old and not _RECOUNTED_RE.search(before):
            new_kinds = {k for k, _ in values(found.new or found.clause)}
            same = [v for k, v in values(before) if k in new_kinds]
            if len(same) == 1:
                found.old = same[0]
    if found is not None and found.new and not found.old and not found.count:
        found.old = _name_complained_of(found.clause, found.new) or _other_tool_of_its_kind(found.clause, found.new)
    if found is not None and found.new and not found.own and not found.count:
        found.own = _unpunctuated_clause(found.clause, found.new)
    if found is not None and found.own and found.old and found.old not in found.own and _of_another_slot(sentence, found.old):
        found.old = ""  # "最大心率其实是 178 跟我以为的不一样 乳酸阈心率 163 区间按这个重新算吧": 163 is another setting, said after
    if found is not None and found.new and not found.old and not found.count:
        found.old = _value_before_the_move(found.clause, found.new) or _place_before_instead(found.clause, found.new)
    if found is not None and _PRONOUN_RE.fullmatch(found.new.strip()):
        # "Kwame's the new bar manager so the approve button is his now": whose it is now is the one the role names.
        return _new_role_holder(sentence)
    if found is not None and found.new and not found.old and not values(found.new) and TEAM_ROLE_RE.search(found.new) \
            and len(names := _full_names(found.new)) == 1:
        found.new = names[0]  # "the CAD feed is Funmi Adeyemi's now, she's the new integration lead": who holds the role now
    return found


_PRONOUN_RE = re.compile(r"his|hers|theirs|him|her|them|it|mine|ours|yours|他的|她的|他|她", re.IGNORECASE)


# A quantity said to have gone up or down ("早上量血压 170 多 … 下午降到 140 了", "my resting HR was 62 in
# January and dropped to 55"): the one value of its kind said before the verb, in the same sentence, is
# what moved; a stored record holding another value of that kind ("我爸 60 了") is not the one it changes.
_QUANTITY_MOVED_RE = re.compile(r"降到|降至|升到|升至|涨到|跌到|掉到|回落到|(?:给|开|加|压|砍)到"
                                r"|\b(?:dropped|fell|went down|went up|rose|came down|climbed|crept up) to\b", re.IGNORECASE)


def _value_before_the_move(clause: str, new: str) -> str:
    move = _QUANTITY_MOVED_RE.search(clause)
    if move is None:
        return ""
    kinds = {kind for kind, _ in values(new)}
    same = [value for kind, value in values(clause[: move.start()]) if kind in kinds]
    return same[0] if len(same) == 1 else ""


# "They've lost the church hall at Church Stretton, so it's going to be in the town hall at Bishop's Castle
# instead", "the county is re-sodding the Dumbarton field so … we're at the Overlea turf instead": the one place
# named before the new one (after at/in/from, or as "the <Name> field") in a sentence that says "instead" is the one
# it replaces.
_PLACE_NOUN = r"(?:field|pitch|turf|ground|grounds|park|hall|centre|center|court|courts|pool|rink|gym|studio|club|track|school|campus|arena|branch|site|office|library|church)"
_PLACE_NAMED_RE = re.compile(r"\b(?:(?:at|in|from)\s+(?:the\s+)?(?P<place>(?-i:[A-Z])[a-z][\w'-]*(?:\s+(?-i:[A-Z])[a-z][\w'-]*)*)"
                             r"|the\s+(?P<place_of>(?-i:[A-Z])[a-z][\w'-]*(?:\s+(?-i:[A-Z])[a-z][\w'-]*)*)(?=\s+" + _PLACE_NOUN + r"\b))", re.IGNORECASE)


def _place_before_instead(clause: str, new: str) -> str:
    at = clause.find(new)
    if at <= 0 or not re.search(r"\binstead\b", clause[at:], re.IGNORECASE):
        return ""
    places = {p for m in _PLACE_NAMED_RE.finditer(clause[:at]) if (p := m.group("place") or m.group("place_of")).casefold() not in new.casefold()}
    return places.pop() if len(places) == 1 else ""


def _name_complained_of(clause: str, new: str) -> str:
    """The one capitalised name the words after it complain of, said after the new value ("纸我换成宝虹 Baohong 了 Arches
    太贵", "switched to Notion, Evernote was too slow") or, failing that, before it ("保险我换了 SafetyWing 今年涨价了 …
    换成 Genki Explorer 了"): the one given up; "" otherwise."""
    before, _, after = clause.partition(new)
    for words in (after, before):
        named = {m.group(0) for m in _NAME_RUN_RE.finditer(words) if m.group(0).casefold() not in new.casefold()
                 and COMPLAINT_RE.match(_COMPLAINT_LEAD_RE.sub("", words[m.end():]))}
        if named:
            return named.pop() if len(named) == 1 else ""
    return ""


def _other_tool_of_its_kind(clause: str, new: str) -> str:
    """The one other tool of the new one's kind the clause names ("Vercel 在国内访问太慢了 … 迁到腾讯云": where it runs,
    a hosting service for a cloud): the one it replaces; "" otherwise."""
    taken = [k for k, v in values(new) if k.startswith("tool:")]
    if len(taken) != 1:
        return ""
    others = {value_key(v): v for k, v in values(clause) if k.startswith("tool:") and _kind_fits(k, taken[0])
              and value_key(v) not in {value_key(t) for _, t in values(new)}}
    return next(iter(others.values())) if len(others) == 1 else ""


# What may stand between a name and the complaint about it ("Evernote was too slow", "SafetyWing 今年涨价了").
_COMPLAINT_LEAD_RE = re.compile(r"^\s*(?:was|were|is|are|got|had got|has got)?\s*(?:今年|最近|又|也|现在|突然)?\s*", re.IGNORECASE)


# A person's name: capitalised words in a row, not opening the sentence ("Gary Pritchard", not "CAD" or "I").
_FULL_NAME_RE = re.compile(r"(?<=[\w,，\s])\b(?!I\b)[A-Z][a-z][a-zA-Z'\-]*(?:\s+[A-Z][a-z][a-zA-Z'\-]*)*")


def _names_at(text: str) -> list[tuple[int, str]]:
    """(position, name) of each full name in `text`, its possessive "'s" left out."""
    return [(m.start(), re.sub(r"'s$", "", m.group(0))) for m in _FULL_NAME_RE.finditer(text) if not re.search(r"[.!?]\s*$", text[: m.start()])]


def _full_names(text: str) -> list[str]:
    return list(dict.fromkeys(name for _, name in _names_at(text)))


# What says a value is the old one ("原来订的9月12号", "我以为是 185", "不是 3 点", "48 小时太长了").
_OLD_MARKED_RE = re.compile(r"原来|原先|之前|以前|本来|上次|上回|不|没|以为|说错|记错|搞错|太|从|\b(?:not|was|were|used to|before|from)\b", re.IGNORECASE)


def _of_another_slot(sentence: str, old: str) -> bool:
    """Whether the clause of unpunctuated Chinese that says `old` says nothing that makes it the old value."""
    chunk = next((c for c in CJK_SPACE_RE.split(sentence) if old in c), "")
    return bool(chunk) and not _OLD_MARKED_RE.search(chunk)


def _unpunctuated_clause(clause: str, new: str) -> str:
    """The clause that says the new value, of Chinese written without punctuation, where a space between
    words ends a clause ("放号时间要改 门诊那边反映… 主任拍板了 以后改成中午 12 点半放号 小程序首页的提示文字…都要跟着改":
    the change is "主任拍板了 以后改成中午 12 点半放号", not the clauses about the clinic): the clause that says it and
    the one before, which may name what changes ("上回我说的骨架竹子记错了 是水竹"); "" when the text is punctuated."""
    if re.search(r"[，,。；;！!？?]", clause):
        return ""
    chunks = CJK_SPACE_RE.split(clause)
    said = [i for i, chunk in enumerate(chunks) if new in chunk]
    if len(chunks) < 4 or len(said) != 1:
        return ""
    first = max(0, said[0] - 1)
    # ("还有快递 原来那家老是丢件 … 我朋友不干了 下个月起全部走韵达": a short head that opens the matter names what changes too.)
    head = [chunks[0]] if first > 0 and _MATTER_HEAD_ZH_RE.fullmatch(chunks[0].strip()) else []
    return " ".join(head + chunks[first: said[0] + 1])


# A head that opens a matter ("还有快递", "另外对账", "保险的事"): a word or two, nothing said of it yet.
_MATTER_HEAD_ZH_RE = re.compile(r"(?:还有|另外|然后|对了)\s*[\u4e00-\u9fffA-Za-z]{1,6}|[\u4e00-\u9fffA-Za-z]{1,6}(?:的事|那边|这块)")


# What was counted wrong before ("之前算漏了 1 到 3 月的绩效"): the numbers said with it are not the old value.
_RECOUNTED_RE = re.compile(r"算漏|算错|漏算|少算|多算")


# A move said with "to" ("moved back to 9:30"): asked for when an intent comes before it (_INTENT_RE).
_MOVE_TO_RE = re.compile(r"\b(?:moved|changed|switched|pushed|shifted|rescheduled)(?: up| down| over| back| out)? to\b", re.IGNORECASE)
_OWN_MISTAKE_RE = re.compile(r"\b(?:actually|i was wrong|my bad|my mistake|correction|scratch that|i meant)\b", re.IGNORECASE)
# What was said is taken back, and nothing else is said ("还有上次我说 Mochi hot spot 35 是我搞错了.", "I got that wrong"):
# without a new value the sentence states nothing that holds, only the value that does not.
# Said of the user's own words, not of a bug ("系统给算错了" reports one).
TAKEN_BACK_RE = re.compile(r"我(?:之前|上次|刚才)?(?:说|记|搞|弄|写)错了|\bi (?:was wrong|got (?:it|that|this) wrong)\b", re.IGNORECASE)


# A change said as planned, in Chinese, before its verb (the move's own "从 X" left out). Narrower than
# _INTENT_RE, which this path never read: not "以后" (from now on: "以后改成每周三开会" is the change
# itself), not "想" alone ("我想了下5万太狠了 改成3万吧" decides), not "帮我" (a request, read as one).
# ("下周一开始早班改成 7:05": from when a change holds, not a plan.)
_PLANNED_ZH_RE = re.compile(r"(?:(?:下个?月|下周|下礼拜|下星期|明年|明天|下半年)(?![一二三四五六七日天\d号]*(?:开始|起))|打算|计划|准备|想要|想把|要把|得把|需要把|回头)[^，,。；;\s]{0,12}$")


def _planned_zh(sentence: str, at: int) -> bool:
    """Whether the change at `at` is said as planned; said done ("下周的会改成周四了") it is not."""
    before = re.sub(r"从\s*[^，,。；;\s]+\s*$", "", sentence[:at])
    done = "了" in re.split(r"[，,。；;！!？?]", sentence[at:])[0]
    return bool(_PLANNED_ZH_RE.search(before)) and not done and not _LEAD_RE.match(sentence.strip())


_TOLD_INSTEAD_RE = re.compile(r"(?:^|[.!?:：]\s+)(?:(?:ok|so|and|just|please|pls)\s+)?(?:make|set|have)\s", re.IGNORECASE)


# "而且我的定位就是讲框架不是荐股": what something is about, against what it is not, said as a reason or a description
# ("the sync runs on Tuesday, not Monday" and "是周四不是周二" put a value right; these name none).
_WHAT_IT_IS_RE = re.compile(r"(?:而且|因为|毕竟|本来|定位|重点|目的|核心|本质|初衷|意思|理念)[^，,。；;]{0,12}$")


def _says_what_it_is(sentence: str, cue: re.Match[str]) -> bool:
    return cue.group(0).startswith("是") and bool(_WHAT_IT_IS_RE.search(sentence[: cue.start()])) and not values(cue.group(0))


def _parse(sentence: str) -> Correction | None:
    moved = _from_to(sentence) or _count_added(sentence)
    if moved is not None:
        return moved
    move = _MOVE_TO_RE.search(sentence)
    if move and _INTENT_RE.search(sentence[: move.start()]) and not _OWN_MISTAKE_RE.search(sentence):
        return None  # "We want the standup moved back to 9:30 next month": asked for, not done
    cue = next((c for c in CORRECTION_RE.finditer(sentence) if not _says_what_it_is(sentence, c)), None)
    if cue and _planned_zh(sentence, cue.start()):
        return None  # "下个月要把订单库从 MySQL 迁到 TiDB", "计划下周把数据库迁到 PostgreSQL": not done yet
    if cue and _TOLD_INSTEAD_RE.match(cue.group(0)) and not values(sentence[cue.start():]):
        # "…for 2 minutes of excitement a month. make the polling smarter instead": a setting told to be
        # otherwise says its value; without one it is a request, and the value before it is of something else.
        cue = None
    if cue and not _clarified_aside(sentence):
        marked = _parse_marked(sentence)
        if marked is not None and not marked.old and _FORMER_ONE_MOVED_RE.search(sentence):
            # "my old belay partner moved to Leeds, so on Wednesdays I'm climbing with Priya now": the one who was moved
            # away; what holds now is said with "now", if at all.
            return _said_now(sentence)
        # ("搬到岘港了！现在住 An Thuong 附近": a new value typed by the words around it is a value too.)
        if marked is None or marked.old or not marked.new or values(marked.new) or _values_of_new(marked):
            return marked
        # "we've been moved to a new consultant. Theo's under Dr Hussain now": what it was moved to names
        # no value; the value said to hold now is the change.
        return _said_now(sentence) or marked
    m = CHANGE_TO_RE.search(sentence)
    if m and values(m.group("new") or m.group("new_zh") or "") and not _INTENT_RE.search(sentence[: m.start()]):
        return Correction(clause=_clause_of(sentence), old="", new=_trim_new(m.group("new") or m.group("new_zh") or ""))
    tool = _TOOL_TAKEN_RE.search(sentence)
    if tool and not _INTENT_RE.search(sentence[: tool.start()]):
        taken = [v for k, v in values(tool.group("new")) if k.startswith("tool:")][:1]
        if taken and tool.group("new").lstrip().startswith(taken[0]):
            # "决定换成 Dramatiq", "改用 Postmark 了": a tool taken up in place of another.
            return Correction(clause=_clause_of(sentence), old="", new=taken[0])
    return _said_now(sentence) or _new_role_holder(sentence)


# "Aoife stepped down at the AGM, Declan Hurley is music director now": someone else holds the role now.
_HOLDER_CHANGED_RE = re.compile(r"\b(?:now|new|taking over|taken over|took over|stepped down|stepping down|replac\w+|left|moved on)\b", re.IGNORECASE)


_NEW_HOLDER_OPENS_RE = re.compile(r"(?P<name>[A-Z][a-z]+(?:\s[A-Z][a-z]+)?)(?:'s|\s+is)\s+(?:the|our|my)\s+new\b")


def _new_role_holder(sentence: str) -> Correction | None:
    """A role said to have a new holder, by name (English): the new name, and the old one when the sentence names
    exactly one other person."""
    role = TEAM_ROLE_RE.search(sentence)
    if role is None or not _HOLDER_CHANGED_RE.search(sentence):
        return None
    found = _names_at(sentence)
    opening = _NEW_HOLDER_OPENS_RE.match(sentence)  # "Kwame's the new bar manager": the name opens the sentence
    if opening is not None:
        found = [(0, opening.group("name")), *found]
    named = list(dict.fromkeys(name for at, name in found if role.start() <= at < role.end()))
    if len(named) != 1:
        return None
    others = list(dict.fromkeys(name for _, name in found if name != named[0]))
    return Correction(clause=_clause_of(sentence), old=others[0] if len(others) == 1 else "", new=named[0])


# A change said to have happened, beside the value said to hold now ("大房调价了，现在 150 一小时"): what holds now is
# news of its own even when no record says what it was before.
CHANGE_SAID_RE = re.compile(r"(?:调价|涨价|降价|调整|改|换|变|涨|降)了|\b(?:changed|went (?:up|down)|has gone (?:up|down)|put (?:up|down) (?:the|our|their) (?:price|rate|fee)s?)\b",
                            re.IGNORECASE)


# A name written with a capital ("Nuxt", "C#", "Node.js"): a version may follow it.
_NAME_WORD = r"[A-Z][A-Za-z+#.-]*[A-Za-z+#]"
# A name of one or more capitalised words and its version ("Coros Vertix 2", "Garmin 955").
_NAMED_RUN_VERSION_RE = re.compile(rf"(?<![\w.-])(?:{_NAME_WORD}\s)*{_NAME_WORD}\s?v?\d+(?:\.\d+)*(?![\w.])")


# Of a thing, not of the speaker ("I can stretch the rent to £800 a month now" is a value changed), and no "can't" ("Dale
# can't begin until June 2 now").
_NEWLY_POSSIBLE_RE = re.compile(r"(?<!\bi )(?<!\bwe )\b(?:can|could)\b(?!['’]t|not)|\b(?:is|are) able to\b", re.IGNORECASE)


def _said_now(sentence: str) -> Correction | None:
    """A typed value said with a word that says it holds now ("现在", "now", "from now on")."""
    for cue in WEAK_CUE_RE.finditer(sentence):
        if sentence[cue.end():].lstrip().startswith((":", "：")):
            continue  # "two rules for this repo from now on: …": it heads what follows, it changes nothing
        # The value belongs to the cue's own clause: "三天前拔了智齿，现在还肿着" says no new value
        # (a full stop before a space ends a clause too: "…G/45 d5 from now on. last year round 4
        # ended at 9:40pm" says no value of the change after it).
        start = max([sentence.rfind(ch, 0, cue.start()) + 1 for ch in "，,;；。"] + [m.end() for m in _STOP_RE.finditer(sentence) if m.end() <= cue.start()])
        ends = [i for i in (sentence.find(ch, cue.end()) for ch in "，,;；。") if i >= 0]
        if not _FROM_NEXT_START_RE.fullmatch(cue.group(0)):  # ("下个月开始 每个 order 30 sen 而已": what holds is said after the space)
            ends += [m.start() for m in _STOP_RE.finditer(sentence, cue.end())][:1]
        own = sentence[start: min(ends) + 1 if ends else len(sentence)]
        if _AGREED_CHANGE_RE.match(sentence, cue.start()):
            own = sentence[:cue.start()]  # (what it agrees to was said before it)
        if _NEWLY_POSSIBLE_RE.search(sentence, start, cue.start()):
            continue  # "we've bought 2 Urban Arrows, so bulky stuff up to 80kg can go by bike now": a thing newly possible
        if (with_whom := _WITH_WHOM_NOW_RE.search(own)) is not None and not _NEGATED_RE.search(own):
            # "my old practice partner took a job up in Edinburgh, so on Sundays I'm practising with Marek now": the one
            # the user does it with now (counterpart finds who the record names in that place), not the day said with it.
            last = next((m.start() + 1 for m in _FULL_STOP_RE.finditer(sentence, cue.end())), len(sentence))
            return Correction(clause=_clause_of(sentence[:last]), old="", new=with_whom.group("name"), weak=True)
        said = values(own)
        if said:
            # "from now on" says a rule as often as a change: only its own clause is the change ("以后" too, after words
            # that announce a change: "对账日要改 以后每个月月末最后一天结 客户那边项目部都是月底报量").
            announced = sentence[:start].strip() if cue.group(0) == "以后" and _CHANGE_ANNOUNCED_ZH_RE.search(sentence[:start]) else ""
            from_now_on = cue.group(0).lower() == "from now on" or bool(announced)
            clause = _clause_of(own.strip() if from_now_on else sentence)
            # "readings are in SQLite now, …, older than 90 days": a tool said to be in use now is the
            # new value, not the numbers of the clauses around it.
            if not all(kind.startswith("tool:") for kind, _ in said):
                # (What comes before it stays: "the hospital phoned, they had to move the study. it's Tuesday 17 March
                # now" says what the date is of.)
                last = next((m.start() + 1 for m in _FULL_STOP_RE.finditer(sentence, cue.end())), len(sentence))
                own_sentence = _clause_of(sentence[:last]) if not from_now_on else clause
                # "换了手表，现在用 Coros Vertix 2": after a change said to have happened, a number that is a name's version is
                # said with its name (it had written "Garmin 2").
                named = [m.group(0) for m in _NAMED_RUN_VERSION_RE.finditer(own)]
                new = named[0] if len(named) == 1 and all(kind == "number" for kind, _ in said) and CHANGE_SAID_RE.search(sentence) else ""
                # (The words before "以后" that announce the change say what it is of.)
                return Correction(clause=clause, old="", new=new, weak=True, own=own_sentence if own_sentence != clause else "", context=announced)
            # A tool beside a weak cue: "readings are in SQLite now" takes it up (the numbers of the
            # clauses around it are not new); "there's no influx any more" gives it up, "Etsy 那边手续费
            # 又涨了" says its price rose, "现在 host 在 Heroku" says where it runs: no change by themselves.
            in_use = not _NEGATED_RE.search(own) and bool(_IN_USE_CUE_RE.fullmatch(cue.group(0))) and _tool_taken_up(own, cue, sentence)
            taken = _tools_taken_up(sentence, own) if in_use else None
            if taken is not None:
                return taken
            if _two_of_a_kind(sentence):
                # "Etsy 那边手续费又涨了，…，以后所有 order 都走我们自己开的 Shopify store": the old tool and the
                # new one, both said; the record's one is the old.
                # A tool named twice ("she lives in Xero, so the invoices need to go to Xero from now on") is one.
                named = dict.fromkeys(v for k, v in values(sentence) if k.startswith("tool:"))
                return Correction(clause=clause, old="", new=" ".join(named), weak=True)
            if in_use:
                return Correction(clause=clause, old="", new=own.strip(" ,，;；。."), weak=True)
    return None


_CHANGE_ANNOUNCED_ZH_RE = re.compile(r"(?:要|得|需要)(?:改|换|调整?)(?:一下)?\s*$")
_FORMER_ONE_MOVED_RE = re.compile(r"\b(?:my|our)\s+(?:old|former|previous|ex)[\s-]+[\w -]{1,25}?\s+(?:has\s+|'s\s+)?(?:moved|relocated|gone)\s+(?:away\s+)?to\b",
                                  re.IGNORECASE)
# "I'm practising with Marek now", "training with Sam Okafor now": a person the user does something with now.
_WITH_WHOM_NOW_RE = re.compile(r"\bwith\s+(?P<name>(?-i:[A-Z])[a-z]+(?:\s(?-i:[A-Z])[a-z]+)?)\s+now\b", re.IGNORECASE)


# A remark in brackets after what it remarks on ("季尾头三名有奖（其实是超市礼券 lol）", "a prize (actually
# just vouchers)"): "actually" there clarifies the statement, it corrects nothing said before.
_BRACKETED = r"\s*[（(][^（）()]{1,80}[）)]"
_BRACKETED_RE = re.compile(_BRACKETED)
_ASIDE_RE = re.compile(r"(?<=\S)" + _BRACKETED)  # after what it remarks on
_CLARIFYING_RE = re.compile(r"^(?:actually|其实是)$", re.IGNORECASE)


def _clarified_aside(sentence: str) -> bool:
    """Whether the sentence's only cues of a correction are "actually" / "其实是" inside a remark
    in brackets."""
    cues = list(CORRECTION_RE.finditer(sentence))
    asides = [m.span() for m in _ASIDE_RE.finditer(sentence)]
    return bool(asides) and all(_CLARIFYING_RE.match(c.group(0)) and any(a <= c.start() < b for a, b in asides) for c in cues)


_ZH_WORD_RE = re.compile(r"[\u4e00-\u9fff]{3,12}")
_SPACE_BESIDE_ZH_RE = re.compile(r"(?<=[\u4e00-\u9fff])\\ |\\ (?=[\u4e00-\u9fff])")


# A clock hour said in Chinese ("十点", "晚上 9 点"): the part of the day, the hour in figures or Chinese numerals.
_CLOCK_HOUR_RE = re.compile(r"(?P<part>上午|下午|晚上|早上|凌晨|中午|傍晚|夜里)?\s?(?P<h>[一两二三四五六七八九十]{1,3}|\d{1,2})\s?点")
_AFTERNOON = (None, "下午", "晚上", "傍晚", "夜里")  # parts of the day whose hours may be read on the 24-hour clock (None: no part said)


def _clock_pattern(old: str) -> str:
    """An hour said in Chinese as a record may write it: in figures or Chinese numerals, with or without a space, and
    an hour of the afternoon or evening on the 24-hour clock too ("说十点多叫车就多收 20 块" / "夜间 22 点以后 加收 20 元");
    "" when `old` is no such hour. Not inside another hour ("2 点" in "22 点") or a time with minutes ("十点半")."""
    m = _CLOCK_HOUR_RE.fullmatch(old.strip())
    hour = zh_number(m.group("h")) if m else 0
    if not 0 < hour <= 24:
        return ""
    hours = {hour} | ({hour + 12} if hour < 12 and m.group("part") in _AFTERNOON else set())
    said = "|".join(re.escape(form) for h in sorted(hours, reverse=True) for form in dict.fromkeys((str(h), _zh_numeral(h))))
    return rf"(?<![\d一二三四五六七八九十两])(?:{said})\s?点(?![半\d一二三四五六七八九十])|(?<![\d:])(?:{'|'.join(str(h) for h in sorted(hours))}):00(?!\d)"


def _old_pattern(old: str) -> str:
    """How the old value is found in a record: as said, or a tool in any of its spellings
    ("no influx any more" → "readings go into InfluxDB"), or an hour in any of its (`_clock_pattern`)."""
    if clock := _clock_pattern(old):
        return clock
    spellings = tool_spellings(old) or number_spellings(old)
    # A Latin name touching Chinese text is still that name ("宋PLUS我也看过", "用的是Redis做缓存"): only
    # letters and digits around it make it part of another word.
    # ("北京青麦" is "北京的青麦画室" too: 的 between Chinese words may be said or left out; so may a space beside Chinese
    # writing: "6 个月" is "6个月".)
    # ("120分钟" is "120 分钟" too: a space may stand where Chinese meets a figure or a Latin word.)
    return "|".join("的?".join(map(re.escape, s)) if _ZH_WORD_RE.fullmatch(s) else _SPACE_BESIDE_ZH_RE.sub(r"\\s*", _spaced_anywhere(s)) if is_chinese(s)
                    else rf"(?<![A-Za-z0-9_]){_spaced_anywhere(s)}{'s?' if _WEEKDAY_EN_RE.fullmatch(s) else ''}(?![A-Za-z0-9_])"
                    for s in sorted(spellings, key=len, reverse=True))


def _spaced_anywhere(value: str) -> str:
    """`value` escaped, with an optional space wherever Chinese writing meets a figure or a Latin letter."""
    return _ZH_MEETS_LATIN_RE.sub(r"\\s*", re.escape(value))


_ZH_MEETS_LATIN_RE = re.compile(r"(?<=[0-9A-Za-z])(?=[\u4e00-\u9fff])|(?<=[\u4e00-\u9fff])(?=[0-9A-Za-z])")


# A day of the week, which a record may say in the plural ("lost the Tuesday slot" / "sessions are Tuesdays and Thursdays").
_WEEKDAY_EN_RE = re.compile(r"(?:mon|tues|wednes|thurs|fri|satur|sun)day", re.IGNORECASE)


def _tools_taken_up(sentence: str, own: str) -> Correction | None:
    """The tool a weak cue says is in use now, and the one of its kind the sentence gives up
    ("大家根本不开 Discord，现在全部在 Telegram 了": Telegram, not Discord)."""
    now = [(k, v) for k, v in values(own) if k.startswith("tool:")]
    if len({value_key(v) for _, v in now}) != 1:
        return None
    return Correction(clause=_clause_of(sentence), old=_other_tool_of_its_kind(sentence, now[0][1]), new=now[0][1], weak=True)


def _two_of_a_kind(text: str) -> bool:
    kinds = [kind for kind, value in values(text) if kind.startswith("tool:")]
    return len(kinds) != len(set(kinds))


def _tool_taken_up(own: str, cue: re.Match[str], sentence: str) -> bool:
    """A tool said to be in use now, not merely in use: "readings are in SQLite now" (now after the
    tool), "现在全部在 Telegram 了" (a change of state), "最后选了 Postmark", "audio storage 已经 migrate
    完了，现在全部在 Cloudflare R2" (the move said in the clause before)."""
    if any(is_cjk_char(ch) for ch in cue.group(0)):
        # ("下个月起全部走极兔": everything goes by it from then on; so "现在全部都放在 Shopee 上卖".)
        return bool(re.search(r"了|改|换|转|搬|迁|切|(?:全部|都|统一|一律)(?:走|用|放在|放到|挂在|在)", own) or _MOVED_RE.search(sentence))
    tools = [at for at, kind, _ in values_at(own) if kind.startswith("tool:")]
    return cue.group(0).casefold() != "now" or any(at < own.find(cue.group(0)) for at in tools)


_MOVED_RE = re.compile(r"迁移|搬家|搬过去|\bmigrat(?:e|ed|ion)\b|\bmoved (?:over|everything|it all)\b|\bswitched over\b", re.IGNORECASE)
_TOOL_TAKEN_RE = re.compile(r"(?:换成|换到|改用|换用|切到|切换到|迁到|迁移到|搬到|(?<=统一)换|(?<=全部)换|(?<=都)换)\s*(?P<new>[^，,。；;！!]{1,40})")
_IN_USE_CUE_RE = re.compile(r"now|these days|nowadays|ended up|in the end|现在|目前|如今|最后\w|后来\w|又[改换]|" + _FROM_DAY, re.IGNORECASE)
_NEGATED_RE = re.compile(r"\b(?:no|not|never|without)\b|n't\b|不|没|别|无", re.IGNORECASE)


# A move asked for ("帮我整个迁过去", "迁到阿里云 ECS 吧", "我想把 ORM 换掉", "migrate us over to Neon") and a
# reply that opens by reporting it done ("迁移完成：", "换好了：", "清好了：", "评估加改造都做完了", "Done —", "Migrated.";
# not "太好了").
_MOVE_ASKED_RE = re.compile(r"(?:迁|换|搬|切)(?:过去|过来|到|成|掉)|migrate\s*过去|要换了|改用"
                            r"|\b(?:migrate|switch|swap|move|port)\b(?:\s+[\w.-]+){0,4}?\s+(?:over|across|to)\b", re.IGNORECASE)
_DONE_REPLY_RE = re.compile(r"^\W*(?:(?:[^，,。！!？?\n没未不]{1,10}?(?:都|已经|全部)?)?(?![太真那就这挺])[\u4e00-\u9fff](?:好|完)(?:了|咗)|迁移完成"
                            r"|(?:all\s+)?done\b|migrated\b|switched\b|swapped\b|moved\b)", re.IGNORECASE)


def move_done(parts: list[str], reply: str) -> tuple[int, Correction] | None:
    """A move the user asks for and the assistant's next reply reports done, as the change it
    made, with the index of the sentence naming the tool taken up: "数据库要换了。…我在腾讯云上开了个
    云数据库 MySQL 8.0，帮我整个迁过去" / "迁移完成：…" puts MySQL in the place of the database the
    project named. Asked, a move is only wished for (`_INTENT_RE`); done, it holds. The tool is the
    one named after a request ("迁到阿里云 ECS 吧"), else the last one named before it in its sentence
    ("…开了个云数据库 MySQL 8.0，帮我整个迁过去"), else the one tool the message names ("朋友推荐 Drizzle，
    …。帮我 migrate 过去"); one other of its kind (or, for where it runs, a host) is the old value
    ("Railway 这两周老是 cold start…。迁到阿里云 ECS 吧"). Two of a kind named before a request are a
    choice still open, not a move ("朋友推荐 Drizzle，也有人说 TypeORM 好，帮我换过去")."""
    if not _DONE_REPLY_RE.match(reply):
        return None
    named = [(i, at, kind, value) for i, p in enumerate(parts) for at, kind, value in values_at(p) if kind.startswith("tool:")]
    picked, asked = None, False
    for i, part in enumerate(parts):
        for cue in _MOVE_ASKED_RE.finditer(part):
            asked = True
            own = [t for t in named if t[0] == i]
            after = [t for t in own if t[1] >= cue.end()]
            before = [t for t in own if t[1] < cue.start()]
            if before and any(t[2] == before[-1][2] and value_key(t[3]) != value_key(before[-1][3]) for t in before):
                before = []  # "朋友推荐 Drizzle，也有人说 TypeORM 好，帮我换过去": two of a kind, no one move
            picked = after[0] if after else before[-1] if before else picked
    if picked is None:
        if not asked or len({value_key(v) for *_, v in named}) != 1:
            return None
        picked = named[0]
    index, at, kind, new = picked
    if kind in _HOST_KINDS and re.match(r"\s?的", parts[index][at + len(new):]):
        return None  # "换腾讯云的票据识别 API": a service of that cloud, not the cloud as where it runs ("Billplz 的 account" is Billplz)
    others = {value_key(v): v for *_, k, v in named if value_key(v) != value_key(new) and _kind_fits(k, kind)}
    return index, Correction(clause=_clause_of(parts[index]), old=next(iter(others.values())) if len(others) == 1 else "", new=new)


# A full stop that ends a sentence (not a decimal point or "fig.3"): a clause ends there.
# A full stop before a space ends a clause; so does a space between two Chinese characters in writing
# run on without punctuation ("每半小时一个时段 每个时段限人数 到点凭码上索道 现在节假日下站排队排到停车场").
_FULL_STOP_RE = re.compile(r"(?<=[a-z0-9)\]])\.\s+", re.IGNORECASE)
_STOP_RE = re.compile(r"(?<=[a-z0-9)\]])\.\s+|" + CJK_SPACE, re.IGNORECASE)


_FROM_VALUE_ZH = re.compile(r"从\s*(?P<v>[^，,。；;从]{1,16}?)\s*(?=(?:调|改|挪|升|降|拉长|缩短|推迟|提前|延后|延长|换|涨|加|减|砍|变|提|放宽|收紧)[^，,。；;到]{0,2}到"
                            r"|(?:转|换|改)(?:成|为))")
_FROM_VALUE_EN = re.compile(r"\bfrom\s+(?P<v>[^,;!?]{1,24}?)\s+(?=to\b)", re.IGNORECASE)
_BEFORE_RE = re.compile(r"(?:之前|以前|原来|原先|本来|先前|起初)|\b(?:used to be|previously|originally)\b", re.IGNORECASE)


def _now_only(clause: str) -> tuple[str, str]:
    """`clause` without what it says held before, and that part: "从 0.6 调到 0.75" → "调到 0.75",
    "moved from June 14 to June 21" → "moved to June 21", "半径之前是200米，现在是500米了" →
    "半径，现在是500米了" (a sub-clause's "before" part goes when another sub-clause says a
    value of the same kind)."""
    text, dropped = clause, []
    for pattern in (_FROM_VALUE_ZH, _FROM_VALUE_EN):
        for m in reversed(list(pattern.finditer(text))):
            if values(m.group("v")):
                dropped.append(m.group("v"))
                text = text[: m.start()] + text[m.end():]
    parts = re.split(r"(?<=[，,；;])", text)
    for i, part in enumerate(parts):
        before = _BEFORE_RE.search(part)
        if before is None:
            continue
        held = [(at, k, v) for at, k, v in _values_at(part) if at > before.start()]
        elsewhere = {k for j, other in enumerate(parts) if j != i for k, _ in values(other)}
        if len(held) == 1 and held[0][1] in elsewhere:
            at, _kind, value = held[0]
            dropped.append(part[before.start(): at + len(value)])
            parts[i] = part[: before.start()] + part[at + len(value):]
    text = "".join(parts)
    text = re.sub(r"\s{2,}", " ", re.sub(r"(?<=[，,；;])\s*[，,]|^\s*[，,]\s*", "", text)).strip()
    return (text, " ".join(dropped)) if dropped else (clause, "")


# A speaker correcting themselves after an ellipsis ("跑步机一般跑30分钟……不对，20分钟，再多左膝就疼",
# "upload 上限是 10MB…… wait, 是 20MB, not 10MB，前端已经放开了"): the sentence is stored as corrected.
# "…", or a dash ("10.13 — scratch that, it's 10.15", "ggml-small.bin —— my bad，说错了，…"),
# then a word that takes back what came before it.
# Said without a pause too, when the word takes the first part back itself: "订单每天晚上九点截止 不对 其实是八点半",
# "order cut-off is 8pm the night before. oh wait, no, it's 6pm", "30/45 的，oh wait 不对，…现在手上是 25/50 的".
_SELF_CORRECTION_RE = re.compile(
    r"^(?P<said>.+?)(?:…+|\.{3,}|\s*[—–]+\s*|\s-\s"
    r"|[，,。.;；\s]\s*(?=(?i:(?:oh,?\s+)?(?:wait,?\s+no\b|no,?\s+wait\b|no,?\s+sorry\b|sorry,?\s+no\b|wait,?\s+不对))|(?:啊|哎|唉|呃|哦|噢)?不对(?![劲头味])))"
    r"\s*(?P<fix>(?:(?:哎|唉|啊|呃|嗯|哦|噢|(?i:oh),?)[，,\s]*)?我?"
    r"(?i:不对|等等|等下|等一下|哦不|噢不|不是|搞错|说错|记错|弄错|说岔|搞混|弄混|记混|wait\b|no\b|sorry\b|actually\b|i mean\b|oops\b"
    r"|scratch that\b|my bad\b|hold on\b|hang on\b|no wait\b|well,?\s+(?:were|was|used to be)\b).*)$")
_MARKERS_ONLY_RE = re.compile(
    r"^(?:(?:不对|等等|等下|等一下|哦不|噢不|(?:哎|唉|啊|呃)?我?(?:搞错了|说错了|记错了|弄错了|说岔了|搞混了|弄混了|记混了)|(?:oh\s+)?wait|oh|no|sorry|actually|i mean|oops"
    r"|scratch that|my bad|hold on|hang on|no wait|that'?s (?:wrong|not right)|that is (?:wrong|not right))[\s,，!！.。]*)+$",
    re.IGNORECASE)
# After a dash only a word that takes the first part back ("— scratch that", "—— 我搞混了"): "— actually,
# we never deploy on Tuesdays" goes on, it does not correct.
_RETRACT_RE = re.compile(r"^(?:(?:哎|唉|啊|呃|嗯|哦|噢)[，,\s]*)?我?(?:说错|记错|搞错|弄错|说岔|搞混|弄混|记混|不对)"
                         r"|^(?:oh,?\s+)?(?:scratch that|my bad|i mean|sorry|no,? wait|wait,? no|no,? sorry|wait,?\s+不对|hold on|hang on|oops|actually,? (?:make it|it's|it is|i meant?))\b", re.IGNORECASE)
# What a self-correction that names no typed value replaces: the last thing said to be ("这个月读的是
# The Glass Orchard", "笔用的是狼毫").
_LAST_PREDICATE_RE = re.compile(r"(?:用的是|叫做|是|为|叫|用|\bis called|\bis named|\bcalled|\bnamed|\bis|\bare|\bwas|'s)\s*(?P<old>(?:(?!\.\s)[^，,。；;:：]){1,40}?)\s*$", re.IGNORECASE)


_PAUSE_FIX_RE = re.compile(r"^(?:哦|噢|啊|嗯|oh,?)\s*(?:应该|其实)?(?:是|it's|it is)\b", re.IGNORECASE)
_LOOKUP_MARKER_RE = re.compile(r"wait|hold on|hang on|等下|等等|等一下", re.IGNORECASE)


# "sorry — I wrote Margaret Pell up there." + "it's Marjorie Pell.": a slip owned, then put right.
_SLIP_RE = re.compile(r"\bi (?:wrote|typed|put|said)\s+[^.;!?]{2,60}?\s*[.;!]?\s*$", re.IGNORECASE)
_SLIP_FIX_RE = re.compile(r"^(?:it's|it is|(?:it|that) should (?:be|say|read)|should be)\s+\S", re.IGNORECASE)


def joined_pauses(parts: list[str]) -> list[str]:
    """Sentences with a pause that the next sentence resolves, joined: "…TTL，30 天… wait 我再翻下
    PRD。" + "哦是 90 天，…" is one self-correction ("…30 天…哦是 90 天，…"); what was said while
    looking it up goes. So is a slip owned and put right in the next sentence ("I wrote Margaret
    Pell up there." + "it's Marjorie Pell." → "I wrote Margaret Pell up there, it's Marjorie Pell.")."""
    out: list[str] = []
    for part in parts:
        if out and _SLIP_FIX_RE.match(part.strip()) and _SLIP_RE.search(out[-1]):
            out[-1] = out[-1].rstrip(" .;!") + ", " + part.strip()
            continue
        if out and _PAUSE_FIX_RE.match(part.strip()):
            before = out[-1]
            cut = max(before.rfind("…"), before.rfind("..."))
            marker = _LOOKUP_MARKER_RE.match(before[cut:].lstrip(".… ")) if cut > 0 else None
            if marker:
                out[-1] = before[: cut].rstrip(".…") + "……" + marker.group(0) + "，" + part.strip()
                continue
        out.append(part)
    return out


def self_corrected(sentence: str) -> Correction | None:
    """A correction said after an ellipsis, applied to what came before it: its clause is the
    sentence as corrected, keeping of the correction only what says more than the change (the
    old value is not repeated). None when the sentence corrects nothing of itself."""
    m = _SELF_CORRECTION_RE.match(sentence.strip())
    if m is None:
        return None
    said, fix = m.group("said").strip(), m.group("fix").strip()
    pause = sentence[len(m.group("said")): m.start("fix")]
    if "…" not in pause and "..." not in pause and not _RETRACT_RE.match(fix):
        return None
    dropped = _took_back(said, fix)
    if dropped is not None:
        return dropped
    # "不对不对 上个月老韩就给我换成2.5号的了": the fix is marked by its lead, whatever cue the rest has.
    marked = _parse_marked(fix)
    marked = marked if marked is not None and marked.new and _RETRACT_RE.match(fix) else None
    if marked is not None and is_chinese(marked.new):
        marked.new = re.split(r"了|\s", marked.new)[0]  # "2.5号的了 原来那个太软": the value, not why
    correction, itself = parse_correction(fix) or _stated_after_a_pause(fix, said) or marked, parse_correction(said)
    if marked is not None and correction is not marked and correction.new.startswith(marked.new):
        correction.new = marked.new  # "换成2.5号的了 原来那个太软": read by its cue too, the value is still only "2.5号的"
    if itself is not None and itself.weak and not itself.old:
        itself = None  # "短链现在默认永不过期，TTL 30 天": a weak word ("现在"), not a change of its own
    its_name = _ITS_NAME_RE.search(fix)  # "no sorry, Deborah was her old one, its Malik": the name it is after all
    if correction is None and its_name is not None and _RETRACT_RE.match(fix):
        correction = Correction(clause=fix, old="", new=its_name.group("new"))
    if correction is None or (itself is not None and (itself.old or not re.search(r"现在是|目前是|\b(?:is|are) now\b", said, re.IGNORECASE))):
        return None  # nothing to apply, or the first part is itself a change ("改成 20……不对，30"), not a plain "现在是"
    if correction.old and correction.old.lower() not in said.lower():
        correction.old = ""  # "上周已经换成 X 了": not a value the first part said
    if not correction.new:
        # "我搞混了，是 Lanterns in the Rain": the new value is what the fix says it is.
        bare = _strip_lead(correction.clause).rstrip(".。!！ ")
        stated = re.match(r"^(?:应该是|其实是|而是|是|it's|it is|make it)\s*(?P<new>[^，,。；;!！]+)", bare, re.IGNORECASE)
        correction.new = stated.group("new").strip() if stated else (bare if 0 < len(bare.split()) <= 3 and not values(bare) and len(bare) <= 30 else "")
        if not correction.new and its_name is not None:
            correction.new = its_name.group("new")
    correction.new = re.sub(r"^(?:就是|而是|应该是|是)\s*", "", correction.new)  # "是 Edgecomb Gray，not Pale Oak"
    correction.new = re.sub(r"\s*了$", "", correction.new)
    opening = values_at(correction.new)[:1]
    if opening and opening[0][0] == 0 and is_chinese(correction.new) and correction.new[len(opening[0][2]):][:1] in ("", " "):
        correction.new = opening[0][2]  # "其实是四点半 快递车四点四十就到": the value, not what follows it
    if not correction.new and not correction.old:
        correction = _other_value_in(fix, said) or correction
    fixed = corrected_content(said, correction)
    if not fixed and correction.new and not correction.old and not values(correction.new):
        last = _LAST_PREDICATE_RE.search(said.rstrip("…. "))
        if last is not None and len(correction.new) <= 40:
            correction.old = last.group("old").strip()
            fixed = said[: last.start("old")] + correction.new
        elif len(said.split()) <= 3 and not is_chinese(said):
            # "A Laser — actually make it a Topper": a short answer is the value itself.
            correction.old = re.sub(r"^(?:a|an|the)\s+", "", said.rstrip(".… "), flags=re.IGNORECASE)
            correction.new = re.sub(r"^(?:a|an|the)\s+", "", correction.new, flags=re.IGNORECASE)
            fixed = said.replace(correction.old, correction.new, 1)
    if not fixed:
        return None
    old_values = [v for k, v in values(said) if v not in fixed]
    old = correction.old or (old_values[0] if len(old_values) == 1 else "")
    kept = []
    for clause in re.split(r"[，,;；]", fix.rstrip("。.!！")):
        clause = clause.strip()
        if not clause or _MARKERS_ONLY_RE.match(clause) or (old and old.lower() in clause.lower()) or _denies_part_of(clause, old):
            continue  # a marker, or what was wrong said again ("30 天那个是验证码的 temp link", "根本不考数学三")
        rest = clause.replace(correction.new, " ") if correction.new else clause
        rest = re.sub(r"^(?:应该是|其实是|而是|是|it's|it is|make it)\s*", "", _strip_lead(rest), flags=re.IGNORECASE)
        for _kind, value in values(rest):
            rest = rest.replace(value, " ")
        if content_tokens(rest) - content_tokens(fixed):  # says more than the corrected part ("14 days" does not)
            # ("不对不对 上个月…": without the marker; "其实是八点半 我妈得…": without the value the record now says)
            said_again = rf"^(?:应该是|其实是|而是|是)?\s*{re.escape(correction.new)}\s*" if correction.new else r"^$"
            kept.append(re.sub(said_again, "", _strip_lead(clause)) or clause)
    chinese = bool(re.search(r"[\u4e00-\u9fff]", fixed))
    sep = "，" if chinese else ", "
    clause = fixed.rstrip("…. ") + (sep + sep.join(kept) if kept else "") + ("。" if chinese else ".")
    return Correction(clause=clause, old=old, new=correction.new)


# "we're on 4-on-4-off — hang on, no, that was last year. they changed the roster …", "the mount
# is an EQ6-R Pro — no wait, I sold that in the spring, it's a ZWO AM5 now": the speaker takes the
# last thing said back as no longer true, then says what holds instead.
_NO_LONGER_RE = re.compile(
    r"^(?:(?:hang on|hold on|no wait|wait|no|sorry|oops|actually|等等|等下|等一下|(?:哦|噢|啊)?不对|哦不|噢不|不是不是)[\s,，!！.。]*)*"
    r"(?P<why>that was (?:last year|last season|before|ages ago|years ago|a while ago|the old \w+|my old \w+)"
    r"|(?:well,?\s+)?(?:were|was|used to be)"  # "the controllers are pro micros... well, were."
    r"|i (?:sold|replaced|got rid of|dropped|ditched) (?:that|it|them)(?:\s+[\w-]+){0,4}?"
    r"|that's (?:old|outdated|not true any ?more|not the case any ?more|changed)|not any ?more"
    r"|那是(?:以前|之前|去年|上学期|老)的?(?:了)?|早就(?:不|没|换|卖)\S{0,6}?了|已经(?:卖了|换了|不用了)"
    # "GA 我三月就拿掉了": what was named is gone.
    r"|[^，,。；;]{0,16}?(?:早就|已经|就)(?:拿掉|去掉|删掉|停掉|卖掉|换掉|停用|不用)了"
    # "我 book 咗私家嗰個 package… 唔係唔係 上個禮拜已經 cancel 咗 最後決定去返公立生": what was booked is off.
    r"|(?P<off>[^，,。；;]{0,16}?(?:早就|已经)\s*(?:cancel(?:led)?|取消|退|推)(?:掉)?\s*了(?=\s)))"
    r"(?:[.。!！]\s*|[,，]\s*|(?<=了)\s+|$)(?P<rest>.*)$", re.IGNORECASE)


def _other_value_in(fix: str, said: str) -> Correction | None:
    """"bridge is a 60 tonne avery. no wait thats wrong, the 60 t one got scrapped in 2023, the one we've got
    now is a 50 tonne", "课是每周日上午 啊不对我记错了 周日上午那是她的少儿班 我们成人班是周六下午": no cue says
    which value is the new one, but the fix holds one value of a kind the first part said and other than
    it (a number with the same word after it: "50 tonne", not "2023,"), which is. A part of the day said
    after both goes with them ("周日上午" → "周六下午")."""
    held = values_at(said)
    found: dict[str, tuple[int, str, int, str]] = {}
    for at, kind, value in values_at(fix):
        for held_at, held_kind, held_value in held:
            if kind != held_kind or value_key(value) == value_key(held_value):
                continue
            if kind == "number" and _word_after(fix, at + len(value)) != _word_after(said, held_at + len(held_value)):
                continue
            found[value_key(value)] = (at, value, held_at, held_value)
    if len(found) != 1 or any(value_key(v) == key for key in found for _, _, v in held):
        return None
    at, value, held_at, held_value = next(iter(found.values()))
    old_part, new_part = _PART_OF_DAY_RE.match(said, held_at + len(held_value)), _PART_OF_DAY_RE.match(fix, at + len(value))
    if old_part and new_part:
        held_value, value = held_value + old_part.group(0), value + new_part.group(0)
    return Correction(clause=fix, old=held_value, new=value)


def _word_after(text: str, end: int) -> str:
    word = re.match(r"\s*([A-Za-z]+|[\u4e00-\u9fff])", text[end:])
    return word.group(1).lower() if word else ""


# "……等下我翻下挂号截图，哦是4月17号": after the pause, "(oh) it's Y" with Y of a kind the first part said.
_OH_IT_IS_RE = re.compile(r"(?:^|[，,。.]\s*)(?:哦|噢|啊|嗯|oh,?\s*)?(?:应该|其实)?(?:是|it's|it is)\s*(?P<new>[^，,。；;!！]+)", re.IGNORECASE)


# "……等下 我刚翻了下招生简章，会计专硕根本不考数学三，是管综加英语二": what the first part said, denied, before "是 Y".
_DENIED_RE = re.compile(r"(?:不|没|并非|\bnot\s+)(?P<x>[^，,。；;\s]{2,16})\s*[，,]?\s*$", re.IGNORECASE)


def _denies_part_of(clause: str, said: str) -> bool:
    """"会计专硕根本不考数学三" against "数学三加英语一": `clause` ends by saying that a part of what `said` says is not so
    (two characters of it in common)."""
    denied = _DENIED_RE.search(clause)
    x = denied.group("x") if denied else ""
    return bool(said) and any(x[i:i + 2] in said for i in range(len(x) - 1))


def _stated_after_a_pause(fix: str, said: str) -> Correction | None:
    held = values(said)
    kinds = {k for k, _ in held}
    for m in _OH_IT_IS_RE.finditer(fix):
        # (A value the first part said already is not the one put right: "是周四下午四点" after "每周三下午四点".)
        stated = [v for k, v in values(m.group("new")) if k in kinds and (k, v) not in held]
        if len(stated) == 1:
            return Correction(clause=fix, old="", new=stated[0])
        if _denies_part_of(fix[: m.start()], said):
            return Correction(clause=fix, old="", new=m.group("new").strip())
    return None


# Something the user has given up, said as such: "I've left the bakery!", "I'm giving up on
# colemak-DH", "快走不走了" (the verb said again, negated).
_GAVE_UP_EN = re.compile(r"\b(?:i've|i have|we've|we have)\s+(?:just\s+|finally\s+)?(?:left|quit)\s+(?:my job at\s+|the\s+|my\s+)?(?P<old>[\w-]{3,})\b"
                         r"|\b(?:i'm|i am|we're|we are)\s+(?:giving up on|done with|quitting)\s+(?:the\s+|my\s+)?(?P<old2>[\w-]{3,})\b"
                         # "so the Stripe integration is dead. rip it out and put Worldpay in": a named service ended.
                         r"|\bthe\s+(?P<old3>(?-i:[A-Z])[\w.-]+)\s+(?:integration|account|contract|subscription|plan|setup|deal)\s+is\s+(?:dead|off|gone|over)\b"
                         # "I've stopped going to AA. … I've switched to SMART Recovery".
                         r"|\b(?:i've|i have|i|we've|we have|we)\s+(?:just\s+|finally\s+)?stopped\s+(?:going to|using|attending)\s+(?:the\s+|my\s+)?(?P<old4>[\w-]{2,})\b",
                         re.IGNORECASE)
_GAVE_UP_ZH = re.compile(r"(?P<old>[\u4e00-\u9fff]{1,3}(?P<v>[\u4e00-\u9fff]))不(?P=v)了")
# Common Chinese surnames, for telling a name ("郑国强退休了") from any two characters before a verb.
# When, said between a name and what the person does ("月底", "三月底", "下个月").
_WHEN_ZH = r"(?:(?:下个?|上个?|这个?)?月底|年底|[一二三四五六七八九十\d]{1,2}\s*月[底初中]?|[上下]个?月|已经|马上)?\s*"
# Where a person's name opens a clause in English, and the words there that are no one's name.
_NAME_OPENS_EN = r"(?:^|[.:;!,]\s+|:\s*|\band\s+|\bfyi\s+)"  # ("staffing news too, Jonah's moving to Bend")
_NOT_A_PERSON_EN = r"mum|mom|dad|father|mother|he|she|they|i|we|my|our|his|her|grandma|grandpa"
# A person named in Chinese writing (老/小/阿 + a character, a surname and a given name, a name before
# 阿姨 / 老师 …, a Latin name), then when ("月底", "下个月"), before what they do.
_PERSON_ZH = (r"(?:^|(?<=[，,。：:；;\s]))(?<!从 )(?P<old>(?:老|小|阿)[\u4e00-\u9fff]|" + SURNAME_ZH
              + r"[\u4e00-\u9fff]{1,2}?(?=\s*(?:阿姨|叔叔|老师|师傅|大姐|大哥)?\s*(?:TIME))"
              r"|[\u4e00-\u9fff]{2}(?=阿姨|叔叔|老师|师傅|大姐|大哥)|(?<![A-Za-z])[A-Z][a-z]{2,})\s*(?:阿姨|叔叔|老师|师傅|大姐|大哥)?\s*TIME"
              r"(?:就|也)?").replace("TIME", _WHEN_ZH)
# "we dropped sidekiq", "Biscuit did not stick", "Snowflake 换掉，就按…": a named thing let go.
_DROPPED = [
    # "康复的事变了 原来那家康复中心太远了 … 从这周起改成康复师上门": the one used before, complained of, is given up (what
    # holds now is said after it). Not "原来那家店挺好的"; not "之前那个力度太小了" (a place or a business, not any "that one").
    re.compile(r"(?:原来|之前|以前)(?:那|这)(?:家|所|间)(?P<old>[\u4e00-\u9fff]{2,6}?)(?:太|不行|不干|关门|倒闭|没法|不能)[^\s，,。；;！!]*"),
    # "SLT have finally binned the two-week thing. we're moving to a one-week timetable": a way of doing things let go, by
    # whoever decides (what holds now is said after it).
    re.compile(r"\b(?:have|has|'ve|'s)\s+(?:finally\s+|just\s+)?(?:binned|ditched|scrapped|dropped|killed off|axed|got rid of)\s+(?:the|that)\s+"
               r"(?P<old>[\w.+-]{3,}(?:\s[\w.+-]{3,})?)\s+(?:thing|idea|setup|system|plan|model)\b", re.IGNORECASE),
    # "News! I didn't get the FH34 in the end. A lady in Ilkley was selling a Camac Excalibur, …": a plan not carried out.
    re.compile(r"\b(?:i|we)\s+(?:didn't|did not|never)\s+(?:get|buy|book|take|go with|go for)\s+(?:the\s+|that\s+)?(?P<old>[\w.+-]{3,})\b[^.!?]{0,20}?\bin the end\b",
               re.IGNORECASE),
    re.compile(r"\b(?:i|we)(?:'ve| have)?\s+(?:just\s+|finally\s+|already\s+)?(?:dropped|ditched|got rid of|moved off|moved away from|stopped using|retired"
               # "I moved us off Railway", "we took the site off Heroku": the one moved named before "off".
               r"|(?:moved|took|got)\s+(?:us|it|everything|it all|(?:the|our)\s+[\w-]+)\s+(?:off|away from))"
               r"\s+(?:the\s+|our\s+|my\s+)?(?P<old>[\w.+-]{3,})\b", re.IGNORECASE),
    # "update：我们 migrate off Hive 了，所有 metrics 表都搬到 ClickHouse 了": mixed writing keeps the verb's plain form
    # (not "we want to migrate off Hive", "下季度要 migrate off Hive": not done yet).
    re.compile(r"(?<!\bto )(?<!要 )(?<!想 )(?<!要)(?<!想)(?<!打算)(?<!准备)(?<!计划)\b(?:migrated|migrate|migrating|moved|move|moving)\s+(?:off|away from)\s+(?:the\s+|our\s+)?"
               r"(?P<old>[\w.+-]{3,})\b(?!\s+(?:next|soon|later|eventually|by)\b)(?![^，,。.;；]*(?:之后|以后|下个?月|下季度|年底前))", re.IGNORECASE),
    # "right, infra. moved us off the droplet over the weekend, we're on a Hetzner CX32": who moved goes unsaid.
    re.compile(r"(?:^|[.:!,]\s*)(?:moved|took|got)\s+(?:us|it all|everything)\s+(?:off|away from)\s+(?:the\s+|our\s+|my\s+)?(?P<old>[\w.+-]{3,})\b",
               re.IGNORECASE),
    re.compile(r"(?:^|[.:!]\s+|:\s*)(?P<old>[A-Z][\w.+-]{2,})\s+(?:did not|didn't|never)\s+(?:really\s+)?st(?:ick|uck)\b"),
    # "we're not on OpenRouteService at all any more", "we no longer use Mailgun": a named thing no longer in use
    # (a capitalised name: "I'm not on nights any more" is no thing given up).
    re.compile(r"\b(?i:we're|we are|i'm|i am|we|i)\s+(?i:not\s+(?:on|using|with)|no longer\s+(?:on|using|use|with))\s+(?i:the\s+)?"
               r"(?P<old>[A-Z][\w.+-]{2,})(?:\s+(?:at all\s+)?any ?more)?(?=[\s,.;!]|$)"),
    # "scrap the 99p endings", "ditch Mailchimp": a decision to let a named thing or a value go (not "drop the
    # table", "kill the server": commands; not "scrap the old dispatch day", which names no value).
    re.compile(r"(?:^|[.:;!]\s+|:\s*)(?:let's\s+|we'll\s+|just\s+)?(?i:scrap|ditch)\s+(?i:the\s+|our\s+|all\s+(?:the\s+|our\s+)?)?"
               r"(?P<old>[A-Z][\w.+-]+|[\w.+-]*\d[\w.+-]*)(?![\w.+-])"),
    # "Aoife stepped down at the AGM", "Trevor's stepped down after three-odd years": someone left a role
    # (not "left", which is mostly a room or a party).
    re.compile(_NAME_OPENS_EN + r"(?:(?:and|but|so|also|oh|then|well|anyway)\s+)?"
               r"(?!(?:" + _NOT_A_PERSON_EN + r"|and|but|so|also|oh|then|well|anyway)\b)"
               # (a name in lower case too, as casual writing has it: "gareth's stepped down, new job + baby").
               r"(?P<old>(?-i:[A-Z][a-z]+)(?:\s(?-i:[A-Z][a-z]+))?|(?-i:[a-z]{3,})(?='s\s+(?:just\s+|finally\s+)?stepped))(?:'s|\s+has|\s+have)?\s+(?:just\s+|finally\s+|now\s+)?"
               r"(?:stepped down|stepped back|is stepping (?:down|back)|retired|is retiring|resigned|quit(?=[,.;:!]| to | for | after |\s*$)|packed (?:it )?in"
               # "Gwen's had her hip replaced and is stepping back for the rest of the season".
               r"|[^.;!?]{3,40}?\band\s+(?:is|has|'s)\s+(?:stepping|stepped)\s+(?:down|back))\b", re.IGNORECASE),
    # "老郑月底退休了", "美玲阿姨三月底退休", "Kelvin 下个月调去上海 office": a person (老/小 + a character, a
    # surname and a given name, a name before 阿姨 / 老师 …, a Latin name) leaves a role; not "我是个退休的老师",
    # "所以我下个月要辞职", "从 Zalando 离职了" (the user's own job, a change of its own).
    re.compile(_PERSON_ZH + r"(?:退休了|退休(?=[，,。；;])|离职了|辞职了|调走了?|调去[^，,。；;\s]{1,12}(?:\s?(?:office|branch|team))?了?)"),
    # "we're off PythonAnywhere", "we came off Heroku": a name (not "we're off tomorrow", "off to Leeds").
    re.compile(r"\b(?:i'm|i am|we're|we are|we've (?:moved|come|got)|we (?:came|got))\s+(?:finally\s+|now\s+)?off\s+(?:of\s+)?(?:the\s+|our\s+)?"
               r"(?P<old>(?-i:[A-Z])[\w.+-]{2,})\b", re.IGNORECASE),
    re.compile(r"(?P<old>[A-Za-z][\w.+-]{2,})\s*(?:那套|这套|那个|这个)?\s*(?:就|也|已经|全|全都|都)?(?:换掉|去掉|拿掉|弃用|下掉|撤掉|撤了|卸了|不用了|不要了|不接了|不搞了)"),
    # "柯桥那个铺子没谈下来", "the Leith flat fell through": a plan that came to nothing.
    re.compile(r"(?:^|(?<=[，,。：:；;\s]))(?P<old>[\u4e00-\u9fff]{2,4}?)(?:那个|这个|那边|那家|那间)(?:铺子|店面?|房子|场地|单子|项目|工作|offer)?"
               r"(?:没谈下来|没谈成|黄了|吹了|泡汤了|没戏了)"),
    re.compile(r"\bthe\s+(?P<old>(?-i:[A-Z])[\w-]{2,})\s+(?:[\w-]+\s+){0,2}(?:fell through|came to nothing|didn't come off)\b", re.IGNORECASE),
    # "my GP switched me off the amitriptyline, … she's put me on pregabalin instead": a medicine stopped.
    re.compile(r"\b(?:switched|taken|took|weaned)\s+(?:me|us|him|her|them)\s+off\s+(?:the\s+|my\s+|his\s+|her\s+)?(?P<old>[\w-]{4,})\b", re.IGNORECASE),
    # "所以半马我退了 (心痛, 报名费不退), 改报了 5 月 17 号的一个 10K": an entry withdrawn, a booking cancelled.
    re.compile(r"(?:^|(?<=[，,。：:；;\s]))(?:所以|那|就)?(?P<old>[\u4e00-\u9fff]{2,4}?)(?:我|我们)(?:已经)?(?:退了|退掉了|取消了|退赛了)"),
    # "the farm emailed, they've had to cancel our yurt": a booking called off (by whoever; "cancel the
    # build" is a command, not ours).
    re.compile(r"\b(?:they|we|i|she|he)(?:'ve|'d| have| had)?\s+(?:just\s+)?(?:had to\s+)?(?:cancel(?:led|ed)?)\s+(?:our|my)\s+(?:[\w-]+\s+)?(?P<old>[\w-]{3,})\b",
               re.IGNORECASE),
    # "the March bonspiel got cancelled, not enough teams entered. so we've entered the one in Dumfries instead".
    re.compile(r"\b(?:the|our|my)\s+(?:[\w-]+\s+)?(?P<old>[\w-]{3,})\s+(?:got|was|has been|'s been|have been|were)\s+(?:cancell?ed|called off|scrapped)\b",
               re.IGNORECASE),
]
# Someone gone elsewhere ("Priya's moved to Bristol for a new job", "Kenneth 上个月跳槽去了竞争对手那边", "老周回
# 安徽老家带孙子了", "Ah Keong 去 Singapore 做工了"): a role left only when the message names who does it now
# (_TAKEN_OVER_RE); otherwise it is news of that person ("Yuki 下个月跳槽去漕河泾了": her office moves).
_GONE_ELSEWHERE = [
    re.compile(_NAME_OPENS_EN + r"(?!(?:" + _NOT_A_PERSON_EN + r")\b)"
               r"(?P<old>(?-i:[A-Z][a-zà-ÿ]+)(?:\s(?-i:[A-Z][a-zà-ÿ]+))?)(?:'s|\s+has|\s+have|\s+is)?\s+(?:just\s+|now\s+)?"
               r"(?:(?:moved|moving)\s+(?:away|(?:up\s+|down\s+|over\s+)?to\s+(?-i:[A-Z])[\w-]+)(?:\s+for\s+(?:a\s+|her\s+|his\s+|their\s+)?(?:new\s+)?(?:job|work))?"
               r"|(?:taken|got|started)\s+a\s+(?:new\s+)?job\b|left\s+(?:the\s+)?(?:company|firm|club|team|school|practice|clinic)"
               # "Malik's leaving us, he's got a job at Rough Trade", "Lucía has stopped teaching online"
               r"|leaving\s+us\b|(?:stopped|quit)\s+(?:teaching|coaching|tutoring|working)\b"
               # "Gary retired as of last friday 🎉 Mona Adeyemi has taken over ops"
               r"|retired\b)", re.IGNORECASE),
    re.compile(_PERSON_ZH + r"(?:跳槽(?:(?:去了?|到了?)[^，,。；;]{0,12})?了?|回[^，,。；;\s]{0,6}老家[^，,。；;]{0,8}?了"
               r"|去\s?[^，,。；;\s]{1,12}\s?(?:做工|打工|工作|上班)了)"),
]
# Who does it now, said after someone went elsewhere.
_TAKEN_OVER_RE = re.compile(r"\b(?:(?:has|have|'s)\s+)?(?:taken|took|takes|taking)\s+(?:it\s+|them\s+|that\s+)?over\b|\bpicked\s+(?:it\s+|them\s+)?up\b"
                            # "so from now on the low keg texts go to Priscilla"
                            r"|\b(?:from now on|now|instead)\b[^.;!?]{0,40}?\bgo(?:es)?\s+to\s+(?-i:[A-Z])"
                            r"|\bstepped in\b|\bnow\s+(?:does|handles|runs|covers)\b|\b(?:is|are)\s+(?:now\s+)?(?:doing|handling|running|covering)\s+(?:it|them)\b"
                            # "Ines is doing all the grading from now on", "I've started with a new tutor, Andrés"
                            r"|\b(?:is|are)\s+(?:now\s+)?(?:doing|handling|running|covering)\s+(?:all\s+)?(?:the\s+)?[\w-]+(?:\s+[\w-]+)?\s+(?:from now on|now)\b"
                            r"|\bstarted\s+with\s+a\s+new\s+[a-z]+\b"
                            r"|交给|改找|改由|换成|由\s?\S{1,8}\s?(?:负责|接手|来管|来做|来弄)|接手|接替|接班|顶上"
                            r"|现在[^，,。；;]{0,16}?(?:在弄|在做|在管|在负责|在跟|来弄|来做|来管)", re.IGNORECASE)
# "所以不走纯商贷了，改组合贷", "择校的事我们改主意了 不去争育才了 …": the thing no longer taken, named between the negated
# verb and 了 (a space ends the clause in Chinese written without punctuation).
# ("不去泰国那个 DZ 了": a thing named by a Latin word after "那个"; not "不用给我列 table 了", no thing given up.)
_THAT_ONE_ZH = r"那个|那家|这个|这家"
_NO_LONGER_TAKEN_ZH = re.compile(r"不(?:再)?(?:走|用|选|报|去|买|做|搞)(?:争|冲|抢|考|读|上)?(?P<old>[\u4e00-\u9fff]{1,6}(?:" + _THAT_ONE_ZH + r")\s?[A-Za-z0-9][\w-]{0,12}(?=\s?了)|[\u4e00-\u9fffA-Za-z0-9]{2,8}?(?=了))\s?了"
                                 # ("不去北京青麦了 改成杭州的白塔画室": the change said whole, read as such by _PAIRS.)
                                 r"(?:[，,]|\s+(?=\S)(?!(?:我们?|就)?(?:改成|换成|改去|改报|改用|改到|换到)))")
# "宋PLUS就不看了", "武功山就不去了", "蛙泳以后再说": the thing named first, then let go (or put off), opening its clause.
# Not "好笔就不用了" / "防蓝光就不要了" (no need of what was offered: a proposal declined).
_LET_GO_ZH = re.compile(r"(?:^|(?<=[，,。！!：:\s]))(?P<old>[\u4e00-\u9fff]{0,4}[A-Za-z][A-Za-z0-9+-]*|[\u4e00-\u9fff]{2,6}?)\s?"
                        r"(?:(?:就|也|先|暂时)?(?:不(?:看|考虑|买|选|去|报|学|练)了|以后再说)"
                        # "闲鱼我不弄了": a thing the user did, stopped ("我" before it; "beach 我是不去了" names no thing).
                        r"|(?:我|我们)(?:就|也|已经)?不(?:再)?(?:弄|搞|用|卖|挂|做|考)了)")
# "宝塔我卸了": a Chinese name before the verb (the run of characters after the last function character).
_DROPPED_ZH_VERB = re.compile(r"(?:我|我们)?(?:那套|这套)?\s*(?:就|也|已经|全|全都|都)?(?:换掉了?|去掉了|拿掉了|弃用了|下掉了|撤掉了?|撤了|卸了|卸载了|不搞了)")
_NOT_A_NAME_ZH = frozenset(["一个", "这个", "那个", "已经", "现在", "之前", "我们", "他们", "东西", "全部", "所有"])


_ASKED_TO_DROP_RE = re.compile(r"(?:你|帮我|麻烦你?|请)把[^，,。；;！!\s]{1,12}?(?:那块|这块|那边|这部分)?$")


def _dropped_zh(part: str) -> tuple[str, int, int] | None:
    m = _DROPPED_ZH_VERB.search(part)
    if m is None or _ASKED_TO_DROP_RE.search(part[: m.start()].rstrip()):
        return None  # "你把下运单那块换掉": asked of the assistant, nothing given up yet
    run = re.search(r"[\u4e00-\u9fff]{2,8}$", part[: m.start()].rstrip())
    # "另一个是宝塔" → 宝塔; "时序库那块我决定换掉了" → 时序库
    pieces = [p for p in re.split(r"[是把的个了在将和与就也]|那块|这块|那边|我?决定|另外|还有|然后|对了", run.group(0)) if len(p) >= 2] if run else []
    last = pieces[-1] if pieces else ""
    if not last or last in _NOT_A_NAME_ZH:
        return None
    return last, part.rindex(last, 0, m.start()), m.end()


# "big news，换拍了！", "音箱换了！", "还有面粉换了！", "我换 paddle 了", "换琴了": the thing in use swapped for another. The records
# name what was used by what it is ("拍子是 Yonex Astrox 88D", "先科的拉杆音箱"), so that word is what is given up.
# Not "就能换气了" (what one can do), "换了两个 night shift" (a swap of something else, named after it). "护工换人了": the
# person in that place swapped.
_SWAPPED_ZH = re.compile(r"(?<![能会可就要想得该交转切替])换\s?(?P<slot>[\u4e00-\u9fff]{1,2}?|[A-Za-z]{3,})\s?了(?=[！!。.，,~～\s]|$)"
                         # (Not "保险我换了 SafetyWing 今年涨价了 … 换成 Genki Explorer 了": who swapped it, and the change said whole.)
                         r"|(?:^|(?<=[，,。！!：:\s]))(?:还有|另外|对了|然后)?(?P<slot2>[\u4e00-\u9fff]{2,3}|[A-Za-z]{3,})(?<!我)\s?(?:也|又)?换(?:人)?了(?=[！!。.，,~～\s]|$)")
# Words after "换" that are no thing ("换个", "换成"), and slots that hold values the value rules change (a time, a place).
_NOT_A_SLOT_ZH = frozenset(["个", "成", "到", "掉", "好", "完", "过", "一", "人", "我们", "已经", "现在", "今天", "最近", "终于", "时间", "地址", "日子",
                            "规则", "地方", "位置", "工作", "早就"])


_NEW_PERSON_ZH_RE = re.compile(r"新来的|新请的|新的是|接手的是|接替")


def _swapped_zh(part: str) -> tuple[str, int, int] | None:
    m = _SWAPPED_ZH.search(part)
    if m is None:
        return None
    slot = m.group("slot") or m.group("slot2")
    if m.group(0).rstrip().endswith("换人了") and not _NEW_PERSON_ZH_RE.search(part, m.end()):
        return None  # "网点也换人了，我朋友不干了": no one said to hold the place now, only news of the change
    if slot in _NOT_A_SLOT_ZH or slot[0] in "个成到掉好完过人" or _from_to(part) is not None or _INTENT_RE.search(part[: m.start()]):
        return None  # "频道也换了, 从 #eng 换成 #standup": the move says both values; "我可能要换组了": not yet
    if any(kind.startswith("tool:") for kind, _ in values(slot)):
        return None  # "厂里 IT 统一换钉钉了": a tool named after 换 is the one taken up, not the one replaced
    return slot, m.start("slot2") if m.group("slot2") else m.start(), m.end()


def _given_up_name(part: str) -> tuple[str, int, int] | None:
    """(what was given up, where the saying of it starts, where it ends), or None."""
    for pattern in (_GAVE_UP_EN, _GAVE_UP_ZH, *_DROPPED):
        m = pattern.search(part)
        if m is not None:
            return next((v for key in ("old", "old2", "old3", "old4") if (v := m.groupdict().get(key))), "").strip(), m.start(), m.end()
    found = _dropped_zh(part) or _swapped_zh(part)
    if found is not None:
        return found
    m = _NO_LONGER_TAKEN_ZH.search(part)
    if m is None:
        m = _LET_GO_ZH.search(part)
        if m is not None and (m.group("old") in _NOT_A_NAME_ZH or any(ch in ZH_STOP_CHARS for ch in m.group("old"))):
            m = None  # "这个以后再说", "beach 我是不去了": no thing named
    if m is None:
        return None
    # "不去泰国那个 DZ 了": the thing is named by what comes before "那个" (the record says "泰国 Pattaya 的 DZ").
    named = re.split(_THAT_ONE_ZH, m.group("old").strip())[0].strip()
    return (named if len(named) >= 2 else m.group("old").strip(), m.start(), m.end())


def _gone_elsewhere(part: str) -> tuple[str, int, int] | None:
    for pattern in _GONE_ELSEWHERE:
        m = pattern.search(part)
        if m is not None:
            return m.group("old").strip(), m.start(), m.end()
    return None


_A_NAME_RE = re.compile(r"[A-Z][a-zà-ÿ]+")  # "I've started with a new tutor, Andrés": the successor, a clause of one word
GIVEN_UP_FOLLOWING = 2  # sentences after the one giving something up that may say what replaced it
GIVEN_UP_MIN_CHARS = 8  # what holds now, said shorter than this, takes the clauses before it along
# A sentence that opens another matter ("Bigger thing: we're doing a charity quiz night…", "另外…"):
# no longer what replaced the thing given up.
_ANOTHER_MATTER_RE = re.compile(r"^(?:(?:another|other|bigger|next|separate) (?:thing|matter|news|question)|(?:also|anyway|btw|oh and|unrelated)\b"
                                r"|另外|还有(?:个|一件)|对了|顺便|别的事)", re.IGNORECASE)
_JOINING_WORD_RE = re.compile(r"^(?:so|and|but|then|所以|于是)\b\s*", re.IGNORECASE)


def given_up_following(parts: list[str], index: int) -> int:
    """How many sentences after parts[index] may say what replaced what it gives up."""
    n = 0
    for part in parts[index + 1: index + 1 + GIVEN_UP_FOLLOWING]:
        if _ANOTHER_MATTER_RE.match(part.strip()) or QUESTION_RE.search(part.strip()) or _given_up_name(part) or _gone_elsewhere(part):
            # another matter, a question ("can we record who graded each record?"), or something else given up
            # ("我换 paddle 了，… 还有我的 doubles partner 要换人了，Kelvin 下个月调去上海 office"): nothing that holds
            break
        n += 1
    return n


# "老宋", "小陈", "阿杰": a person called by the short form of a name; "以后我跟老宋搭", "现在我和小林一起练": who the user goes on with.
_SHORT_NAME_ZH_RE = re.compile(r"(?:老|小|阿)[\u4e00-\u9fff]")
_NEW_PARTNER_ZH_RE = re.compile(r"(?:以后|现在|之后|往后)(?:我)?(?:就)?(?:跟|和)(?P<new>(?:老|小|阿)[\u4e00-\u9fff])(?:搭|一起|配|练|合作|搭档)")


# "… we're moving to a one-week timetable. week A/B can go completely": what else goes with the old way is no part of
# what holds now.
_LET_GO_TOO_RE = re.compile(r"\b(?:can|could|will|should|is going to)\s+(?:all\s+)?(?:go|be dropped|be removed|be deleted)\b", re.IGNORECASE)


def given_up(parts: list[str], index: int) -> Correction | None:
    """What the sentence says the user gave up (`old`), with what the message says after it
    that holds now (`clause`, the clauses that do not name the old thing, at most
    GIVEN_UP_FOLLOWING more sentences): "I've left the bakery! … I'm driving for the veg box co-op
    instead, 8 till 2". None when nothing follows to say what holds now."""
    part = parts[index]
    found = _given_up_name(part)
    elsewhere = None if found is not None else _gone_elsewhere(part)
    if found is None and elsewhere is None:
        return None
    old, start, end = found or elsewhere  # type: ignore[misc]
    # A thing swapped is named by what it is: the new one is that too ("游泳馆换了 … 现在改去家门口的奥体中心游泳馆").
    swapped = found is not None and found == _swapped_zh(part)
    tail = re.sub(r"^\s*了", "", part[end:])  # "… did not stick at all lol." says nothing more of its own; "下掉|了" ends the drop
    # Of a list joined into one unit, the rest of this item only ("更新几件事：阿芳回老家待产了，…; 帮小龙开个账号…;
    # 还有，姐夫在谈松山湖那边一个铺位": the next items are other news).
    tail = tail.split(LIST_ITEM_SEP)[0]
    text = " ".join([tail if len(content_tokens(tail)) >= 3 else "", *parts[index + 1: index + 1 + given_up_following(parts, index)]])
    text = _BRACKETED_RE.sub("", text)  # "半马我退了 (心痛, 报名费不退), 改报了 …": a remark in brackets is no clause of what holds now
    if elsewhere is not None and not _TAKEN_OVER_RE.search(text):
        return None
    kept = [_JOINING_WORD_RE.sub("", c.strip(" ，,;；！!。")).rstrip(".。!！") for c in re.split(r"(?<=[.!?。！？])\s+|[，,;；]", text)
            if (swapped or old.casefold() not in c.casefold()) and not _LET_GO_TOO_RE.search(c)
            and (len(content_tokens(c)) >= 2 or _A_NAME_RE.fullmatch(c.strip(" .!")))]
    lead = re.split(r"(?<=[.!?。！？])\s*", part[:start].strip())[-1]  # "Good, 3rd is plenty for him. also committee news:" → its last sentence
    let_go = _LET_GO_ZH.search(part)
    if (kept and len("".join(kept)) < GIVEN_UP_MIN_CHARS) or (let_go is not None and let_go.start() == start):
        # "…俩人加起来能贷不少，所以不走纯商贷了，改组合贷": too short alone, what led to it comes along;
        # "那我就定纯电了，宋PLUS就不看了", "那就先自由泳吧，蛙泳以后再说": what was chosen is said first.
        kept = [c.strip(" ，,;；") for c in re.split(r"[，,;；]", part[:start])
                if old.casefold() not in c.casefold() and len(content_tokens(c)) >= 2] + kept
    elif kept and (lead.endswith((":", "：")) or part[start:].lstrip().startswith((":", "："))) \
            and len(content_tokens(lead)) >= 2 and old.casefold() not in lead.casefold():
        # What the announcement of the change says it is about ("Bit of a change on the picture round: Priya's
        # moved to Bristol …"): kept at the head of what holds now, which otherwise says "taken it over".
        lead = lead.rstrip(":： ")
        kept[0] = f"{lead}：{kept[0]}" if is_chinese(lead) else f"{lead}: {kept[0]}"
    if not kept:
        return None
    if swapped:
        kept.insert(0, part[start:end].strip())  # "换教练了，现在跟 Jenny…": what the new one is, said with what it replaced
    chinese = is_chinese(" ".join(kept))
    clause = ("，" if chinese else ", ").join(kept).rstrip(".。!！:： ") + ("。" if chinese else ".")  # ("…erroring anyway:" heads a log)
    successors = [n for n in dict.fromkeys(_NAME_RUN_RE.findall(text)) if " " in n and old.casefold() not in n.casefold()]
    partner = _NEW_PARTNER_ZH_RE.search(text) if _SHORT_NAME_ZH_RE.fullmatch(old) else None
    if partner and partner.group("new") != old:
        # "小陈调去北京工作了 … 以后我跟老宋搭": the one the user goes on with now stands where the one who went is named
        # ("搭档是小陈" → "搭档是老宋"), not a tombstone for every record that names them.
        return Correction(clause=clause[0].upper() + clause[1:], old=old, new=partner.group("new"))
    then = parse_correction(text) if found is not None and not swapped else None
    if then is not None and then.new and not then.old and not then.ended and old.casefold() not in then.new.casefold() \
            and _LATIN_NAME_RE.fullmatch(then.new.strip()) and _LATIN_NAME_RE.fullmatch(old):
        # "运维上周把 Mosquitto 下掉了 we moved to EMQX": the tool given up is replaced by the one said to be in use now.
        return Correction(clause=clause[0].upper() + clause[1:], old=old, new=then.new.strip())
    if len(successors) == 1 and re.fullmatch(r"[A-Z][\w'-]+(?: [A-Z][\w'-]+)?", old) and _TAKEN_OVER_RE.search(text):
        # "Gary retired as of last friday 🎉 Mona Adeyemi has taken over ops": the one full name said to take over stands
        # where the one who went is named ("every monday 7am email Gary Pruitt (ops supervisor) …").
        return Correction(clause=clause[0].upper() + clause[1:], old=old, new=successors[0])
    return Correction(clause=clause[0].upper() + clause[1:], old=old, new="", ended=True)


def _took_back(said: str, fix: str) -> Correction | None:
    """The sentence without the clause the speaker took back as no longer true (see
    _NO_LONGER_RE), and with what they said instead; None when the fix is not such a retraction."""
    m = _NO_LONGER_RE.match(fix)
    if m is None:
        return None
    pieces = re.split(r"(?<=[.!?。！？])\s+|[，,;；]\s*", said)
    rest = m.group("rest").strip()
    taken = pieces[-1]
    kept = said[: said.rfind(taken)].rstrip(" ,，;；")
    if not rest:
        # "… the controllers are pro micros... well, were.": what holds is said next, if at all;
        # the rest of the sentence stands without the clause taken back.
        return Correction(clause=kept, old="", new="") if kept and len(pieces) > 1 else None
    if not kept:
        # "analytics 是 Google Analytics……不对，GA 早就拿掉了，现在用的是 Umami": what it is about stays.
        said_of = _LAST_PREDICATE_RE.search(taken)
        if said_of is None and m.group("off"):
            return Correction(clause=rest, old="", new="")  # all of it called off ("…已经 cancel 咗"): what holds is the rest
        if said_of is None or not said_of.start():
            return None
        kept = taken[: said_of.start()].strip() + ("：" if is_chinese(taken) else ":")
    chinese = is_chinese(kept)
    sep = "" if kept.endswith(("：", ":")) and chinese else (" " if kept.endswith(":") else (
        "，" if chinese and not re.search(r"[。！？]$", kept) else (" " if re.search(r"[.!?。！？]$", kept) else ". ")))
    old_values = [v for _k, v in values(taken)]
    return Correction(clause=f"{kept}{sep}{rest}", old=old_values[0] if len(old_values) == 1 else "", new="")


def _clause_of(sentence: str) -> str:
    return re.sub(r"^[,，:：\s—–-]+|[,，\s]+$", "", _strip_lead(sentence))


# Sentence-final particles that end no value ("不是 Frontier 啦", "改成 30 天吧").
_PARTICLES = "啦|啊|呀|哦|喔|吧|呢|嘛|哈"


def _trim_new(new: str) -> str:
    """The value part of what follows "to": "Python 3.12 last Friday" → "Python 3.12"."""
    # "加工费涨到每百斤 10 元了 电费涨得厉害 下个月一号开始": written without punctuation, a space between
    # Chinese words ends the clause, and the value with it.
    new = CJK_SPACE_RE.split(new.strip(), maxsplit=1)[0]
    new = re.split(r"\s了(?=\s|$)", new, maxsplit=1)[0]  # "换成宝虹 Baohong 了 Arches 太贵": the "了" set apart ends the clause
    if re.match(r"[\u4e00-\u9fff]", new):
        new = re.split(r"(?<=[\u4e00-\u9fff])\s+(?=[a-z])", new, maxsplit=1)[0]  # "改成保留一年 downsample 还照旧": a lower-case word opens the next clause
    new = re.sub(r"(?:了|" + _PARTICLES + r")+$", "", new.strip()).strip()  # "改成 30 天吧": the value, not the particle
    opening = values_at(new)[:1]
    if opening and opening[0][0] == 0 and opening[0][1].split(":")[0] in ("number", "amount") and re.match(r"\s+(?:(?![月日号天年点分秒岁个块元度次人周小斤米])[\u4e00-\u9fff]{2,}|\d[\d.]*\s?[\u4e00-\u9fff])", new[len(opening[0][2]):]):
        # "一级护理调到 4200 二级三级不动", "10 斤装我们也降到 65 5斤装不动": the value, not the words after its space
        new = opening[0][2]
    if re.search(r"[\u4e00-\u9fff]", new):
        return new
    kept = re.split(r"\s+(?:last|this|next|yesterday|today|tomorrow|since|because|as of|from|after|before|when|so|over|during)\b", new,
                    maxsplit=1, flags=re.IGNORECASE)[0].strip()
    # "the last Sunday of the month": "last" opens the value itself, nothing before it is one.
    return kept if content_tokens(kept) else new


def _parse_marked(sentence: str) -> Correction | None:
    # "Wait, I said Monday — the sync runs on Tuesday, not Monday": the dash part that states the change.
    segments = [seg.strip() for seg in re.split(r"\s[—–]\s|—|\s-\s", sentence.strip()) if seg.strip()]
    others: list[str] = []
    announced = ""
    if len(segments) > 1:
        stating = [seg for seg in segments if any(p.search(seg) for p in _PAIRS) or any(p.search(seg) for p in _NEW_ONLY)]
        sentence = stating[0] if stating else max(segments, key=len)
        others = [seg for seg in segments if seg is not sentence]
        # "change of plan for Lisbon — work wouldn't sign off my leave, so I've moved it: 3 to 10 November 2027 now": what
        # the change is of, said before the dash.
        announced = next((seg for seg in segments[: segments.index(sentence)] if _PLAN_CHANGED_OF_RE.fullmatch(seg)), "")
    text = _strip_lead(sentence)
    old = new = ""
    clause = text
    bounded = False  # the new value came with its own end ("with Amazon SES", "not X but Y")
    for pattern in _PAIRS:
        m = pattern.search(text)
        if m:
            bounded = True
            old, new = (m.group("old") or m.groupdict().get("old2") or "").strip(), CJK_SPACE_RE.split(m.group("new").strip(), maxsplit=1)[0]
            # The clause keeps what is true: "the port is 5433, not 5432" → "the port is 5433".
            clause = (text[: m.start()] + _kept(m, text)).strip()
            break
    else:
        for pattern in _NEW_ONLY:
            m = _now_said(list(pattern.finditer(text)), text)
            if m:
                # "went up to 120 seconds after the big customer's 300-page invoices": the value, not why.
                new = _trim_new((m.group("new") or (m.groupdict().get("new2") or "")).strip())
                if pattern is _GONE_WITH_RE:
                    # "Severn Valley came back and they've got a waiting list …, so I've gone with the Llangollen Railway
                    # instead": the one other name the sentence gives before the choice is the one given up.
                    before = [n for n in dict.fromkeys(_NAME_RUN_RE.findall(text[: m.start()])) if n.casefold() not in new.casefold()]
                    runs = [n for n in before if " " in n] or before  # "Severn Valley", not the "Well" of "Well, …"
                    old = runs[0] if len(runs) == 1 else ""
                break
    if bounded and not values(new):
        # "现在改成每周六下午 2 点开始，每周都有，不是两周一次了": the "not" restates in words a change whose
        # value was said with "改成"; that value is the change.
        for pattern in _NEW_ONLY:
            m = _now_said(list(pattern.finditer(text)), text)
            said = _trim_new((m.group("new") or (m.groupdict().get("new2") or "")).strip()) if m else ""
            # (Not words that name the old value too: "两个 update: 目标比赛换了, 上马不抽了, 改跑杭马 (11 月 1 号)" heads
            # the change, it is no new value of its own.)
            if values(said) and not (old and old.strip() in said):
                old, new, bounded = "", said, False
                break
    old = re.split(r"\s[—–-]\s|[—–…]", old)[0].strip()
    old = re.sub(r"\s*(?:" + _PARTICLES + r"|了)+$", "", old)  # "scanner 不是 Frontier 啦，是 Noritsu", "不是周四了 是周三晚上 7 点"
    if len(old.split()) > 4:
        old = ""  # not a value but a whole clause: find the record by the new value instead
    clause = re.sub(r"^[,，:：\s—–-]+|[,，\s]+$", "", clause)
    old_values, new_values = values(old), values(new)
    new_dates = [v for k, v in new_values if k == "date"]
    if len(old_values) == 1 and old_values[0][0] == "day" and len(new_dates) == 1:
        # "the survey's on the 21st of March, not the 14th": the day said short is the record's date
        # ("14 March"), which the new date replaces whole.
        old, new = "", new_dates[0]
    if len(old_values) == 1 and len(old.split()) > 1:
        same_kind = [v for k, v in new_values if k == old_values[0][0] and v != old_values[0][1]]
        if same_kind:
            # "I said we close on Mondays, but … Tuesdays": the value that changed, not the clause.
            old, new = old_values[0][1], same_kind[-1]
    kinds = {k for k, _ in values(old)}
    if kinds and not kinds & {k for k, _ in values(new)}:
        # "the replica is on port 6432 — it goes through pgbouncer, not 5432": the new value
        # of the old one's kind is in the other part of the sentence.
        for seg in others:
            found = [v for k, v in values(seg) if k in kinds and v != old]
            if found:
                new, clause = found[-1], re.sub(r"^[,，:：\s—–-]+|[,，\s]+$", "", _strip_lead(seg))
                break
    if not old and new and (held_now := _value_said_of_now(text, new)):
        # "Keith's cataract operation got moved to 10 June, so we're not leaving until 29 June now": the value
        # said of now, in a clause after the move, is what holds; the move is its reason.
        new = held_now
    elif not old and new and not _RECOUNTED_RE.search(text):
        # "提醒时间改成 10:00 了，很多人 9:30 还没到": another value of the new one's kind in the
        # sentence is the one it replaces (not of a sum counted again: "算漏了 1 到 3 月的绩效").
        stated = values(new)
        rest = text.replace(new, " ", 1)  # values the new part itself says are all new
        # ("…学生都卡着最后一分钟晃过来": "一分钟" is "a minute", no setting.)
        # A lead time ("到期前 3 天提醒一下卖家", "remind them 2 days before") is a slot of its own, not the old value.
        others = [v for at, k, v in values_at(rest) if stated and k == stated[-1][0] and v not in {sv for _, sv in stated}
                  and not v.startswith("一") and not _LEAD_TIME_RE.search(rest[max(0, at - 4):at]) and not _STILL_RE.search(rest[max(0, at - 12):at])
                  and not _ANYWAY_RE.search(re.split(r"[，,。；;]", rest[:at])[-1])]
        if not stated:
            # "linyu.dev 续费太贵没续，主域名改成 linyu.me": a host name replaced by another host name.
            host = _HOST_RE.fullmatch(new.strip())
            others = [h for h in _HOST_RE.findall(rest) if host and h != host.group(0)]
        if len(others) == 1 and not stated:
            old = others[0]
        elif len(others) == 1:
            old, new = others[0], stated[-1][1]
            prefix = _PART_OF_DAY_RE.match(new)
            if prefix and not old.startswith(prefix.group(0)):
                new = new[len(prefix.group(0)):]  # "六点" → "五点", the record keeps its "早上"
    if old and len(new) > 8 and re.search(r"[\u4e00-\u9fff]", new):
        for pattern in _NEW_ONLY:
            m = pattern.search(new)
            if m and m.groupdict().get("new"):
                new = m.group("new").strip().rstrip("了")
                break
    new = _align_new(old, new, bounded=bounded)
    if old and bounded and len(old.split()) <= 2 and len(new.split()) > PAIR_NEW_MAX_WORDS and _GOES_WRONG_RE.search(new):
        # "numbers from the website contact form are coming in as 087 whatever, not E.164": what keeps
        # going wrong, said against the value it should be, is no value that replaces it.
        return None
    return Correction(clause=clause or text, old=old, new=new, context=announced)


_PLAN_CHANGED_OF_RE = re.compile(r"(?:(?:a |bit of a |small |slight |big )?change of plans?|plans? changed?)\s+(?:for|on|re|about|with)\s+[^,.;!?]{2,40}",
                                 re.IGNORECASE)
_LEAD_TIME_RE = re.compile(r"(?:前|提前|之前|以前)\s*$")
# "每场上冰改成 75 分钟 浇冰还是 15 分钟": a value said to stay as it is, not the one replaced.
_STILL_WORDS = r"仍然|仍是|依然|依旧|照旧|\bstill(?: is| at)?|\bstays?(?: at)?|\bremains?(?: at)?"
_STILL_RE = re.compile(rf"(?:还是|保持|{_STILL_WORDS})\s*$", re.IGNORECASE)
# Narrower, for a value said beside a change: "还是" says it stays only after "不变" ("时长不变 还是一个半小时"); alone it may
# say a value again ("不对，还是 30 吧").
_STAYS_RE = re.compile(rf"(?:不变|不动|照旧)[，,\s]*还是\s*$|(?:{_STILL_WORDS})\s*$", re.IGNORECASE)
# A part of the day a clock time is said with ("早上六点", "晚上九点").
_PART_OF_DAY_RE = re.compile(r"上午|下午|晚上|早上|凌晨|中午|傍晚|夜里")
PAIR_NEW_MAX_WORDS = 6
_GOES_WRONG_RE = re.compile(r"\b(?:are|is|keep|keeps)\s+(?:still\s+)?(?:coming|arriving|showing up|turning up|being|getting|ending up)\b|\bstill\b",
                            re.IGNORECASE)


_HOST_RE = re.compile(rf"(?<![\w.@/-]){HOST_PATTERN}(?![\w.-])", re.IGNORECASE)
_NOW_WORD_RE = re.compile(r"现在|目前|如今|these days|\bnow\b", re.IGNORECASE)


def _now_said(found: list[re.Match[str]], text: str) -> re.Match[str] | None:
    """Of several changes in one sentence, the one said of now ("最近涨到快 100 块一卷了, …, 现在日常全
    换成 Kodak Gold 200 了": the film, not its price); else the first."""
    for m in found:
        clause = re.split(r"[，,；;。]", text[: m.start()])[-1]
        if len(found) > 1 and _NOW_WORD_RE.search(clause):
            return m
    return found[0] if found else None


LEAD_ONLY_MAX_WORDS = 4  # "I was wrong about the routing last time, sorry.": what the lead says beside itself


def lead_only(sentence: str) -> str | None:
    """What a sentence that only says a correction is coming says beside its marker ("I was wrong
    about the port." → "about the port."; "我之前说错了。" → ""), or None when it has no marker or says
    more (a value, or more than a few words)."""
    rest = _strip_lead(sentence)
    if rest == sentence.strip() or values(rest) or len(content_tokens(rest)) > LEAD_ONLY_MAX_WORDS:
        return None
    return rest


def _strip_lead(text: str) -> str:
    """Without its correction markers ("Actually I was wrong, …" → "…")."""
    text = text.strip()
    for _ in range(3):
        shorter = _LEAD_RE.sub("", text).strip()
        if shorter == text:
            break
        text = shorter
    return text


def _kept(m: re.Match[str], text: str) -> str:
    """The matched span with the old value and its negation dropped."""
    span = m.group(0)
    pattern = m.re.pattern
    if pattern.startswith((r"\bnot\s+", "不是")) or "(?:而)?不是" in pattern:
        return m.group("new") + text[m.end():]
    if "instead of" in pattern or "[,，]\\s*not" in pattern or "不是(?P<old>" in pattern:
        return m.group("new") + text[m.end():]
    if pattern.startswith(r"\bfrom"):
        return span.replace(m.group("old"), "").replace("from", "", 1).replace("  ", " ").strip() + text[m.end():]
    if "离职" in pattern:  # "我已经从 Zalando 离职了，4 月 1 号开始在 N26 做 …" → "4 月 1 号开始在 N26 做 …"
        return re.split(r"[，,]", span, maxsplit=1)[1].strip() + text[m.end():]
    if pattern.startswith("从"):
        return span[len("从") + len(m.group("old")):] + text[m.end():]  # "域名从 lin.dev 换成了 linwei.design" → "换成了 linwei.design"
    if "(?:就)?(?:不再用|不用)了" in pattern:
        return m.group("new") + text[m.end():]
    if pattern.startswith((r"\bi (?:said", r"\bi (?:wrote")):  # "I wrote Margaret Pell up there. it's Marjorie Pell"
        return m.group("new") + text[m.end():]
    return span + text[m.end():]


def _align_new(old: str, new: str, *, bounded: bool = False) -> str:
    """The new value with the shape of the old one: "the port is 5433" for old "5432" → "5433"."""
    if not old or not new:
        return new
    shape = re.escape(old)
    shape = re.sub(r"\d+", r"\\d+", shape)
    if shape != re.escape(old):
        m = re.search(rf"(?<![\w-]){shape}(?![\w-])", new)
        if m:
            return m.group(0)
    number = re.match(r"\d+(?:\.\d+)?(?![\d.])", new)
    if re.fullmatch(r"\d+(?:\.\d+)?", old) and number and is_chinese(new):
        # "不是 14.5 了 … 改成 15% 起扣": a bare old number is the record's number; its unit stays where it is.
        return number.group(0)
    old_vals, new_vals = values(old), values(new)
    if len(old_vals) == 1 and old_vals[0][1].strip() == old.strip() and new_vals:
        kind = old_vals[0][0]
        same = [v for k, v in new_vals if k == kind]
        if same and kind.startswith("tool:"):
            # "迁到了阿里云 ECS（杭州）": the provider with the product it ends on; "迁到华为云 RDS for MySQL":
            # the provider (the rest says what of it).
            product = re.fullmatch(rf"\s*{re.escape(same[-1])}(\s*[A-Z][A-Z0-9]{{1,5}})\s*", re.sub(r"[（(][^）)]*[）)]", "", new))
            return same[-1] + (product.group(1) if product else "")
        if same:
            return same[-1]
    if is_chinese(old) or is_chinese(new) or re.search(r"[\u4e00-\u9fff]", new):
        return new
    # "Dagster last week for the nightly run" → "Dagster": what follows a time word is not the value.
    new = re.split(r"\s+(?:last|this|next|yesterday|today|since|because|as of|on|in|for|at)\b", new, maxsplit=1, flags=re.IGNORECASE)[0]
    words = [w for w in new.split() if w.lower().strip(".,") not in _FILLERS]
    while len(words) > 1 and words[0].lower() in ("the", "a", "an", "our"):
        words = words[1:]
    if bounded:
        return " ".join(words) or new
    width = max(1, len(old.split()))
    return " ".join(words[:width]) if len(words) > width else " ".join(words) or new


_FILLERS = frozenset({"now", "too", "also", "already", "anymore", "instead", "then", "please"})


# The name a fix says it is after all ("…, its Tomasz since the new year").
_ITS_NAME_RE = re.compile(r"(?:^|[,，;；.]\s*)(?i:it's|its|it is)\s+(?P<new>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?)")
_PLACE_LEAD_RE = re.compile(r"(at|in|on|to|from|with)\s+", re.IGNORECASE)


def _value_around(record: str, m: re.Match[str], correction: Correction) -> tuple[int, int, str] | None:
    """The record's typed value that the old word is part of ("May" of "12 May"), with the new value
    of that kind, when the old word is no value of its own (a month alone is part of a date): (start, end, new value)."""
    if any(kind != "month" for kind, _ in values(correction.old)):
        return None
    for at, kind, value in _values_at(record):
        if at <= m.start() and m.end() <= at + len(value) and (at, at + len(value)) != m.span():
            new = [v for k, v in values(correction.new) if k == kind]
            return (at, at + len(value), new[0]) if len(new) == 1 else None
    return None


# The words of a model after its brand, to the end of the clause ("Salomon X Ultra 4 mid GTX，"): capitalised, digits, or
# the few lower-case words model names use.
_MODEL_WORDS_RE = re.compile(r"(?:\s+(?:[A-Z0-9][\w.+-]*|mid|low|high|pro|max|plus|lite|mini)){2,}(?=\s*(?:[，,。.;；!！?？)）]|$))")
# A name with its short form after it in brackets ("上海马拉松 (上马)", "Royal Horticultural Society (RHS)"): the
# name before the bracket, when the old value is the short form.
_ALIAS_OPEN_RE = re.compile(r"(?:^|(?<=[的是在\s,，:：、]))(?P<name>[^\s的是在,，:：、()（）]{2,12}|(?:[A-Z][\w'&-]*\s+){0,4}[A-Z][\w'&-]*)\s*[（(]\s*$")
_ALIAS_SHUT_RE = re.compile(r"\s*[）)]")


def corrected_content(record: str, correction: Correction) -> str | None:
    """`record` with the old value replaced by the new one, when that can be done literally:
    the old value said, or, for each kind of value the correction states (a day of the month,
    a clock time, a percentage…), the record's one value of that kind — or, among several,
    the one whose surrounding words the correction repeats ("p99 是 180ms，目标 100ms" /
    "p99 降到 95ms" → the 180ms)."""
    named = counterpart(record, correction)
    if named:
        # The name replaced, wherever the record says it ("romanization 请用 Yale, 她用 Yale"); a value the sentence
        # says beside it changes too ("MacRannoch, 1960s").
        said_twice = len(re.findall(_old_pattern(named), record)) > 1
        renamed = (re.sub(_old_pattern(named), lambda _m: _name_of(correction.new.strip()), record) if said_twice else
                   corrected_content(record, replace(correction, old=named, new=_name_of(correction.new.strip())))) or record
        if _renamed(correction.clause):
            return renamed  # a new name only ("found … on the 1840 tithe map …, so that's what we're calling it now": no value of it)
        if all(v in _name_of(correction.new.strip()) for _, v in values(correction.clause)):
            return renamed  # ("upgraded to Python 3.12 last week": its number is the name's own, no value said beside it)
        return corrected_content(renamed, replace(correction, new="")) or renamed
    if correction.count:
        m = _count_in(record, correction.count[1])
        if m is None or _count_value(m) == correction.count[0]:
            return None
        return record[: m.start("num")] + _count_written_like(correction.count[0], m.group("num")) + record[m.end("num"):]
    keyed = _keyed_rewrite(record, correction.clause)
    if keyed is not None:
        return keyed
    if correction.old and correction.new:
        day = _day_in_either_language(record, correction)
        if day is not None:
            return day
        counted = _old_counted(record, correction)
        if counted is not None:
            # "每季是 12 round 不是 10": the 10 of the rounds changes, not the "10 番" beside it.
            for m in reversed(counted):
                record = record[: m.start()] + correction.new + record[m.end():]
            return record if counted else None
        pattern = re.compile(_old_pattern(correction.old), re.IGNORECASE)
        m = pattern.search(record)
        if m and any(m.start() < at + len(v) and at < m.end() and not (m.start() <= at and at + len(v) <= m.end())
                     and kind == "weekday" for at, kind, v in _values_at(record)):
            # "周一" across the record's "周一三五" is part of another value, not the one said
            # (only weekdays: "七点" against "七点十分" is the record's clock time said short).
            m = None
        if m and len(pattern.findall(record)) > 1 and values(correction.old):
            # "调到 30，同时排查慢 SQL，调到 30" / "最后定的是 40，不是 30": the record says the old
            # value twice, and neither may stay.
            return pattern.sub(lambda found: correction.new, record)
        whole = _value_around(record, m, correction) if m else None
        if whole is not None:
            # "12 May" / "it's 2 June now, not May": the month said alone is the record's whole date.
            start, end, new_value = whole
            return record[:start] + new_value + record[end:]
        if m:
            start = m.start()
            # "两台物理机" → "三台 ECS": the count that goes with the old value goes with it.
            before = values(record[max(0, start - 6):start])
            if before and before[-1][0].startswith("count") and values(correction.new)[:1] and values(correction.new)[0][0].startswith("count") \
                    and record[:start].rstrip().endswith(_count_tail(record[:start])):
                start = record[:start].rstrip().rfind(_count_tail(record[:start]))
            end = m.end()
            if not re.search(r"\d", correction.old + correction.new):
                # "MySQL 8.0" → "PostgreSQL": the old name's version is not the new one's.
                version = re.match(r"\s*v?\d+(?:\.\d+)*(?![\w.]\w)", record[end:])
                end += version.end() if version else 0
            elif not re.search(r"\d", correction.old) and _MODEL_RE.search(correction.new):
                # "Frontier SP-500" → "Noritsu HS-1800": the old name's model goes with it.
                model = re.match(r"\s*" + _MODEL_RE.pattern, record[end:])
                end += model.end() if model else 0
            if re.fullmatch(r"[A-Z][\w-]+", correction.old.strip()) and len(correction.new.split()) >= 2 and (run := _MODEL_WORDS_RE.match(record, end)):
                end = run.end()  # "Salomon X Ultra 4 mid GTX" → "La Sportiva TX4 mid": the brand's model goes with it
            new = correction.new
            clock = values_at(record[end:])[:1]
            if clock and clock[0][1] == "time" and not record[end:end + clock[0][0]].strip() and any(k == "time" for k, _ in values(new)):
                end += clock[0][0] + len(clock[0][2])  # "每周三晚上七点半" / "不是周三晚上了 改成每周日下午两点": its hour goes with it
            if new.startswith("每") and record[:start].endswith("每"):
                new = new[1:]  # "…每周三…" / "改成每周日…": one "每"
            surname = re.match(r"\s+[A-Z][a-zà-ÿ'-]+\b", record[end:])
            if surname and re.fullmatch(r"[A-Z][a-zà-ÿ'-]+", correction.old) and re.fullmatch(r"[A-Z][\w'-]+(?:\s[A-Z][\w'-]+)+", new):
                end += surname.end()  # "Gary" → "Mona Adeyemi" takes "Gary Pruitt" whole
            said_after = re.match(r"\s+([\w'-]+)", record[end:])
            if said_after and len(new.split()) > 1 and new.split()[-1].casefold() == said_after.group(1).casefold():
                end += said_after.end()  # "the Severn Valley Railway" → "the Llangollen Railway", not "… Railway Railway"
            place = re.match(r"(?:\s+[A-Z][\w'-]*){0,3}\s+" + _PLACE_NOUN + r"\b", record[end:])
            the = re.search(r"\bthe\s+$", record[:start], re.IGNORECASE)
            if place and the and re.fullmatch(r"the\s.+\s" + _PLACE_NOUN, new, re.IGNORECASE):
                # "the Dumbarton Middle School field" → "the Overlea turf": the place's whole name goes, its "the" once
                start, end = the.start(), end + place.end()
            alias = _ALIAS_OPEN_RE.search(record[:start])
            shut = _ALIAS_SHUT_RE.match(record, end)
            if alias and shut:
                start, end = alias.start("name"), shut.end()  # "上海马拉松 (上马)" → "杭马": the name and its short form go together
            lead = _PLACE_LEAD_RE.match(new)
            if lead and re.search(rf"\b{lead.group(1)}\s+$", record[:start], re.IGNORECASE):
                new = new[lead.end():]  # "at the soft play place instead of the family centre": the record's "at" stays, once
            return record[:start] + new + record[end:]
    said = _values_of_new(correction)
    if not said:
        return None
    text, changed = record, False
    for kind in dict.fromkeys(k for k, _ in said):
        stated = [v for k, v in said if k == kind]
        if kind == "weekday":  # "改成 Thursday 周四": one day said in both languages
            stated = list({_said_again_key(kind, v): v for v in reversed(stated)}.values())[::-1]
        if kind == "month":  # "明年 2 月初, so it's 2月初 now": one month said twice, as it was said last
            stated = list({_said_again_key(kind, v): v for v in stated}.values())
        if kind.startswith("count") and all(v == "1" or set(v) == {"一"} for v in stated) and not _DOWN_TO_ONE_RE.search(correction.clause) \
                and not _a_span_of_one(kind, correction.clause):
            continue  # "定金 now 50 一位了": "一位" is "each", not a count that changed (as in supersedes)
        # The date written after "last year" is the resolution of those words, not a value the
        # user stated: never the one a correction changes ("raised to 5450" is not "(2025)").
        held = [(at, k, v) for at, k, v in _values_stated_at(text) if not _version_of_another(text, at, k, correction.clause)]
        present = [(at, v) for at, k, v in held if k == kind or (({k, kind} <= _HOST_KINDS or _TIME_SPAN_KIND_RE.fullmatch(k)) and _kind_fits(k, kind))]
        if kind == "date" and not present and not correction.weak:
            present = [(at, v) for at, k, v in held if k == "month"]  # "in October" / "3 to 10 November 2027": a date for the month
        if kind == "number" and len(stated) == 1 and not any(_shape(v) == _shape(stated[0]) for _, v in present):
            # "over 5200 mm" / "raised to 5450": a bare number stands for the one of its shape
            # that the record writes with a unit, and the unit stays.
            with_unit = [(at, re.match(r"[\d.,]+", v).group(0)) for at, k, v in held
                         if (k.startswith("number:") or k == "amount") and re.match(r"[\d.,]+", v) and _shape(re.match(r"[\d.,]+", v).group(0)) == _shape(stated[0])]
            # Of several ("定金每人 30 块，开场前 24h 内取消不退" / "定金 now 50 一位了"), the words around them choose below.
            present = with_unit or present
        if kind == "number" and len(stated) == 1:
            # A number that counts a thing ("24 shafts") changes the record's number of that thing; where the record's numbers
            # count other things ("two picks", "forty-odd years"), none of them.
            counted = [(_same_thing_counted(text, at, v, correction, stated[0]), (at, v)) for at, v in present]
            if any(same is not None for same, _ in counted):
                present = [held for same, held in counted if same]
        dates = [(at, v) for at, k, v in held if k == "date"]
        if kind == "day" and not present and len(dates) == 1 and len(stated) == 1:
            # "婚礼定在 9 月 27 号" / "婚礼改到 28 号了": the day of the stored date changes, its month stays.
            at, old_value = dates[0]
            value = _with_day(old_value, stated[0])
            if value != old_value:
                text, changed = text[:at] + text[at:].replace(old_value, value, 1), True
            continue
        held_keys = {_said_again_key(kind, v) for _, v in present}
        again = {_said_again_key(kind, v) for v in stated} & held_keys
        if len(stated) > 1 and len(again) == 1 and not _a_range(correction.clause, stated):
            # "Actually 30, 40 was too many", "its 22 runs not 18": the record's own value said again is
            # the old one (not in a range: "Saturday 22:00 to Sunday 01:00" says both days), and only
            # it changes — not the record's other numbers ("18 runs … django 5.1" keeps its 5.1). A day
            # said again may be said shorter ("isn't free on tuesdays anymore" / "the first Tuesday of
            # every month").
            others = [v for v in stated if _said_again_key(kind, v) not in held_keys]
            # "…from january they meet on thursdays. … so thursday it is": one other day, said twice.
            if len({_said_again_key(kind, v) for v in others}) == 1:
                stated = others[:1]
                if len(present) > 1:
                    present = [(at, v) for at, v in present if _said_again_key(kind, v) in again]
        if len(stated) > 1:
            # "Sunday 02:00 to 04:00" → "22:00 to 01:00": several values of a kind change
            # together, in order; a different number of them is a new shape, not a value change.
            if len(present) != len(stated):
                return _run_rewritten(text, correction.new or correction.clause)
            for (at, old_value), value in sorted(zip(present, stated), reverse=True):
                text = text[:at] + text[at:].replace(old_value, value, 1)
            changed = changed or any(v != o for (_, o), v in zip(present, stated))
            continue
        value = stated[-1]
        same = [(at, v) for at, v in present if v != value]
        if not same:
            continue
        source = correction.new or correction.clause
        if len(same) > 1 and kind.startswith("tool:") and len({value_key(v) for _, v in same}) == 1:
            # "hosted on heroku (basic dyno + heroku postgres)" / "moved … onto a hetzner box": the
            # one tool named twice is left wherever it is named.
            for at, old_value in sorted(same, reverse=True):
                text = text[:at] + text[at:].replace(old_value, _spaced(text, at, old_value, value), 1)
            changed = True
            continue
        if len(same) > 1 and kind == "weekday" and len({_said_again_key(kind, v) for _, v in same}) == 1:
            # "is every Saturday at the family centre … saturday nights are carnage" / "its every other sunday
            # now": the day said twice is the one day, and it changes wherever it is said.
            for at, old_value in sorted(same, reverse=True):
                text = text[:at] + _spaced(text, at, old_value, value) + text[at + len(old_value):]
            changed = True
            continue
        if len(same) > 1 and kind != "weekday" and not _is_rate(source, source.find(value)):  # "every 周二" is a day, not a rate
            # "每 30 秒…一次心跳…超过 5 分钟没收到就标 offline" / "timeout tighten 到 90 秒": a value said
            # as how often ("every 30 s") is not the one a duration said without "every" replaces.
            durations = [(at, v) for at, v in same if not _is_rate(text, at)]
            same = durations or same
        if len(same) > 1:
            # "去年 12 月考了 Level 2，…打算 9 月那场考" / "改到了 11 月那场": a value said of the past is no plan to move.
            ahead = [(at, v) for at, v in same if not _said_of_the_past(text, at)]
            same = ahead or same
        if len(same) > 1:
            # "port 5432 on db-1" / "6432": a value written in the new one's shape (digits, dots) is the one.
            shaped = [(at, v) for at, v in same if _shape(v) == _shape(value)]
            if len(shaped) == 1:
                same = shaped
        if len(same) > 1:
            # "…三级 每月 2600 二级 3200 一级 3800…" / "一级护理调到 4200": the value right after the word said
            # right before the new one.
            adjacent = [(at, v) for at, v in same if _word_before(text, at) & _words_before(correction.clause, value)]
            same = adjacent if len(adjacent) == 1 else same
        if len(same) > 1:
            words = content_tokens(correction.clause) - {t for _, v in said for t in content_tokens(v)}
            scored = sorted(((_near(text, sv, words), sv) for sv in same), key=lambda x: -x[0])
            if scored[0][0] == 0 or (len(scored) > 1 and scored[0][0] == scored[1][0]):
                continue
            same = [scored[0][1]]
        at, old_value = same[0]
        named = _named_value(correction.new, value)
        lead = re.search(r"(?:[A-Z][\w-]*\s+){1,3}$", text[:at]) if named else None
        if named and lead:
            # "主要拍 Portra 400" / "全换成 Kodak Gold 200 了": the number's name changes with it.
            text, changed = text[: lead.start()] + named + text[at + len(old_value):], True
            continue
        version = re.match(_VERSION_AFTER, text[at + len(old_value):]) if kind.startswith("tool:") else None
        if version:
            # "写进 InfluxDB 2" → "PostgreSQL": the old tool's version goes with it, and the new one's
            # comes with the new tool ("改用 PostgreSQL 16").
            said_at = source.find(value)
            own = re.match(_VERSION_AFTER, source[said_at + len(value):]) if said_at >= 0 else None
            value = value + (" " + own.group(0).strip() if own else "")
            end = at + len(old_value) + version.end()
            text, changed = text[:at] + _spaced(text[:at] + old_value + text[end:], at, old_value, value) + text[end:], True
            continue
        unit = re.match(r"\s*(" + _SPAN_UNITS_ZH + ")", text[at + len(old_value):]) if _TIME_SPAN_KIND_RE.fullmatch(kind) else None
        if unit and kind.startswith("count:") and unit.group(1) != kind.partition(":")[2]:
            # "保留 30 天" / "改成保留一年": a span said in another unit replaces the number and its unit.
            end = at + len(old_value) + unit.end()
            text, changed = text[:at] + _spaced(text, at, old_value, value + kind.partition(":")[2]) + text[end:], True
            continue
        if kind == "date" and (in_month := _IN_BEFORE_RE.search(text[:at])) and any(k == "month" and v == old_value for _, k, v in held):
            # "going to Lisbon in October" / "3 to 10 November 2027": a date is said without the month's "in".
            text, changed = text[: in_month.start()] + value + text[at + len(old_value):], True
            continue
        part_of_day = _PART_OF_DAY_RE.match(old_value)
        if kind == "time" and part_of_day and not _PART_OF_DAY_RE.match(value) and re.match(r"[一两二三四五六七八九十\d]", value):
            value = part_of_day.group(0) + value  # "晚上九点截止" / "不对 其实是八点半": still in the evening
        text = text[:at] + text[at:].replace(old_value, _spaced(text, at, old_value, value), 1)
        changed = True
    return text if changed else None



_IN_BEFORE_RE = re.compile(r"\bin\s+$", re.IGNORECASE)


# What may stand between the values of one "when" ("每个星期日下午两点到四点", "Tue 7pm till 9"):
# they are said as one run of values.
# A part of the day may stand between a day and its hours ("周四晚上，七点到十点").
_RUN_GAP_RE = re.compile(r"\s*(?:早上|上午|中午|下午|傍晚|晚上|夜里|凌晨|(?:in the )?(?:morning|afternoon|evening|night)s?)?\s*[，,]?\s*"
                         r"(?:到|至|[-–~～]|to|until|till|through|from|at|on)?\s*", re.IGNORECASE)


def _value_runs(text: str) -> list[tuple[int, int, frozenset[str]]]:
    """(start, end, kinds) of each run of two or more typed values said together."""
    runs: list[tuple[int, int, frozenset[str]]] = []
    start = end = -1
    kinds: set[str] = set()
    count = 0
    for at, kind, value in _values_stated_at(text):
        if count and at >= end and _RUN_GAP_RE.fullmatch(text[end:at]):
            end, count = at + len(value), count + 1
            kinds.add(kind)
            continue
        if count >= 2:
            runs.append((start, end, frozenset(kinds)))
        start, end, kinds, count = at, at + len(value), {kind}, 1
    if count >= 2:
        runs.append((start, end, frozenset(kinds)))
    return runs


def _run_rewritten(record: str, new: str) -> str | None:
    """A "when" said as one run of values that changes its shape ("每个星期六早上七点" → "每个星期日
    下午两点到四点", "Tuesdays at 7" → "Thursdays 6 to 8"): the record's one run of the same kinds of
    value is replaced by the new run whole, when the record says no other value of those kinds."""
    said = _value_runs(new)
    if len(said) != 1:
        return None
    start, end, kinds = said[0]
    held = [run for run in _value_runs(record) if run[2] == kinds]
    if len(held) != 1:
        return _day_and_part_rewritten(record, new[start:end], kinds) if not held else None
    r_start, r_end, _ = held[0]
    if any(k in kinds and not r_start <= at < r_end for at, k, _v in _values_stated_at(record)):
        return None
    return record[:r_start] + new[start:end] + record[r_end:]


def _day_and_part_rewritten(record: str, run: str, kinds: frozenset[str]) -> str | None:
    """"每周日上午上" / "挪到每周五晚上七点到九点了": a record whose one day is said with a part of the day and
    no hours names its time slot by the two; a new day said with its hours replaces them both."""
    if kinds != {"weekday", "time"}:
        return None
    held = _values_stated_at(record)
    days = [(at, v) for at, k, v in held if k == "weekday"]
    if len(days) != 1 or any(k == "time" for _, k, _v in held):
        return None
    at, day = days[0]
    part = _PART_OF_DAY_RE.match(record, at + len(day))
    return record[:at] + run + record[part.end():] if part else None


_WEEKDAY_WORD_RE = re.compile(r"(mon|tue|wed|thu|fri|sat|sun)[a-z]*|[周星期礼拜]+[一二三四五六日天]", re.IGNORECASE)


def _day_in_either_language(record: str, correction: Correction) -> str | None:
    """"不是周四了 是周三" against "每周四晚上上课 (Thursday evening class)": one day replaced by another where the
    record says it in both languages; None when the old value is no single day or the record says it in one language
    only (the rewrite of one value does)."""
    day, new_day = _one_day(correction.old), _one_day(correction.new)
    if not day or not new_day or day == new_day:
        return None
    spans = [(at, v) for at, kind, v in _values_at(record) if kind == "weekday" and _said_again_key(kind, v) == day]
    if len({is_chinese(v) for _, v in spans}) < 2:
        return None
    for at, value in reversed(spans):
        record = record[:at] + _WEEKDAY_WORD_RE.sub(correction.new.strip(), value, count=1) + record[at + len(value):]
    return record


def _one_day(text: str) -> str:
    """The day of the week `text` is, when it is one day and nothing else, else ""."""
    found = values(text)
    return _said_again_key("weekday", found[0][1]) if len(found) == 1 and found[0][0] == "weekday" and found[0][1] == text.strip() else ""


def _said_again_key(kind: str, value: str) -> str:
    """A value's key for "said again": a weekday by its day alone ("first Tuesday of every month"
    and "tuesdays" are one day)."""
    if kind == "weekday":
        day = _WEEKDAY_WORD_RE.search(value)
        if day:
            # "Thursday 周四": one day in either language.
            return day.group(1).lower() if day.group(1) else _ZH_WEEKDAY_KEYS[day.group(0)[-1]]
    if kind.startswith("duration"):
        # "members kept saying 3 weeks wasn't long enough" against "keep each puzzle 21 days": one span in other units.
        span = _SPAN_RE.fullmatch(value.strip())
        if span:
            unit = next(minutes for pattern, minutes in _SPAN_MINUTES if re.fullmatch(pattern, span.group(2), re.IGNORECASE))
            return f"span:{float(span.group(1)) * unit:g}"
    if kind == "time" and (clock := _CLOCK_HOUR_RE.fullmatch(value.strip())) and clock.group("part") in (None, "凌晨", "早上", "上午"):
        # "备份那个挪到四点吧 两点钟 HIS 在跑对账" against "每天凌晨 2 点": one hour of the morning, in figures or in words.
        return f"hour:{zh_number(clock.group('h'))}"
    return value_key(value)


_SPAN_MINUTES = [(r"min(?:ute)?s?|分钟", 1), (r"h|hrs?|hours?|小时|个?钟头", 60), (r"days?|天", 1440), (r"w(?:ee)?ks?|周|个?星期|个?礼拜", 10080)]
_SPAN_RE = re.compile(r"(\d+(?:\.\d+)?)\s*(" + "|".join(p for p, _ in _SPAN_MINUTES) + ")", re.IGNORECASE)


_ZH_WEEKDAY_KEYS = dict(zip("一二三四五六日天", ["mon", "tue", "wed", "thu", "fri", "sat", "sun", "sun"]))


_MODEL_RE = re.compile(r"[A-Z]{1,4}-?\d{2,}[A-Za-z]?(?![\w-])")
_NAME_BEFORE_RE = re.compile(rf"(?<![\w.-])({_NAME_WORD})\s?v?$")


def _version_of_another(text: str, at: int, kind: str, clause: str) -> bool:
    """A bare number right after a capitalised name is that name's version ("Nuxt 3", "Postgres
    16"): only a change that names it replaces it ("升级到 Nuxt 4"), not another number that shares a
    word with the record ("现在每间 room 最多 6 pax" against "booking site：Nuxt 3 + Firebase")."""
    if kind != "number" or at <= 0:
        return False
    m = _NAME_BEFORE_RE.search(text[:at])
    versions = [v.group(1) for v in _NAMED_VERSION_RE.finditer(clause)]
    if m is None:
        # A plain number ("每个月帐单 60 几美金"): a change that states only the version of a name the
        # record does not use ("改用 Kamal 2 deploy") says nothing of it.
        plain = [v for a, k, v in values_at(clause) if k == "number" and not _NAME_BEFORE_RE.search(clause[:a])]
        return bool(versions) and not plain and not any(n.casefold() in text.casefold() for n in versions)
    if m.group(1).casefold() in clause.casefold():
        return False
    if not versions:
        return True
    # "迁到 PostgreSQL 15" replaces "MySQL 8", "全换成 Kodak Gold 200" replaces "胶卷我现在主要拍 Portra 400": a named
    # version replaces the version of a tool of its kind, or one the change's own words stand beside —
    # not any other name's ("改用 Kamal 2 deploy" against "stack：Rails 7.2 + Hotwire").
    if any(_tool_kind(n) and _tool_kind(n) == _tool_kind(m.group(1)) for n in versions):
        return False
    number = re.match(r"v?\d+(?:\.\d+)*", text[at:])
    words = content_tokens(clause) - {t for _, v in values(clause) for t in content_tokens(v)}
    return _near(text, (at, number.group(0) if number else ""), words) == 0


def _tool_kind(name: str) -> str:
    return next((k for k, v in values(name) if k.startswith("tool:")), "")


_NAMED_VERSION_RE = re.compile(rf"(?<![\w.-])({_NAME_WORD})\s?v?\d")


_PAST_RE = re.compile(r"(?:去年|前年|上个月|上上个月|上周|上礼拜|\blast (?:year|month|week)\b|\b\w+ ago\b)\s*(?:[(（][^)）]{0,12}[)）])?\s*$", re.IGNORECASE)


def _said_of_the_past(text: str, at: int) -> bool:
    """Whether the value at `at` is dated in the past by the words right before it ("去年（2025） 12 月")."""
    return bool(_PAST_RE.search(text[max(0, at - 16):at]))


def _is_rate(text: str, at: int) -> bool:
    """Whether the value at `at` is said as how often ("每 30 秒", "every 30 seconds")."""
    return at > 0 and bool(re.search(r"(?:每|every|each)\s*$", text[max(0, at - 7):at], re.IGNORECASE))


def _values_stated_at(text: str) -> list[tuple[int, str, str]]:
    """values_at() without the dates resolve_relative_dates wrote into `text` ("retested the 2k
    last night (2026-03-12). 7:58": the user stated the time, not 2026, 03 and 12)."""
    notes = [m.span() for pattern in (DATE_NOTE_RE, _FROM_DAY_RE, _SINCE_DAY_RE) for m in pattern.finditer(text)]
    return [(at, kind, value) for at, kind, value in values_at(text) if not any(a <= at < b for a, b in notes)
            and not (kind == "weekday" and _PAST_DAY_RE.search(text[max(0, at - 12):at]))
            and not (kind.startswith(("number", "count")) and (_TOLD_COUNT_RE.match(text, at + len(value)) or _CLOCK_WORDS_RE.search(text[max(0, at - 14):at])))
            and not (kind.startswith(("count:", "duration")) and _PER_PERIOD_PRICE_RE.match(text, at + len(value)))]


# A count of what is being told ("two things.", "三个 update", "两件事"), and a clock time said in words ("quarter to twelve",
# written as 11:45 beside it): no value that changes.
# So is a ratio ("four times as many lines").
_TOLD_COUNT_RE = re.compile(r"\s*(?:(?:quick|small|more|big)\s+)?(?:things?|updates?|questions?|points?|changes?|bits of news)\b|\s*(?:个\s*update|件事|个事|个问题|个变化|个更新)"
                            r"|\s*times\s+(?:as|more|less|bigger|smaller|longer|faster|slower)\b|\s*倍", re.IGNORECASE)
_CLOCK_WORDS_RE = re.compile(r"\b(?:quarter|half)\s+(?:to|past)\s+$", re.IGNORECASE)
# "腾讯云那台到期了 一年六百多 我没续", "一个月 1600": a period followed by what it costs is a price per period, not a
# span that changed (it rewrote "干了八年了" to "干了一年了").
_PER_PERIOD_PRICE_RE = re.compile(r"\s*(?:个\s*)?(?:年|月|季度?|周|星期|礼拜|天)?\s*(?:(?:[¥￥$£€]|RM\s?)\s*\d|\d{3,}|[一二两三四五六七八九十]+[百千万])")


# "update: 上个 Sunday handover 又吵起来", "last Tuesday the import failed": the day something happened, no value set.
_PAST_DAY_RE = re.compile(r"(?:上个?|上一个)\s*(?:礼拜|星期|周)?\s*$|\b(?:last|this past)\s+$", re.IGNORECASE)


def _stated_values(text: str) -> list[tuple[str, str]]:
    return [(kind, value) for _, kind, value in _values_stated_at(text)]


def _named_value(new: str, value: str) -> str:
    """"Kodak Gold 200" when the new value is said as a capitalised name before its number."""
    m = re.search(r"(?:[A-Z][\w-]*\s+){1,3}" + re.escape(value) + r"(?![\w.])", new or "")
    return m.group(0) if m else ""


# One correction can set several values, each next to what it is for ("Change of plan: Kyoto
# 改成四天, Tokyo 只待三天", "staging gets 2 replicas, prod 6"): each clause names its key before its
# value, and the record's clause with the same key and a value of the same kind takes it.
_KEY_NOISE = frozenset({"change", "plan", "plans", "update", "actually", "now", "only", "just", "instead", "改成", "改为", "只待", "只有", "现在"})


def _keyed(text: str) -> list[tuple[frozenset[str], str, int, str]]:
    """(key words, kind, position, value) of each clause of `text` that holds one typed value
    after some words of its own."""
    out = []
    start = 0
    for part in re.split(r"(?<=[,，;；。:：])", text):
        found = _values_at(part)
        if len(found) == 1 and found[0][0] > 0:
            at, kind, value = found[0]
            key = frozenset(content_tokens(part[:at]) - _KEY_NOISE)
            if key:
                out.append((key, kind, start + at, value))
        start += len(part)
    return out


def _keyed_rewrite(record: str, clause: str) -> str | None:
    said = _keyed(_strip_lead(clause))
    if len(said) < 2 or len({key for key, *_ in said}) < len(said):
        return None
    held = _keyed(record)
    edits = []
    for key, kind, _at, value in said:
        mine = [(at, old) for hkey, hkind, at, old in held if hkey & key and _kind_fits(hkind, kind)]
        if len(mine) != 1:
            return None  # every value said must find its one place, or this is not that record
        edits.append((mine[0][0], mine[0][1], value))
    if len({at for at, *_ in edits}) < len(edits) or all(old == value for _, old, value in edits):
        return None
    text = record
    for at, old, value in sorted(edits, reverse=True):
        text = text[:at] + _spaced(text, at, old, value) + text[at + len(old):]
    return text


def _with_day(date: str, day: str) -> str:
    """`date` ("March 14", "9 月 27 号") with the day of the month of `day` ("the 21st", "28 号")."""
    number = re.search(r"\d+|[一二三四五六七八九十]+", day)
    if number is None:
        return date
    m = list(re.finditer(r"\d{1,2}(?P<th>st|nd|rd|th)?(?=\s*(?:of\b|[号日]|$))|[一二三四五六七八九十]{1,3}(?=\s?[号日])", date))
    if not m:
        return date
    last = m[-1]
    new = number.group(0)
    if last.group("th") and new.isdigit():
        n = int(new)
        new += "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return date[:last.start()] + new + date[last.end():]


# Where a system runs, said as a machine or as the named service or cloud it moved to.
_HOST_KINDS = frozenset({"host", "tool:hosting", "tool:cloud"})


def _kind_fits(held: str, said: str) -> bool:
    """A value of kind `said` can replace one of kind `held`: the same kind, a day of the
    month against a date (the day changes, the month stays), or a host, a hosting service and a cloud
    for one another ("跑在办公室那台戴尔 T140 上" / "搬到阿里云上了", "deploy 在 Vercel 上" / "迁到腾讯云")."""
    return held == said or (said == "day" and held == "date") or {held, said} <= _HOST_KINDS \
        or (_TIME_SPAN_KIND_RE.fullmatch(held) is not None and _TIME_SPAN_KIND_RE.fullmatch(said) is not None)


# A span of time counted in Chinese ("保留 30 天" / "改成保留一年", "90 分钟"): spans in other units say the same slot.
_SPAN_UNITS_ZH = r"天|周|个?星期|个?礼拜|个月|年|小时|个?钟头|分钟"  # ("8 月" is a month of the calendar, "3 个月" a span)
_TIME_SPAN_KIND_RE = re.compile(r"count:(?:" + _SPAN_UNITS_ZH + ")")


def _a_span_of_one(kind: str, clause: str) -> bool:
    """"改成保留一年": one year is a span that can replace "30 天"; "一周两次上门" is "twice a week", where "一周" counts nothing."""
    unit = kind.partition(":")[2]
    return _TIME_SPAN_KIND_RE.fullmatch(kind) is not None and not re.search(rf"一\s*{re.escape(unit)}\s*[一二两三四五六七八九十几\d]+\s*次", clause)


_VERSION_AFTER = r"\s*v?\d+(?:\.\d+)*(?![\w.]\w)"


_WEEKDAY_EN_RE = re.compile(r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?", re.IGNORECASE)


def _spaced(text: str, at: int, old_value: str, value: str) -> str:
    """`value` with a space where its Latin letters or digits would run into a neighbouring
    word ("每周三下午 4 点" → "每 Friday 5pm", not "每Friday5pm"); a day of the week in the
    number and case the record used ("the Thursday night quiz" moved "to Wednesdays": "the Wednesday
    night quiz"; "saturday nights" moved to "Sunday": "sunday nights")."""
    if _WEEKDAY_EN_RE.fullmatch(old_value) and _WEEKDAY_EN_RE.fullmatch(value):
        value = value[:-1] if value[-1] in "sS" else value
        value += old_value[-1] if old_value[-1] in "sS" else ""
        value = (value[:1].upper() if old_value[:1].isupper() else value[:1].lower()) + value[1:]
    before = text[at - 1] if at > 0 else ""
    after = text[at + len(old_value)] if at + len(old_value) < len(text) else ""
    if value[:1].isascii() and value[:1].isalnum() and before.isalnum() and not (value[:1].isdigit() and is_cjk_char(before)):
        value = " " + value  # "每 Friday"; but "跑20分钟": a number touches Chinese as it was written
    if value[-1:].isascii() and value[-1:].isalnum() and after.isalnum() and not (value[-1:].isdigit() and is_cjk_char(after)):
        value = value + " "
    return value


def _shape(value: str) -> str:
    return re.sub(r"\d", "0", value.strip().lower())


def _word_before(text: str, at: int) -> set[str]:
    """The words of the stretch right before a value, back to a space or a separator ("二级 3200" → 二级)."""
    chunk = re.split(r"[，,。；;:：\s]", text[max(0, at - 8):at].rstrip())[-1]
    return content_tokens(chunk)


def _words_before(text: str, value: str) -> set[str]:
    """The words said right before `value` in `text` (its clause, back to a space or separator)."""
    at = text.find(value)
    return _word_before(text, at) if at > 0 else set()


def _near(text: str, at_value: tuple[int, str], words: set[str]) -> int:
    """How many of `words` stand around the value (within its clause, 24 characters each side)."""
    at, value = at_value
    left = re.split(r"[，,。；;]", text[max(0, at - 24):at])[-1]
    right = re.split(r"[，,。；;]", text[at + len(value):at + len(value) + 24])[0]
    return len(words & content_tokens(left + " " + right))


def _count_tail(prefix: str) -> str:
    m = re.search(r"(?:\d+|[一两二三四五六七八九十]+)\s?[个台张只条位]\s*$", prefix)
    return m.group(0).strip() if m else "\0"


def _values_at(text: str) -> list[tuple[int, str, str]]:
    """(position, kind, value) of every typed value in `text`."""
    return values_at(text)


# A name said to be what it really is, with no old value said ("上回我说的骨架竹子记错了 是水竹", "我过敏的其实是
# oakmoss", "I was wrong about the make. they're MacRannoch, 1960s"): the record's one name of the new one's
# shape is the one it replaces — a Chinese word ending in the new one's last character, which says what kind
# of thing it is ("毛竹" / "水竹", "桂花树" / "樟树"; written after a verb or 的, so "劈成竹条" has none), the one Latin word of a
# Chinese record ("bergamot"), the one capitalised name inside an English record ("Dunloch"). Only where
# the record's clause of that name shares a word with the correction or a kind of value it states ("骨架用的是
# 毛竹", "对 bergamot 过敏", "1970s Dunloch": the statement said again).
_ZH_NAME_AFTER = "是|用|叫|的|了|去|在|对|养|种|买"
_CLAUSE_BREAK_RE = re.compile(r"[，,。；;！!？?\n]|[.:](?:\s|$)")


def _name_of(new: str) -> str:
    """The name a correction's new value opens with ("笔刀了 老师推荐的那种30度刀头的…" → "笔刀")."""
    lead = re.match(r"[\u4e00-\u9fff]{2,4}?(?=了)", new)
    if lead:
        return lead.group(0)
    # ("… 的 Presto.", "Op. 9 No. 2.": the sentence's stop is no part of it; "Op." is.)
    return re.sub(r"(?<=[A-Za-z0-9])(?<!\bNo)(?<!\bOp)(?<!\bSt)(?<!\bDr)(?<!\bMr)(?<!\bMrs)\.$", "", new)


_TITLE_WORD = r"[A-Z][a-z][a-z'-]*"
# The slot a Chinese change names right before its verb ("目标换成金陵中学了", "教练改成 Jenny 了").
_ZH_SLOT_CHANGED_RE = re.compile(r"([\u4e00-\u9fff]{2,4})(?:也|又|就)?(?:换成|改成|改为|变成)")


# A word of a name of several ("Bach Partita No. 3 的 Gavotte en Rondeau", "Sonata No. 1 in G minor"): capitalised, a
# number, a catalogue mark, or one of the few small words such names hold.
_NAME_RUN_WORD = r"(?-i:[A-Z])[\w'-]*\.?|\d+[\w.]*|(?:no|op|bwv|k)\.?(?=\s?\d)|in|of|en|de|la|le|du|minor|major|flat|sharp|的"


def _run_of_its_maker(record: str, new: str) -> str:
    """The record's one name that opens with the new name's first word and is not the new one ("Bach Partita No. 3 的
    Gavotte en Rondeau" for "Bach Sonata No. 1 in G minor 的 Presto"): of one maker, the one replaced; else ""."""
    first = re.match(r"(?-i:[A-Z])[a-z][\w'-]*(?=\s\S)", new)
    run = rf"(?<![\w'-]){re.escape(first.group(0))}(?:\s?(?:{_NAME_RUN_WORD}))*" if first else ""
    if first is None or first.group(0).casefold() in STOPWORDS or not re.fullmatch(run, new.rstrip(" .")) \
            or any(kind.startswith("tool:") or kind in ("date", "month", "weekday", "time") for kind, _ in values(new)):
        # (The new value must be such a name itself: "Kaizen 原来那个 branch 房东不续租了 …" is a sentence, "Node 22 on
        # Friday" a version and when.)
        return ""
    runs = {m.group(0).rstrip(" .") for m in re.finditer(run, record)}
    runs = {r for r in runs if " " in r and r.casefold() != new.rstrip(" .").casefold()}
    return runs.pop() if len(runs) == 1 else ""


def counterpart(record: str, correction: Correction) -> str:
    """The value of `record` a name-only correction replaces, else ""."""
    new = _name_of(correction.new.strip())
    if not correction.old and not correction.count and (same_maker := _run_of_its_maker(record, new)):
        return same_maker  # (a number in it is part of the name: "No. 1" replaces no other number)
    if correction.old or correction.count or not new or values(correction.new):
        return ""
    if _renamed(correction.clause):
        # "… was called Cae Derw, … so that's what we're calling it now" / "It's called Bryn Coppice on the deeds": the
        # record's one name said with "called" is the one replaced.
        called = {m.group(1) for m in re.finditer(r"\b(?:called|named)\s+([A-Z][\w'-]*(?:\s[A-Z][\w'-]*)*)", record)} - {new}
        return called.pop() if len(called) == 1 else ""
    said = {w.casefold() for w in re.findall(r"[A-Za-z][\w'-]*", correction.clause + " " + correction.context)}
    if re.fullmatch(r"[\u4e00-\u9fff]{2,4}", new):
        pattern = rf"(?:{_ZH_NAME_AFTER})((?:(?!{_ZH_NAME_AFTER})[\u4e00-\u9fff]){{1,3}}{re.escape(new[-1])})"
        found = {m.group(1) for m in re.finditer(pattern, record)} - {new}
        if not found and (slot := _ZH_SLOT_CHANGED_RE.search(correction.clause)):
            # "目标换成金陵中学了" / "目标是南京一中": what the slot the change names is said to be.
            found = {m.group(1) for m in re.finditer(re.escape(slot.group(1)) + r"(?:是|为|定在|定的是|选的是)\s*([\u4e00-\u9fff]{2,6}?)(?=[\s，,。；;！!]|$)", record)} - {new}
    elif re.fullmatch(r"[A-Za-z][\w'-]*", new) and is_chinese(record):
        found = {w for w in re.findall(r"(?<![\w'-])[A-Za-z][\w'-]+", record) if w.casefold() not in said}
        if len(found) > 1 and re.fullmatch(_TITLE_WORD, new):
            # "romanization 请用 Yale, …, 我不想两套混着 confuse 自己" / "switch 成 Jyutping": of the Latin words, the name.
            found = {w for w in found if re.fullmatch(_TITLE_WORD, w)} or found
    elif all(w[:1].isupper() for w in new.split()):
        # (Not a month or a day: "the U11 county tournament is 17 May down in Weston-super-Mare" names one place.)
        dated = [(at, at + len(v)) for at, k, v in _values_at(record) if k in ("date", "month", "weekday", "day")]
        found = {m.group(0) for m in PROPER_NOUN_RE.finditer(record)
                 if m.group(0).casefold() not in said and not re.search(r"[.!?]\s*$", record[: m.start()])
                 and not any(a <= m.start() < b for a, b in dated)}
        if len(found) > 1 and len(new.split()) > 1:
            # "Funmi Adeyemi … she's the new integration lead" / "my contact at the trust for the CAD feed is Gary Pritchard,
            # he's the integration lead, …. and the pilot is 14 responders across Ardleigh and Thornby wards": a full name
            # replaces the full name of the record's sentence that names the role.
            found = {name for sentence in re.split(r"(?<=[.!?])\s+", record) if TEAM_ROLE_RE.search(sentence)
                     and len(naming_words(sentence) & naming_words(correction.clause)) >= 2
                     for name in _full_names(sentence) if not {w.casefold() for w in name.split()} & said}
        if len(found) > 1:
            # "Jan the secretary says she never sent it. right, the big one: the U11 county tournament is … in
            # Weston-super-Mare" / "the county moved it to Taunton": the name of the sentence that speaks of what moved.
            found = {n for sentence in re.split(r"(?<=[.!?])\s+", record) if naming_words(sentence) & naming_words(correction.clause)
                     for n in found if n in sentence} or found
    else:
        return ""
    related = set()
    if len(found) > 1:
        # "with my partner Colin" / "from now on I'm partnering Bhavna": of the record's names, the one after the word the
        # change says what the person is to the user with.
        # (Not the word "with" of "classes with Pablo": a word that names nothing.)
        related = {n for n in found if (before := re.search(r"([A-Za-z]{4,})\s+$", record[: record.find(n)]))
                   and before.group(1).casefold() not in STOPWORDS and any(w.startswith(before.group(1).casefold()) for w in said)}
        found = set(related) or found
    if len(found) != 1:
        return ""
    name = found.pop()
    at = record.find(name)
    clause = _CLAUSE_BREAK_RE.split(record[:at])[-1] + _CLAUSE_BREAK_RE.split(record[at:])[0]
    kinds = {k for k, _ in values(correction.clause)}
    return name if related or _context_overlap(clause, correction) or {k for k, _ in values(clause)} & kinds else ""


def supersedes(record: str, correction: Correction) -> float:
    """How strongly `record` looks like the statement being corrected (0 = not at all)."""
    named = counterpart(record, correction)
    if named:
        correction = replace(correction, old=named)
    if correction.count:
        m = _count_in(record, correction.count[1])
        return 1.0 + _context_overlap(record, correction) if m is not None and _count_value(m) != correction.count[0] else 0.0
    if correction.old:
        pattern = _old_pattern(correction.old)
        if not re.search(pattern, record, re.IGNORECASE) or not _counts_the_same(record, correction):
            return 0.0
        slot = _slot_words(correction)
        if slot and not any(re.search(pattern, part, re.IGNORECASE) and _names_slot(slot, content_tokens(part))
                            for part in re.split(r"[.;!?](?:\s+|$)|[。；！？]", record)):
            return 0.0  # X said of something else ("I used Jenkins at my last job" / "CI from Jenkins to …")
        return 1.0 + _context_overlap(record, correction)
    new_vals, beside = _said_values(correction)
    overlap = _context_overlap(record, correction)
    if new_vals:
        # Any value the correction states may be the one that changed ("Python 3.12 last Friday":
        # the version, not the weekday). A value with a unit ("74kg", "5 条") names its slot well
        # enough; a bare number needs shared words — and "一个" is mostly "a", not a number.
        held = [(at, k, v) for at, k, v in _values_at(record) if not _version_of_another(record, at, k, correction.clause)]
        # A weak cue ("目前 72kg") needs shared words even for a unit, and so does a value said
        # beside a new name ("现在是 A10 了，batch size 16").
        said_plainly = not correction.weak and not beside
        # "the tuesday sessions were the autumn term, … they meet on thursdays": the record's one
        # value of a kind said again beside another names the record as well as shared words do.
        again = said_plainly and repeats_old_value(record, correction)
        for kind, value in reversed(new_vals):
            if kind.startswith("count") and (value == "1" or set(value) == {"一"}) and not _DOWN_TO_ONE_RE.search(correction.clause) \
                    and not _a_span_of_one(kind, correction.clause):
                continue  # "现在是集团信息部唯一一个后端" ("一一" read as a count): "一个" is "a", not a count that changed ("一年" is a year)
            # A bare number said of a price ("定金 now 50 一位了") fits the price ("定金每人 30 块") by its words.
            # (A date said plainly in place of a month: "going to Lisbon in October" / "so I've moved it: 3 to 10 November
            # 2027 now"; not "现在白带 准备 11 月 9 号考橙带" against "今年三月刚上一年级".)
            counts = {at: _same_thing_counted(record, at, v, correction, value) for at, k, v in held if kind == k == "number"}
            # ("现在全部都放在 Shopee 上卖" / "现在在 Carousell 卖": a project uses one tool of a kind at a time, as in names_the_slot.)
            one_of_kind = _keys_of_kind(held, kind)
            fits = [v for at, k, v in held if counts.get(at) is not False and (_kind_fits(k, kind) or (k == "amount" and kind == "number" and overlap > 0)
                                           or ((k, kind) == ("month", "date") and said_plainly and overlap > 0)) and value_key(v) != value_key(value)
                    and (overlap > 0 or again or counts.get(at) or ((said_plainly or _self_named(kind)) and unit_names_slot(kind) and v not in ("一", "1"))
                         or (kind.startswith("tool:") and len(one_of_kind) == 1))]
            if not fits and said_plainly and kind in ("weekday", "time") and _run_rewritten(record, correction.new or correction.clause):
                # "我那个班挪到了周四晚上，七点到十点" / "每周六下午两点上课": a day and its hours said as one run
                # name a schedule, and the record's one run of them is the one it moves.
                fits = ["run"]
            if fits:
                # A changed value keeps its shape ("Go 1.21" → "1.22", not the "EX 300" of another
                # record that shares a word): of two records alike otherwise, that one is meant.
                return 0.5 + overlap + (0.05 if any(_shape(v) == _shape(value) for v in fits) else 0.0)
        return 0.0
    return overlap if overlap >= 0.5 else 0.0


_BARE_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")
# The word a bare number counts, right after it ("12 round", "12 轮", "3 番"): a Latin word or one CJK character.
_COUNTED_RE = re.compile(r"(?:\s*|-)([A-Za-z]{2,}|[\u4e00-\u9fff])")
# The CJK characters that count something after a number; any other one starts the next words ("充1000送150 之前已经充的
# 不变": 之 counts nothing).
_MEASURE_ZH = frozenset("个轮番次台张条位名人天周年月本件只盒箱斤克元块分局场节课套份瓶杯碗支根双辆间层级页章集期届颗粒片包袋桌单趟圈组首枚座栋户所家门棵株头匹尾")


def _counted(text: str, at: int) -> str:
    m = _COUNTED_RE.match(text, at)
    if not m or (not m.group(1).isascii() and m.group(1) not in _MEASURE_ZH):
        return ""
    return m.group(1).lower()


_YEAR_RE = re.compile(r"(?:19|20)\d\d")
_PER_PERIOD_AFTER_RE = re.compile(r"\s+(?:a|an|per|each|every)\s+(?:night|day|week|month|year|session|shift|hour)\b|\s*/\s*(?:night|day|week|month)\b",
                                  re.IGNORECASE)
# Words after a number that count nothing ("16 and 18", "24 now", "5 per day").
_NOT_COUNTED = STOPWORDS | {"per"}


def _keys_of_kind(held: list[tuple[int, str, str]], kind: str) -> set[str]:
    """The distinct values of `kind` among a record's (position, kind, value) triples."""
    return {value_key(v) for _, k, v in held if k == kind}


def _same_thing_counted(record: str, at: int, held: str, correction: Correction, said: str) -> bool | None:
    """Whether the record's number at `at` counts the thing the said number counts: "the loom is a 16-shaft" / "so it's 24
    shafts now" yes, "the NEXT press jumps two picks" no (not the value that changed); None when either counts nothing said."""
    source = correction.new or correction.clause
    where = source.find(said)
    new_unit, old_unit = (_thing_counted(source, where, said) if where >= 0 else ("", False)), _thing_counted(record, at, held)
    if not (new_unit[0] and old_unit[0]) or {new_unit[0], old_unit[0]} & _NOT_COUNTED:
        return None
    return new_unit == old_unit  # ("regular season is 16 games now" against "so 4 games a night": a count per night is another)


def _thing_counted(text: str, at: int, number: str) -> tuple[str, bool]:
    """The lower-case English word a number at `at` counts, singular ("24 shafts", "16-shaft"; "" for a year or a name
    after it: "a 2019 Kia Sorento"), and whether it is counted per night, week, … ("4 games a night")."""
    m = _COUNTED_RE.match(text, at + len(number))
    word = m.group(1) if m and not _YEAR_RE.fullmatch(number) else ""
    if not (word.isascii() and word.islower()):
        return "", False
    return _singular_of(word), bool(_PER_PERIOD_AFTER_RE.match(text, m.end()))


def _counting_unit(correction: Correction) -> str:
    """The word the new value counts when old and new are bare numbers ("每季是 12 round 不是 10" →
    "round"), else ""."""
    if not (_BARE_NUMBER_RE.fullmatch(correction.old) and _BARE_NUMBER_RE.fullmatch(correction.new)):
        return ""
    at = correction.clause.find(correction.new)
    return _counted(correction.clause, at + len(correction.new)) if at >= 0 else ""


def _old_counted(record: str, correction: Correction) -> list[re.Match[str]] | None:
    """The places of a bare old number that count what the correction's number counts. Of
    several: the ones followed by its word ("每季 10 round"), else, when the record says the word
    elsewhere, the ones followed by none ("rounds 默认 10，"); never one counting something else
    ("10 番 = 256 分"). None when the correction counts nothing (every place may be meant)."""
    unit = _counting_unit(correction)
    if not unit:
        return None
    olds = list(re.finditer(rf"(?<![\d.]){re.escape(correction.old)}(?![\d.])", record))
    if len(olds) == 1:
        # One place: it is meant unless it counts another word of the same script ("10 番" / "12 轮");
        # a word of the other script may be its translation ("55 磅" / "50 lbs").
        word = _counted(record, olds[0].end())
        return [] if word and word != unit and word.isascii() == unit.isascii() else olds
    same = [m for m in olds if _counted(record, m.end()) == unit]
    if same:
        return same
    return [m for m in olds if not _counted(record, m.end())] if unit in record.lower() else []


def _counts_the_same(record: str, correction: Correction) -> bool:
    """A bare number corrected with the word it counts replaces the old number only where it
    counts the same (`_old_counted`); a number said alone is not held to it."""
    found = _old_counted(record, correction)
    return found is None or bool(found)


# A count said to have become one ("现在只剩一台了", "down to 1 replica"), not "一个" as an article.
_DOWN_TO_ONE_RE = re.compile(r"(?:只有|只剩|剩下?|减到|降到|变成|改成|缩到|砍到|only|down to|just)\s*(?:一|1)(?!\d)", re.IGNORECASE)


def _said_values(correction: Correction) -> tuple[list[tuple[str, str]], bool]:
    """The typed values the correction states, and whether they were said beside its new
    value rather than in it: "运维给我们换了卡，现在是 A10 了，batch size 16" changes to a name
    (no typed value) and says "16" of the same statement."""
    said = _values_of_new(correction)
    if said or not correction.new:
        return said, False
    return _stated_values(correction.clause), True


# "改去早上 6 点跑, 反正店 11 点才开": a clause said "anyway" states a fact of its own, not the value replaced.
_ANYWAY_RE = re.compile(r"^\s*(?:反正|毕竟|anyway\b)", re.IGNORECASE)


def _value_said_of_now(text: str, new: str) -> str:
    """The one value of the new value's kind that a later clause says with "now" / "现在" ("…, so we're not
    leaving until 29 June now"), when it is another; else ""."""
    kinds = {k for k, _ in values(new)}
    at = text.find(new)
    if not kinds or at < 0:
        return ""
    later = re.split(r"[，,;；]", text[at + len(new):])[1:]
    said = [v for clause in later if _NOW_WORD_RE.search(clause) for k, v in values(clause) if k in kinds and value_key(v) != value_key(new)]
    return said[0] if len(said) == 1 else ""


def _values_of_new(correction: Correction) -> list[tuple[str, str]]:
    """The typed values of the new value (of the clause when there is none). A value typed by the
    words around it ("搬到吴中区了": where the user lives) counts when it stands inside the new value
    in the clause."""
    if correction.new:
        said = _stated_values(correction.new)
    else:
        # ("所以我的课挪到周日下午 3 点 时长不变 还是一个半小时": a value said to stay is none that changed.)
        said = [(k, v) for at, k, v in _values_stated_at(correction.clause) if not _STAYS_RE.search(correction.clause[max(0, at - 12):at])]

    def in_its_place() -> list[tuple[str, str]]:
        at = correction.clause.find(correction.new)
        return [(k, v) for a, k, v in _values_stated_at(correction.clause) if at >= 0 and at <= a < at + len(correction.new)]

    if correction.new and any(k == "number" for k, _ in said):
        # "调到 7.5 一只": the words after the new value in the clause say what the bare number is (a price each).
        typed = {v: k for k, v in in_its_place() if k != "number"}
        said = [(typed.get(v, k) if k == "number" else k, v) for k, v in said]
    if not correction.new and not correction.weak:
        # "the Portugal trip fell through, …, we're going to Naples instead, same week in September": a month said
        # in a change that names no new value is when it happens, not a value it changes ("a blood test in January").
        said = [(k, v) for k, v in said if k != "month"]
    if correction.new and any(k != "number" for k, _ in said):
        # "改成每天晚上传阿里云 OSS … 在华北2": beside a value of a kind, a bare number written onto Chinese
        # words is part of a name ("华北2"), not a value that changed (it had replaced a record's baud rate).
        glued = {v for at, k, v in _values_stated_at(correction.new) if k == "number" and at and re.match(r"[\u4e00-\u9fff]", correction.new[at - 1])}
        said = [(k, v) for k, v in said if not (k == "number" and v in glued)]
    # "20ppm 就该报 所有栋都按 20 来": the bare number is the value with its unit said again, not another one.
    with_unit = {m.group(0) for k, v in said if k != "number" and (m := re.match(r"\d+(?:\.\d+)?", v))}
    said = [(k, v) for k, v in said if not (k == "number" and v in with_unit)]
    return said if said or not correction.new else in_its_place()


# Kinds whose value is typed by the words that name its slot ("住在 X", "搬到 Y", "we moved to Z", "跑在 X 上"):
# a value of one says which slot it fills, beside a weak cue ("现在住 Pankow") and with no other word in common.
SELF_NAMED_KINDS = frozenset({"residence", "host"})


def _self_named(kind: str) -> bool:
    return kind.split(":")[0] in SELF_NAMED_KINDS  # "residence", "residence:megan"


def slot_cues(correction: Correction) -> list[str]:
    """The words records use for the slot the correction fills now (where someone lives, where
    a system runs: `SLOT_CUES`), for finding the record it replaces; [] for other changes."""
    said = {k for k, _ in _said_values(correction)[0]}
    # "搬到阿里云上了": a system moved to a named cloud or hosting service fills where it runs.
    kinds = {k.split(":")[0] for k in said} | ({"host"} if said & _HOST_KINDS else set())
    # "决定换成 Dramatiq": a project runs one tool of a kind at a time, so the records naming another
    # task queue are the ones it may replace, whatever words they share with the change.
    tools = sorted({k.split(":", 1)[1] for k in said if k.startswith("tool:")})
    return [cue for kind in sorted(kinds & set(SLOT_CUES)) for cue in SLOT_CUES[kind]] + [n for kind in tools for n in kind_spellings(kind)]


def names_the_slot(record: str, correction: Correction) -> bool:
    """Whether a word of the correction (its values left out) stands next to the record's value
    of a kind the correction states: "the budget's more like 22 grand" and "The budget is
    $18,000 tops" speak of one slot, whatever else the correction says."""
    if correction.count:
        return supersedes(record, correction) > 0  # the thing counted names the slot
    said, _beside = _said_values(correction)
    kinds = {k for k, _ in said}
    stated = {value_key(v) for _, v in said}
    words = subject_words(correction)
    held = [(at, k, v) for at, k, v in _values_at(record) if at >= 0 and not _version_of_another(record, at, k, correction.clause)]
    # A bare number said of a price ("定金 now 50 一位了" / "定金每人 30 块") names it as well; said to hold now beside
    # a value of a kind of its own it is a detail of that one ("we're on the late Thursday draw now, 8.45" names no
    # "four foot"; "we bumped the service to Node 22 on Friday" is no value said to hold now).
    typed = correction.weak and bool(kinds - {"number"})
    # A number that counts what the said one counts names it whatever is said beside ("the loom is a 16-shaft" / "fitted
    # the expansion board on saturday so it's 24 shafts now").
    if any((k in kinds or (k == "amount" and "number" in kinds)) and value_key(v) not in stated
           and ((not (k == "number" and typed) and (_self_named(k) or _near(record, (at, v), words) > 0))
                or (k == "number" and any(_same_thing_counted(record, at, v, correction, sv) for sk, sv in said if sk == k))) for at, k, v in held):
        return True
    if any(k == "host" and kinds & _HOST_KINDS for _, k, _ in held):
        return True  # "整套东西跑在办公室那台戴尔 T140 上" / "系统已经搬到阿里云上了": where it runs
    if re.fullmatch(r"[A-Za-z][\w' -]*", correction.new.strip()) and counterpart(record, correction):
        # "alerts go to a Telegram bot, token's in …" / "change of plan on alerts btw, move them over to Pushover":
        # the record's one name, in a clause that shares the change's words, is what a new name replaces (a
        # Latin name: a Chinese one is found by its last character, too loosely to name a slot alone).
        return True
    for kind in {k for k in kinds if k.startswith("tool:")}:
        # The one tool of the kind the record names, another than the new one ("async task 用 Celery +
        # Redis" / "决定换成 Dramatiq"); not a record comparing two ("去年对比过 Sidekiq 和 Celery").
        named = _keys_of_kind(held, kind)
        if len(named) == 1 and not named & stated:
            return True
    # "retested the 2k last night. 7:58" / "did my first 2k test on the erg last week, 8:12": a
    # measure with its unit said in both, in the sentence of the record's value, names the slot.
    measures = {value_key(v) for k, v in said if k.startswith("number:")}
    measure_kinds = {k for k, v in said if value_key(v) in measures}
    for at, k, v in held:
        if k in kinds and k not in measure_kinds and value_key(v) not in stated:
            start = max(record.rfind(ch, 0, at) for ch in ".!?。！？；;") + 1
            ends = [i for i in (record.find(ch, at) for ch in "!?。！？；;") if i >= 0] + [m.start() for m in _STOP_RE.finditer(record, at)][:1]
            if any(kk.startswith("number:") and value_key(vv) in measures for _, kk, vv in values_at(record[start: min(ends) if ends else len(record)])):
                return True
    for group in ({"day", "date"}, *({k} for k in kinds if k.startswith("number:"))):
        if not kinds & group:
            continue
        # A date is said of its event anywhere in the sentence ("on the 12th, we booked a table for
        # the dinner" / "the dinner moved to the 14th"), and so is a measure with its unit ("a block starts
        # watering when its probe reads under 18% (volumetric)" / "she wants the trigger at 22% on every
        # block"): the record's one value of the kind, a shared word in its sentence.
        dated = [(at, v) for at, k, v in held if k in group]
        if len(dated) == 1 and value_key(dated[0][1]) not in stated:
            at = dated[0][0]
            start = max(record.rfind(ch, 0, at) for ch in ".!?。！？；;") + 1
            ends = [i for i in (record.find(ch, at) for ch in ".!?。！？；;") if i >= 0]
            # (A word that only says when names no event: "staying till mid may" and "lambs are due 28 March"
            # after "tups went in mid october" share "mid", not the slot.)
            if any(_names_more_than_when(w) for w in words & content_tokens(record[start: min(ends) if ends else len(record)])):
                return True
    return False


# Words of a change that say nothing about what changed ("actually, make it 30", "还是改成 30 吧").
_BARE_WORDS = frozenset({
    "make", "set", "let", "go", "use", "change", "instead", "rather", "better", "fine", "okay", "maybe", "probably", "let's", "hmm",
    "还是", "改成", "设成", "调到", "改到", "就用", "算了", "那就", "要不", "不然", "还是改", "是改", "是调", "还是调", "是设", "还是设",
})


def bare_value(correction: Correction) -> bool:
    """The correction says one new value and nothing of what it is the value of ("Actually,
    make it 30.", "还是调到 30 吧"): it can only mean the setting just said."""
    return not correction.old and len(values(correction.new or correction.clause)) == 1 and not (subject_words(correction) - _BARE_WORDS)


def _a_range(text: str, stated: list[str]) -> bool:
    """Whether `text` joins the stated values as a range ("Saturday 22:00 to Sunday 01:00", "周六到周日")."""
    at = [text.find(v) for v in stated]
    if min(at) < 0:
        return False
    between = text[min(at): max(at)]
    return bool(re.search(r"\b(?:to|until|till|through|and)\b|[-–~～]|到|至|和", between, re.IGNORECASE))


def repeats_old_value(record: str, correction: Correction) -> bool:
    """The correction says the record's one value of a kind again beside one other of that kind
    ("Actually 30, 40 was too many" / "… set to 40"; "老周周六要去带一个乐队排练 以后改成周日下午 4 点上课" says the
    old day in its clause, the new one in its change): the other replaces it."""
    said = values(correction.clause)
    for kind in {k for k, _ in said}:
        held = [v for k, v in values(record) if k == kind]
        stated = {_said_again_key(kind, v) for k, v in said if k == kind}
        if len(held) == 1 and _said_again_key(kind, held[0]) in stated and len(stated) == 2 and not _a_range(correction.clause, [v for k, v in said if k == kind]):
            return True
    return False


def said_now(correction: Correction) -> str:
    """The correction's clause as a statement of what holds now: without its comma clauses
    that name the old value, when another one names the new ("linyu.dev 续费太贵没续，主域名改成
    linyu.me" → "主域名改成 linyu.me"): stored when no record was there to correct."""
    if not correction.old or not correction.new:
        return correction.clause
    # (Unpunctuated Chinese ends a clause at a space between words: "汛限水位降了 不是 186.5 了 现在按 185.8 米" loses
    # "不是 186.5 了".)
    clauses = re.split(r"(?<=[，,；;])|" + CJK_CLAUSE_BREAK, correction.clause)
    kept = [c for c in clauses if correction.old.casefold() not in c.casefold()]
    if len(kept) == len(clauses) or not any(correction.new.casefold() in c.casefold() for c in kept):
        return correction.clause
    lead = re.match(r"^[^，,；;：:]{1,12}[：:]\s*", clauses[0])  # "域名动了：" says what it is about
    text = "".join(kept).strip().rstrip("，,；;")
    return (lead.group(0) + text) if lead and not text.startswith(lead.group(0)) else text


# A clause that adds something of its own after a change ("，同时给他配了OK镜", "also …").
_ALSO_CLAUSE_RE = re.compile(r"^\s*(?:同时|另外|还有|顺便|而且|并且|also|and also|plus)\b|^\s*(?:同时|另外|还有|顺便|而且|并且)", re.IGNORECASE)
SAID_AFTER_MIN_WORDS = 4  # what the correcting sentence says after the change must say this much to be kept


def said_after_the_change(correction: Correction) -> str:
    """What the correcting sentence goes on to say after the clause of the change, when the change is written into the
    stored record and that clause is all the record takes: in Chinese written without punctuation, the clauses after it
    ("我上周已经把 logrus 全换成 zap 了 结构化 JSON 输出 你以后写新代码也用 zap 别再引 logrus 进来"); in punctuated writing, a
    clause that opens by adding something ("阿托品浓度加到 0.05%，同时给他配了OK镜"). "" when there is none."""
    clause, marks = correction.clause, (correction.new or correction.old).strip()
    if not marks:
        return ""
    if not re.search(r"[，,。；;！!？?]", clause):
        chunks = CJK_SPACE_RE.split(clause)
        at = next((i for i, c in enumerate(chunks) if marks in c), None)
        # Not a reason that names the old value ("不是周四了 是周三晚上 7 点 老师周四要去教别的班"), unless it is a rule ("别再引
        # logrus 进来"); not a request to the assistant ("你把 repo 里跟 Vercel 相关的东西清一下").
        rest = " ".join(c for c in chunks[at + 1:] if not (correction.old and correction.old in c and classify(c, role="user") != "instruction")
                        and not (REQUEST_RE.search(c) and not STRONG_RE.search(c))) if at is not None else ""
    else:
        parts = re.split(r"(?<=[，,；;。])", clause)
        at = next((i for i, c in enumerate(parts) if marks in c), None)
        also = next((i for i in range(at + 1, len(parts)) if _ALSO_CLAUSE_RE.match(parts[i])), None) if at is not None else None
        rest = "".join(parts[also:]) if also is not None else ""
    rest = rest.strip().strip("，,；;")
    return rest if len(content_tokens(rest)) >= SAID_AFTER_MIN_WORDS else ""


# A clause that tells what held before ("之前在我家客厅", "之前那个大豆蜡…", "上次我说用的是黑陶泥", "上礼拜
# （…）本来要去签 Fullerton 的 contract", "we used to ship with Royal Mail"), opening the clause. Not a
# life story ("我以前在电梯公司干了八年维修工", "以前在三甲医院药剂科干了八年": kept as said), not "本来就"
# (anyway), not "原来的同事" (someone), not "12 hours 以前 cancel" or "Black Friday 之前" (before a time).
_HISTORY_CLAUSE_RE = re.compile(
    r"^(?:(?:我|我们)|[^，,。；;：:]{0,24}[)）]|上个?(?:礼拜|星期|周|月)|去年|前年|前几天|前两天|昨天)?(?:之前|原来(?!的)|原先|本来(?=要|打算|想|定)|早先|(?:上次|之前)我?(?:说|讲))"
    r"|^(?:(?:and|but|so|we|i)\s+)*(?:used to|previously|originally)\b", re.IGNORECASE)
_LIFE_STORY_RE = re.compile(r"[干做当待呆]了?[一二三四五六七八九十两几\d]+年|工作|上班|\b(?:worked|years)\b", re.IGNORECASE)
# …said beside a clause that tells what holds now ("现在好多了", "其实是我搞错了，…", "now it's …").
_NOW_CLAUSE_RE = re.compile(_NOW_WORD_RE.pattern + r"|其实|实际上|改成|换成|改用|改去|\binstead\b|\bactually\b", re.IGNORECASE)
HISTORY_KEEPS_WORDS = 3  # what the record must still say without the clauses of what held before
# A complaint ("48 小时太长了", "黄龙太远", "Rock Lab 周末挤到爆", "Tushare 积分不够", "too expensive").
COMPLAINT_RE = re.compile(r"太(?:长|短|久|少|多|贵|便宜|慢|快|早|晚|高|低|大|小|紧|松|远|挤|吵)|挤(?:到)?爆|不够|(?:调|用)不了|涨价了"
                          r"|\btoo\s+(?:long|short|much|many|few|little|slow|fast|early|late|high|low|expensive|cheap|far|crowded|busy|noisy)\b",
                          re.IGNORECASE)
# Words that tell a change was made ("游泳馆换了", "改用 AkShare", "going as Frieren instead").
_CHANGED_RE = re.compile(r"换|改用|改去|改成|改报|\binstead\b|\bswitched\b|\bmoved\b", re.IGNORECASE)


def _history_clauses(text: str, *, reasons: bool = False) -> tuple[list[str], list[str]]:
    """The text's clauses, and those that tell only what held before, beside one that tells what
    holds now (none when no clause does). With `reasons`, in a text that tells a change, a clause
    of complaint is one of them: it says why the old one was given up, and names it ("游泳馆换了，
    黄龙太远，…现在改去家门口的奥体中心游泳馆")."""
    # (Unpunctuated Chinese ends a clause at a space between words: "机票改了 原来订的9月12号 … 所以改成9月5号出发了".)
    clauses = [c for c in re.split(r"(?<=[，,；;。！!？?])|(?<=[.!?])(?=\s)|" + CJK_CLAUSE_BREAK, text) if c.strip()]
    if len(clauses) < 2 or not any(_NOW_CLAUSE_RE.search(c) for c in clauses):
        return clauses, []
    reasons = reasons and bool(_CHANGED_RE.search(text))
    return clauses, [c for c in clauses if (_HISTORY_CLAUSE_RE.search(c.strip()) or (reasons and COMPLAINT_RE.search(c)))
                     and not _NOW_CLAUSE_RE.search(c) and not _LIFE_STORY_RE.search(c)]


def without_history(text: str) -> str:
    """A record that tells a change ("之前在我家客厅，邻居老嫌吵，现在好多了", "先更正一下，上次我说用的是
    黑陶泥，其实是我搞错了，…") without its clauses of what held before: the superseded value is not
    what the user's memory should say, even as history. Unchanged when no clause says what holds
    now, or too little would be left."""
    return _without(*_history_clauses(text, reasons=True)) or text


def _without(clauses: list[str], history: list[str]) -> str:
    """The clauses that are not history, joined; "" when none is history or too little is left."""
    kept = [c for c in clauses if c not in history]
    if not history or len(content_tokens("".join(kept))) < HISTORY_KEEPS_WORDS:
        return ""
    out = _JOINING_WORD_RE.sub("", "".join(kept).strip())
    if out.endswith(("，", ",", "；", ";")):
        out = out[:-1] + ("。" if is_chinese(out) else ".")
    return out[:1].upper() + out[1:]


# What a clause of what held before names, said after it with 是 / 在 / 用: "(我说)用的是黑陶泥", "在我家客厅"
# (not "之前那位…", "之前说的那个年纪…", which say no value).
_HELD_ZH = re.compile(r"\s*(?:我|我们)?(?:一直)?(?:说)?(?:用的是|用的|是|在|用)\s*(?P<old>[\u4e00-\u9fff]{2,6})")
_LATIN_NAME_RE = re.compile(r"(?<![\w-])[A-Z][\w'&.-]+(?:\s+[A-Z][\w'&.-]+)*")


def then_and_now(part: str) -> Correction | None:
    """A sentence that tells what held before beside what holds now ("之前在我家客厅，邻居老嫌吵，现在
    好多了", "上礼拜本来要去签 Fullerton 的 contract，…现在 book 了 Chijmes 的 hall"): a change, with
    what the clause of before names given up (a typed value, a capitalised name, or the Chinese
    words after its marker) and the sentence without that clause as what holds now."""
    clauses, history = _history_clauses(part)
    if len(history) != 1:
        return None
    rest = history[0].strip()
    rest = rest[_HISTORY_CLAUSE_RE.search(rest).end():]  # type: ignore[union-attr]
    typed = values(rest)
    name = _LATIN_NAME_RE.search(rest)
    run = _HELD_ZH.match(rest)
    old = typed[0][1] if typed else name.group(0) if name else run.group("old") if run else ""
    clause = _without(clauses, history)
    if len(old) < 2 or not clause:
        return None
    return Correction(clause=clause, old=old, new="", ended=True)


def subject_words(correction: Correction) -> set[str]:
    """The correction's own words, its values and the old value left out: what it is about."""
    said = f"{correction.clause} {correction.context}".strip()
    value_words = {t for _, v in values(said) for t in content_tokens(v)}
    return content_tokens(said) - value_words - content_tokens(correction.old)


# A correction whose subject is only a pronoun ("it's Tuesday 17 March now", "它现在改到周四了"):
# what it is about was said in the sentence before.
POINTS_BACK_RE = re.compile(r"^(?:(?:so|and|but|ok|okay|anyway)[,，]?\s+)?(?:it's|it is|it'll be|it will be|that's|that is|they're|they are)\b"
                            r"|^(?:所以|那)?(?:它|这个|那个)(?:现在)?(?:是|改|换|变)", re.IGNORECASE)


def _context_overlap(record: str, correction: Correction) -> float:
    """Share of the correction's words (values left out) that the record also uses. A word that
    only says when ("现在", "每天", "now", and the bigrams made of them) names no slot: "我现在每天早上
    六点起来背单词，背 40 分钟" and "我现在每天午休在 Cambly 上…聊 15 分钟" share nothing else, while
    "我现在每天练一个小时" and "平时每天练 30 分钟" share "练"."""
    words = subject_words(correction)
    if not words:
        return 0.0
    held = content_tokens(record)
    # A Latin word in another form counts ("I'm flying wednesdays now" / "I fly saturdays").
    stems = {_stem(t) for t in held if t.isascii() and len(t) >= 3}
    return len({w for w in words if (w in held or (w.isascii() and len(w) >= 4 and _stem(w) in stems)) and _names_more_than_when(w)}) / len(words)


_WHEN_WORDS = frozenset({"now", "nowadays", "currently", "every", "day", "days", "daily", "week", "weekly", "month", "mid"})
_WHEN_CHARS = frozenset("现在目前如今每天周月晚平时")


def _names_more_than_when(word: str) -> bool:
    if not is_chinese(word):
        return word.casefold() not in _WHEN_WORDS
    return any(ch not in _WHEN_CHARS and ch not in ZH_STOP_CHARS for ch in word)


# --------------------------------------------------------------------------- forget

# "我说请假回老家的那件事", "我提到的那个人", "我为什么开始爬的那段": a matter the user said.
_MATTER_ZH = r"(?:那件事|这件事|那些事|的事情|的事|那事儿?|那个事|那档子?事|那茬|那一?大?段(?:话|事)?|这一?大?段(?:话)?|那部分|那个人|那些话|的那些|烂摊子|破事)"
_SAID_MATTER_ZH = re.compile(rf"(?:说|提到?|讲|聊|吐槽|抱怨|骂|告诉你)(?:过)?的?[^，,。；;！!？?]{{0,30}}?{_MATTER_ZH}"
                             r"|(?:说|提|讲|聊|吐槽|抱怨|告诉你)[过到]?的(?:那个|那些|这个)"
                             # "二月份说的张师傅工资那个": the matter, then "那个" ending its clause.
                             r"|(?:说|提|讲|聊|告诉你)[过到]?的?[^，,。；;！!？?]{1,30}?(?:那个|那些)(?=\s*(?:[，,。；;]|$))")
_CLEAR_ZH = r"(?:删掉|删除|删了|清掉|清除|清干净|清理掉|抹掉|delete\s?掉?|当我没(?:说|提)过?)"
_CLEARS_SAID_MATTER_RE = re.compile(rf"(?:{_SAID_MATTER_ZH.pattern}).*?{_CLEAR_ZH}")

# "你那边不要再保存了", "你这边就别留着了": kept on the assistant's side is kept in its memory
# (a file the user saves is "别保存草稿", with no "你那边").
_YOUR_SIDE_KEEPS = (r"(?:(?:你|你们)(?:那边|这边|那里|那儿)的?(?:就|也|都|先)?(?:别|不要|不用|不必)(?:再)?(?:记|存|保存|保留|存储|留)"
                    # "Kevin 被裁那件事你那边删了吧", "你那边记的删了吧": cleared where the assistant keeps it.
                    r"|(?:你|你们)(?:那边|这边|那里|那儿)(?:记的|存的|记下的|存下的)?(?:就|也|都|先)?(?:删|清|抹)(?:掉|了|除))")

_FORGET_PATTERNS: list[re.Pattern[str]] = [
    re.compile(r"(?<!don't )(?<!dont )(?<!do not )(?<!never )\bforget\s+(?:about\s+|that\s+|what i (?:said|told you|mentioned)(?:\s+about)?\s+|everything (?:i said )?about\s+|the (?:part|thing|bit) about\s+)?(?P<subject>[^.!?]*)", re.IGNORECASE),
    # ("I don't remember the port" is not being able to recall it: a subject before "don't" says so.)
    re.compile(r"(?<!\bi )(?<!\bwe )(?<!\byou )(?<!\bthey )(?<!\bhe )(?<!\bshe )(?<!\bstill )(?<!\breally )"
               r"\b(?:don't|dont|do not|please don't|please dont|no need to) (?:(?:note|write|jot|put) (?:that|this|it) down|remember|keep|store|save|record|note down|memori[sz]e|hold on to|hang on to|hold onto|hang onto|keep hold of)\s+(?:(?:that|this|the) (?:bit|part|stuff|thing) about|any of (?:that|this|it)|that|this|it|what i said about|anything about)?\s*(?:anywhere|around|on file)?\s*(?P<subject>[^.!?]*)", re.IGNORECASE),
    # "actually — don't put that in any notes or anything": not to be put where notes are kept.
    re.compile(r"\b(?:don't|dont|do not|please don't|no need to) (?:put|write|jot) (?:that|this|it) (?:down )?(?:in|into) (?:any |your |the |my )?"
               r"(?:notes?|memory|records?|files?)\b(?P<subject>)", re.IGNORECASE),
    re.compile(r"\b(?:delete|remove|erase|drop|wipe)\s+(?:the|that|this|any|all|your)?\s*(?:memor(?:y|ies)|notes?|records?)\s*(?:about|of|on|for)?\s*(?P<subject>[^.!?]*)", re.IGNORECASE),
    re.compile(r"\bstop remembering\s*(?P<subject>[^.!?]*)", re.IGNORECASE),
    # "the bit about my trip abroad — wipe it from your notes", "I'd rather that wasn't kept
    # anywhere": the subject is said before the request, or is what was just said.
    # "actually leave that out of your notes".
    re.compile(r"\b(?:wipe|delete|remove|erase|scrub|clear|drop|take|scratch|strike|cross|leave|keep)\s+(?:it|that|this)\s+(?:out\s+)?(?:from|off|out of)\s+(?:your\s+|whatever\s+|any\s+|the\s+)?(?:notes|memory|records?|list)\b(?P<subject>)",
               re.IGNORECASE),
    # "take that out of whatever you keep about me": what the assistant keeps is its memory.
    re.compile(r"\b(?:wipe|delete|remove|erase|scrub|clear|drop|take|scratch|strike|cross|leave|keep)\s+(?:it|that|this)\s+(?:out\s+)?(?:from|off|out of)\s+"
               r"(?:whatever|what|everything|anything)\s+you\s+(?:keep|have|store|remember|know|hold)\b(?P<subject>)", re.IGNORECASE),
    # "scratch Duncan out of whatever you're keeping": the name is the subject.
    re.compile(r"\b(?:scratch|strike|cross|take|leave|keep|wipe|delete|remove)\s+(?P<subject>[\w'’ -]{1,40}?)\s+(?:out\s+)?(?:of|from|off)\s+"
               r"(?:whatever|what|everything|anything)\s+you(?:'re|’re| are)?\s+(?:keep|keeping|have|store|storing|remember|hold|holding)\b", re.IGNORECASE),
    # "帮我从你的 notes 里拿掉", "从记忆里去掉": out of the assistant's memory.
    re.compile(r"(?:从|在)?(?:你的?|你那边的?)?\s*(?:notes?|memory|笔记|记忆|记录|备忘)\s*(?:里面?|中|上)\s*(?:拿掉|删掉|去掉|删除|清掉|移除|抹掉|拿走|删了)(?P<subject>)", re.IGNORECASE),
    # "can you not keep that anywhere?"
    re.compile(r"\b(?:can|could|would) you (?:please )?not (?:keep|store|remember|save|record|hold on ?to|hang on to)\s+(?:that|it|this)\b(?P<subject>)", re.IGNORECASE),
    re.compile(r"\b(?:i'd|i would) (?:(?:really|much|just|honestly)\s+)?rather (?:that|it|this) (?:wasn't|weren't|isn't|not be|was not) (?:kept|stored|remembered|saved|written down)\b(?P<subject>)",
               re.IGNORECASE),
    # "I don't want that written down anywhere".
    re.compile(r"\bi (?:don't|do not) want (?:that|it|this) (?:kept|stored|remembered|saved|written down)\b(?P<subject>)", re.IGNORECASE),
    # "I don't want it sitting in your notes", "… kept in your memory".
    re.compile(r"\bi (?:don't|do not) want (?:that|it|this|any of (?:that|this|it)) (?:sitting |kept |stored |written (?:down )?|lying around )?(?:in|on) (?:your |the |my |any )?(?:notes|memory|records?|file)\b(?P<subject>)",
               re.IGNORECASE),
    # "I'd rather you didn't hang on to that", "that's not something I want stored".
    re.compile(r"\b(?:i'd|i would) rather you (?:didn't|did not|don't|wouldn't) (?:remember|keep|store|save|record|hold on ?to|hang on to|keep hold of)\s+(?:that|it|this)\b(?P<subject>)",
               re.IGNORECASE),
    re.compile(r"\b(?:not something|nothing) i want (?:you to )?(?:keep|store|remember|kept|stored|remembered|saved|on file)\b(?P<subject>)", re.IGNORECASE),
    # "上个月我说请假回老家的那件事……清掉吧", "我提到的那个人……可以 delete 掉吗": a matter the user
    # said, named before a word that clears it.
    re.compile(_CLEAR_ZH + "(?P<subject>)"),
    # "scrap what I said in january about the panic attack": a time may stand between.
    re.compile(r"\b(?:scratch|scrap|drop|strike) (?:the (?:bit|part|thing)|what i (?:said|told you|mentioned)|everything i said)"
               r"(?:\s+(?:in|on|last|back in|back on|earlier|before|the other)\b[\w\s]{0,20}?)?\s+about\s+(?P<subject>[^.!?,—–]*)", re.IGNORECASE),
    # "忘掉之前说的磁盘阈值吧": the subject after the request.
    re.compile(r"(?:^|[，,])\s*(?:请|你)?(?:忘掉|删掉|删除)(?!吧|了吧|它)(?P<subject>[^，,。！!？?]{2,}?)(?:吧|了|这件事|的事)?\s*(?:[，,。！!]|$)"),
    re.compile(_YOUR_SIDE_KEEPS + "(?P<subject>)"),
    # "……哎算了，这段你别往心里记": not to be kept in mind.
    # ("你别往心里去", "don't take it to heart", asks nothing of memory.)
    re.compile(r"(?P<subject>[^，,。！!？?]*?)(?:你)?(?:别|不要|不用|莫)(?:往心里记|记(?:在)?心上)"),
    # "……算了这段你删了吧": the passage just said, deleted where the assistant keeps it.
    # "哎这段 don't save 好了", "… wait 这个 don't remember，跟 kombucha 没关系": this one, not kept (这个 only
    # before "don't": "这个删了吧" deletes a file as often as a memory).
    # "算了这段别留，当我没说": not kept either.
    re.compile(r"(?:(?:这段|这句|这条|那段|那句|刚才那段)(?:话)?(?:你)?(?:就|也)?(?:(?:删|删掉|删了|删除)(?:了|掉)?吧?|(?:别|不要|不用)(?:再)?留(?:着|下)?)"
               r"|(?:这段|这句|这条|那段|那句|刚才那段|这个|那个|这些|\bthis one|\bthat one|\bthis bit|\bthat bit|\bthis part|\bthat part)(?:话)?(?:你)?(?:就|也)?\s*(?:don'?t|dont|do not)\s+(?:save|keep|store|record|remember)\b)(?P<subject>)",
               re.IGNORECASE),
    # "上次 Kevin 那个事你就当没听过哈": heard as if never said, the subject before.
    re.compile(r"(?:把|关于)?(?P<subject>[^，,。！!？?]*?)(?:你)?(?:就|也)?当(?:作|做|成)?(?:我)?没(?:听(?:过|见|到)|说过|提过)"),
    re.compile(r"(?:把|关于)?(?P<subject>[^，,。！!？?]*?)(?:的事|的事情|这件事|这事|的内容|的记忆)?(?:就|也|都|先)?(?:别|不要|不用|莫)(?:再)?(?:记(?:住|下|录|着|到)?|存(?:着|下来)?(?=[了啦吧啊哈呀哦喔噢，,。！!]|\s*(?:ok|okay|好吗|行吗|好不好)\s*[?？]|$)|留着"
               # "这个别 save，还没结论": the English verb in mixed writing.
               r"|\s*(?:save|keep|store|record|remember)\b(?=\s*(?:[了啦吧啊哈呀哦喔噢，,。！!]|$)))(?:了|啦)?", re.IGNORECASE),
    re.compile(r"(?:把|关于)?(?P<subject>[^，,。！!？?]*?)(?:的事|的事情|这件事|这事|的内容|的记忆)?(?:都|也|就)?(?:忘掉|忘了吧|忘了它吧|忘掉它吧|删掉|删除|删了|delete\s?掉)(?:吧|它|这条记忆|这条|这个记忆)?"),
]
# Words that say what kind of thing is to be forgotten, not what it is ("the salary figure",
# "工资那个数字"): the rest of the subject is what a record must mention.
_GENERIC_SUBJECT_EN = re.compile(r"\b(figures?|numbers?|details?|info|information|stuff|part|bit|things?|amount|data|story|business|you know (?:which one|what i mean|the one))\b", re.IGNORECASE)
_GENERIC_SUBJECT_ZH = re.compile(r"(?:那个|这个|那些|这些)(?:数字|号码|信息|内容|部分|细节|事情|事儿|事)?$|(?:数字|号码|信息|内容|部分|细节|事情|事儿)$"
                                  r"|^(?:之前|刚才|上次|前面|我)*(?:说|提|讲)(?:的|过的)")
# ("even if I forget to ask", "I always forget to log it": forgetting, not a request to.)
# ("so forget safari, it's chrome on android now", "forget Tuesday, we meet on Thursdays now": never mind what held, what
# holds now is said next — a change, not a request to forget.)
_FORGET_GUARD_RE = re.compile(r"\b(don't|dont|do not|never|not) forget\b|\b(?:if|when|whenever|in case|unless)\s+(?:i|we|you)\s+forget\b"
                              r"|\bforget\s+(?!(?:about|what|that|this|it|everything|anything|all|i|my|me|him|her|them)\b)[^,;.!?]{1,30}[,;—–]\s*"
                              r"(?:it'?s|it is|it'll be|we'?re|we are|we|they'?re|they|i'?m|i)\b[^.!?]*\b(?:now|instead|these days|from now on)\b"
                              r"|\b(?:i|we)\s+(?:always\s+|sometimes\s+|often\s+|usually\s+|might\s+|may\s+|tend to\s+|keep\s+)?(?:forget|forgetting) to\b"
                              # ("people forget by the time I turn up", "I forget what it's called": someone forgets; "can you
                              # forget …", "you can forget that" and "pls forget …" ask.)
                              r"|\b(?:i|we|they|people|everyone|everybody|nobody|folks|(?!(?:lets|thanks|pls|plus|guys|yes)\b)[a-z]{3,}s)"
                              r"\s+(?:(?:often|always|usually|sometimes|easily|soon|quickly|probably|tend to)\s+)?forget\b|别忘|不要忘|忘了(带|拿|关|锁|交|写|说|告诉)|我忘了", re.IGNORECASE)
_MEMORY_WORD_RE = re.compile(r"记|\brather you (?:didn't|did not|don't|wouldn't) (?:keep|store|save|hold on ?to|hang on to|keep hold of)\b|\b(?:this|that) (?:one|bit|part) (?:don'?t|do not) (?:save|keep|store|record|remember)\b|(?:别|不要|不用|莫)\s*(?:save|keep|store|record|remember)\b(?=\s*(?:[了啦吧啊哈呀哦喔噢，,。！!]|$))|\b(?:can|could|would) you (?:please )?not (?:keep|store|remember|save)\b|(?:别|不用|不要)(?:再)?(?:存(?:着|下来)?(?=[了啦吧啊哈呀哦喔噢，,。！!]|\s*(?:ok|okay|好吗|行吗|好不好)\s*[?？]|$)|留着)|笔记|"
                             + _YOUR_SIDE_KEEPS + r"|\b(?:whatever|what|everything|anything) you (?:keep|have|store|remember|know|hold)\b|忘掉|忘了吧|忘了它吧|memor|forget|remember|record|note|scratch|strike|drop (the|what)|scrap (the|what)|\bwritten down\b|\bkept\b|\b(?:don't|dont|do not) keep (?:that|it|this)(?: stuff)? (?:around|anywhere|on file)\b|\b(?:don't|dont|do not) keep any of (?:that|this|it)\b|\b(?:don't|dont|do not) keep (?:that|this|it)\s*(?:[.!,;]|$)|\b(?:don't|dont|do not) keep (?:that|this|the) (?:bit|part|stuff|thing) about\b|\b(?:don't|dont|do not) (?:save|store|keep|record) (?:that|this) (?:bit|part)\s*(?:[.!,;—–]|$)|\b(?:don't|dont|do not) (?:save|store) (?:that|this)\s*(?:[.!,;—–]|$)|记录里|记忆里|\bstored\b|hold on ?to|hang on ?to|keep hold of"
                             r"|(?:删掉|删除|delete\s?掉?)关于|(?:别|不要|不用|莫)(?:往心里记|记(?:在)?心上)|(?:这段|这句|这条|那段|那句|刚才那段)(?:话)?(?:你)?(?:就|也)?(?:(?:删|删掉|删了|删除)(?:了|掉)?吧?|(?:别|不要|不用)(?:再)?留(?:着|下)?|\s*(?:don'?t|do not)\s+(?:save|keep|store|record|remember)\b)|关于.{1,30}?(?:那|这)条|当(?:作|做|成)?(?:我)?没听(?:过|见|到)", re.IGNORECASE)
ANAPHORIC_SUBJECT_RE = re.compile(r"^(it|that|this|those|these|all that|all of that|(?:that |this |the )?(?:bit|part)|what i (just )?said|the last (one|thing)"
                                  # "forget I said that last bit" ("bit" left out as a generic word).
                                  r"|(?:i (?:ever |even |just )?(?:said|mentioned|told you) )?(?:that |this |the )?last(?: (?:bit|part|thing|one|sentence))?|i (ever |even )?(said|mentioned|told you|brought (it|that|this|any of (it|that|this)) up)( (it|that|this|about it))?( at all)?|这条|这个|这些|那个|那条|刚才(那|说的)?(条|个|些)?|上一条|这|那|)$", re.IGNORECASE)


def forget_subject(sentence: str) -> str | None:
    """The subject of a request to forget ("" when it points at what was just said), or None
    when the sentence is not one. "Don't forget to X" and "我忘了带钥匙" are not requests."""
    text = sentence.strip()
    if _FORGET_GUARD_RE.search(text) or not (_MEMORY_WORD_RE.search(text) or _CLEARS_SAID_MATTER_RE.search(text)):
        return None
    for pattern in _FORGET_PATTERNS:
        m = pattern.search(text)
        if not m:
            continue
        if pattern.pattern.startswith("(?:^|[，,])") and not re.search(r"吧|别记|不想|不用记", text):
            continue  # "删掉 X" alone is an instruction to the agent ("删掉这个文件"), not to memory
        if pattern.pattern.startswith("(?:把|关于)") and not re.search(
                r"(别|不要|不用|莫)(再)?(记|存(着|下来)?(?=[了啦吧啊哈呀哦喔噢，,。！!]|\s*(?:ok|okay|好吗|行吗|好不好)\s*[?？]|$))|(?:别|不要|不用|莫)\s*(?:save|keep|store|record|remember)\b(?=\s*(?:[了啦吧啊哈呀哦喔噢，,。！!]|$))|忘掉|忘了吧|删掉这条|删除这条|删掉关于|删除关于|的记忆|不太?想(让你|被)?记|不太?想.{0,6}被(记|存|留)"
                r"|关于.{1,30}?(?:那|这)条|忘了它吧|忘掉它吧|当(?:作|做|成)?(?:我)?没听(?:过|见|到)", text):
            continue
        if pattern.pattern.startswith(r"\b(?:delete|remove|erase") and not re.search(r"memor|notes? about|records? about", text, re.IGNORECASE):
            continue
        if "(?:notes?|memory|笔记|记忆|记录|备忘)" in pattern.pattern and re.search(r"我(?:已经|刚)?把", text[: m.start()]):
            continue  # "我把日志从记录里删了": what the user did to their own records
        if pattern.pattern.startswith(_CLEAR_ZH) and not _SAID_MATTER_ZH.search(text[: m.start()]):
            continue  # "清掉缓存吧" clears a cache; only a matter the user said is a memory
        # "forget that, we haven't agreed on it yet": the subject ends at the first clause break.
        subject = re.split(r"[,，;；—–]", m.group("subject").strip(" :：。.!！"))[0].strip()
        subject = re.sub(r"^(?:(?:btw|by the way|oh|also|and)\b|哦|噢|嗯|啊|诶|哎|唉)?[,，\s]*(?:对了|另外|还有)?[,，\s]*", "", subject, flags=re.IGNORECASE).strip()
        subject = re.sub(r"^(?:之前|上次|上回|前面)?(?:我)?(?:跟你|和你)?(?:说|提|讲)(?:过|到)?的", "", subject).strip()  # "之前跟你提的我身体…"
        subject = re.sub(r"^(?:你|你们)(?:那边|这边|那里|这里|那儿)(?:的)?(?:就|也|都)?", "", subject).strip()  # "你那边就别留着了": where, not what
        subject = re.sub(r"^i (?:ever |even )?(?:said|mentioned|told you) (?:anything |something )?about\s+", "", subject, flags=re.IGNORECASE)
        subject = re.sub(r"^(about|that|what i said about|me|my|the|请|帮我|麻烦|你|我的|我)\s*", "", subject, flags=re.IGNORECASE).strip()
        subject = re.sub(r"\b(please|pls|thanks|thank you|actually)\b", "", subject, flags=re.IGNORECASE).strip(" ,，")
        subject = re.sub(r"^(把|关于)", "", subject).strip()
        subject = re.sub(r"(?:你|你们)(?:还是|就|也|都|先)?$", "", subject).strip()  # "王科长那段你别存啊": who keeps it, not what
        subject = re.sub(r"^[\W_]+", "", subject).strip()  # "……刚才说…"
        subject = re.sub(r"^(?:hey|hi|ok|okay|嗯|哦)\b[,，\s]*", "", subject, flags=re.IGNORECASE).strip()
        subject = re.sub(r"^(?:刚才|刚刚|之前|上次|上回|前面|那天)\s*(?:我)?(?:说|提|讲)?(?:过|到)?(?:的)?", "", subject).strip()  # when it was said, not what
        # "…要是过了估计年底就撤了…… wait 这个千万别记下来", "她爸有时候会用工作室的电脑 😅 欸这个不用记": after a
        # pause (an emoji ends a clause as a full stop does), what the request points at.
        subject = re.split(r"…+|\.{3,}|——|\bwait\b|[\U0001F300-\U0001FAFF\u2600-\u27BF]", subject, flags=re.IGNORECASE)[-1].strip()
        subject = re.sub(r"(?:千万|一定|务必|可|真的)+$", "", subject).strip()
        subject = re.sub(r"(?:你)?(?:就|也)?(?:别|不要|不用)(?:再)?留(?:着|下)?$", "", subject).strip()  # "算了这段别留，当我没说"
        # "算了 这个你忘掉吧 别记": the request said twice, around no subject.
        subject = re.sub(r"^(?:算了|好了)\s*|\s*(?:你|你就)?(?:忘掉|忘了)(?:它)?吧?$", "", subject).strip()
        subject = re.sub(r"(这个|这条|那个|那条|这件事|这事|的事情?|的内容|这些|那段话?|这段话?)$", "", subject).strip()
        subject = re.sub(r"^(?:好了|算了|了|吧|啦|哈|啊|欸|诶|哎|唉|呃|嗯)+$", "", subject)  # "这段 don't save 好了", "……欸这个你不要记": no subject
        subject = re.split(r"[,，;；—–]", subject)[0].strip()  # "forget that, we haven't agreed" → "that"
        if re.match(r"[A-Za-z]", subject):
            subject = re.split(r"(?<=[A-Za-z])\s+(?=[\u4e00-\u9fff])", subject)[0]  # "forget it 唔想再提": the English object only
        if re.match(r"^(?:这些|那些)", subject):
            subject = ""  # "这些家里的事你别记着啊": "these" are the things just said
        narrowed = _GENERIC_SUBJECT_ZH.sub("", _GENERIC_SUBJECT_EN.sub("", subject).strip()).strip(" ,，的")
        subject = re.sub(r"^(the|my|our|a)\s+", "", re.sub(r"\s{2,}", " ", narrowed), flags=re.IGNORECASE).strip() if narrowed else subject
        # "no need to keep it around", "don't keep that in your notes": what is kept is "it", not where.
        subject = re.sub(r"^(?:it\s+)?(?:around|in mind|on file|on record|in (?:your|the) (?:notes|memory|records?)(?: or whatever| or anything| anywhere)?)$", "", subject,
                         flags=re.IGNORECASE).strip()
        if ANAPHORIC_SUBJECT_RE.match(subject):
            # "I told you about the budget — forget that": the subject is said before the request.
            before = text[: m.start()]
            matter = said_matter(before)
            if matter:
                return matter
            about = re.search(r"\babout (?:the |my |our )?(?P<what>[\w\- ]{2,40}?)(?:\s+(?:yesterday|earlier|before|last \w+))?\s*(?:[—–,，-]|$)", before, re.IGNORECASE)
            if about is None:
                # "还有之前跟我老公闹别扭那件事，别存着了": the matter named in the clause before.
                about = re.search(r"(?:^|[，,。；;])\s*(?:还有|另外|对了|那个)?[，,]?\s*(?:之前|上次|上回|刚才|前面)?(?:跟你|和你)?(?:说的|提的|讲的)?(?:那个)?"
                                  r"(?P<what>[^，,。；;！!？?]{2,30}?)(?:那件事|这件事|的事情|的事|那事|那个事)\s*[，,]?\s*$", before)
            if about is None:
                # "the whole saga with next door and the council - honestly forget I ever brought
                # it up": the matter is named before a dash, the request follows it.
                about = re.search(r"(?:^|[.!?。！？]\s*)(?:oh\s+|and\s+|also\s+|btw\s+)*(?P<what>[^.!?。！？—–]{4,80}?)\s+[—–-]+\s+(?:\w+[,\s]+){0,2}$",
                                  before, re.IGNORECASE)
            what = about.group("what").strip() if about else ""
            # "…lawyers etc. actually — don't save that": a word that turns back is no matter.
            # (nor does one that takes it back: "actually, scrap that — dont keep that in your memory".)
            return "" if re.fullmatch(r"(?:actually|honestly|wait|oh|ok|okay|hmm|um|no|sorry|anyway|btw)(?:[\s,]+(?:scrap|scratch|forget|drop|ignore)\s+(?:that|it|this))?\W*",
                                      what, re.IGNORECASE) else what
        return subject
    return None


_MATTER_FILLER_ZH = re.compile(
    r"^(?:哦|噢|啊|诶|哎|唉)?(?:还有|另外|对了|对|然后|嗯|好|good|ok|okay)?[，,\s.。]*(?:之前|上次|上回|上个月|上周|刚才|前面|前几天|第一次聊的时候|一开始|(?:去年|今年)?[一二三四五六七八九十\d]{1,2}月份?(?:的时候)?)?(?:我)?(?:跟你|和你|对你)?"
    r"(?:说|提到?|讲|聊)?(?:过)?的?(?:那几个|那个|那些)?(?:我的?(?=[\u4e00-\u9fff]{2}))?", re.IGNORECASE)  # "吐槽", "抱怨" say what it was: they stay
# "the stuff I told you right at the start about why I took this on, the work / health thing",
# "the bit about my partner's operation from a few weeks back".
_SAID_MATTER_EN = re.compile(
    r"\b(?:the (?:stuff|bit|part|thing|things)|what|everything|anything)\s+(?:(?:that\s+)?i\s+[^,—–]*?\s+)?about\s+(?P<what>[^—–.!?;]+)"
    # "that interview thing I told you about a while back"
    r"|\b(?:that|the)\s+(?P<named>[\w'-]+(?:\s+[\w'-]+){0,3}?)\s+(?:thing|stuff|business|matter|story)\s+(?:(?:that\s+)?i\s+(?:told you|mentioned|said|brought up|shared|dumped|unloaded|went on)|from\b)",
    re.IGNORECASE)
_WHEN_SAID_EN = re.compile(r"\b(?:from|since)?\s*(?:a (?:few|couple of) (?:weeks|days|months) (?:back|ago)|right at the start|at the start|earlier|the other day|last (?:week|month|time)|before)\b",
                           re.IGNORECASE)


def said_matter(before: str) -> str:
    """What a request to forget names in the words before it: every clause that names a
    matter the user said ("…的那件事", "那段", "the bit about …"), fillers and the
    "I told you" left out; "" when it names none (the request then means what was just said)."""
    en = _SAID_MATTER_EN.search(before)
    if en:
        what = _WHEN_SAID_EN.sub(" ", en.group("what") or en.group("named"))
        what = re.sub(r"^(?:my|our|the|a)\s+|\s+(?:that's|that is|it's)\s*$", "", re.sub(r"\s{2,}", " ", what).strip(" ,，"), flags=re.IGNORECASE)
        return what.strip(" ,，")
    parts = []
    for clause in re.split(r"[，,。；;！!？?…]+|\.{2,}", before):
        if not re.search(_MATTER_ZH, clause) and not _SAID_MATTER_ZH.search(clause):
            continue
        clause = re.sub(r"^[^\w\u4e00-\u9fff]+", "", _GENERIC_SUBJECT_EN.sub("", clause)).strip()  # "👍 另外…", "… you know which one"
        clause = re.sub(r"^[^：:]{1,8}[：:]\s*", "", clause)  # "先说个事：…" introduces the matter
        clause = re.sub(rf"(?:就|也|都)?{_CLEAR_ZH}.*$", "", clause).strip()  # "那段…就当我没提过"
        what = _MATTER_FILLER_ZH.sub("", re.sub(_MATTER_ZH + r"\s*$|那个\s*$|那些\s*$", "", clause)).strip().rstrip("的").strip()
        what = re.sub(rf"^{_MATTER_ZH}|^(?:那段|这段)", "", what).strip()
        if what and not _PERSONAL_GENERIC_ZH.fullmatch(what):
            parts.append(what)
    return "，".join(parts)


_PERSONAL_GENERIC_ZH = re.compile(r"(?:个人|私人|家里|自己)?的?(?:情况|私事|事情?|隐私|信息)")
# Words of a forget subject that say it was said, not what it is about.
_FORGET_NOT_NAMES = frozenset({"said", "told", "mentioned", "thing", "stuff", "what", "about", "bit", "part", "事情", "的事", "这件", "件事",
                               "什么", "为什", "怎么", "这么", "那么", "哪个"})


# "the panic attack and the counselling", "Kevin 被裁和他的新工作": two matters, each forgotten.
_FORGET_AND_RE = re.compile(r"\s+(?:and|&)\s+(?:the\s+|my\s+|his\s+|her\s+|our\s+)?|以及|还有|和")
STEM_PREFIX_MIN = 6  # "counselling" / "counsellor": English words sharing this much are one word to a forget


def forget_matches(record: str, subject: str) -> bool:
    """Whether `record` is about `subject`: it uses (almost) every content word of it, or of
    one of the matters the subject joins with "and"."""
    parts = [p for p in _FORGET_AND_RE.split(subject) if content_tokens(p) - _FORGET_NOT_NAMES]
    return any(_forget_matches_one(record, p) for p in (parts if len(parts) > 1 else [subject]))


def _forget_matches_one(record: str, subject: str) -> bool:
    words = content_tokens(subject) - _FORGET_NOT_NAMES
    if not words:
        return False
    said = content_tokens(record)
    stems = {w[:STEM_PREFIX_MIN] for w in said if len(w) >= STEM_PREFIX_MIN and w.isascii()}

    def uses(word: str) -> bool:
        return word in said or (len(word) >= STEM_PREFIX_MIN and word.isascii() and word[:STEM_PREFIX_MIN] in stems)

    shared = sum(1 for w in words if uses(w))
    if shared == len(words):
        return True
    # Most of the words, and most of those that name something: "吐槽 co-founder" is three
    # tokens, and "我跟 co-founder 两个人做的" has two of them but not the complaint.
    named = naming_words(subject) - _FORGET_NOT_NAMES
    return len(words) >= 3 and shared / len(words) >= 0.6 and (not named or sum(1 for w in named if uses(w)) / len(named) >= 0.6)


def _distinct_words(text: str) -> set[str]:
    """Content words that name something: English words of 4 letters or more, Chinese bigrams
    without a function character ("老公" of "跟我老公闹别扭", not "跟我")."""
    return naming_words(text) - _FORGET_NOT_NAMES


def forget_shares_word(record: str, subject: str) -> bool:
    """Whether `record` uses a word of the subject that names something (see _distinct_words)."""
    return bool(_distinct_words(subject) & content_tokens(record))


# A subject that names a kind of information rather than its words ("forget my salary",
# "地址这事别记了", "my housing situation", "那个钱的事"): what a record of that kind says. Used only
# when no record uses the subject's own words: for what the same session said when the subject
# is just the kind; otherwise, also when the subject names it among other words ("the family
# stuff", "工作上那档子事", "说领导的那些"), the only live record of the kind, or of several the
# first dense candidate (rules/l1.py).
_FORGET_CATEGORIES: list[tuple[str, re.Pattern[str]]] = [
    (r"salary|income|pay|wages?|earnings|工资|收入|薪水|薪资|月薪|年薪",
     re.compile(r"\b(earn|earns|earning|salary|income|paid|wages?)\b|工资|收入|薪|挣|月入|年入", re.IGNORECASE)),
    (r"address|home address|where i live|住址|地址|住哪|家庭住址",
     re.compile(r"\b(live|lives|living|flat|apartment|street|road|avenue|address|neighbourhood|neighborhood)\b|住在|住的|家在|地址|小区", re.IGNORECASE)),
    (r"health|medical|diagnosis|illness|medication|meds|(?:\w+ )?condition|disorder|disability|健康|病情|病|身体|吃药|用药|药",
     re.compile(r"diagnos|\b(illness|disease|medication|medicine|meds|tablets|therapy|surgery|operation|condition|disorder|syndrome|degeneration"
                r"|chronic|disab\w*|impair\w*|asthma|diabet\w*|cancer|tumou?r)\b|病|症|诊断|药|手术|住院|抑郁|焦虑", re.IGNORECASE)),
    (r"phone|phone number|number|电话|手机号|电话号码",
     re.compile(r"\+?\d[\d\s-]{6,}\d|电话|手机", re.IGNORECASE)),
    (r"housing|housing situation|home situation|living situation|flat|apartment|rent|landlord|住房|房子|租房|住的地方",
     re.compile(r"\b(landlord|evict\w*|rent|lease|tenancy|flat|apartment|housing|mortgage)\b|房东|房租|租房|租的|搬家|押金", re.IGNORECASE)),
    (r"money|the money|finances|debt|钱|那笔钱|财务|欠款|借款",
     re.compile(r"\b(money|funds?|debt|loans?|lent|lend|lending|borrow\w*|owe|owed|savings|spent|cost)\b|[$€£¥]\s?\d|\d+\s?(块|元|万)|钱|存款|欠|借|花了", re.IGNORECASE)),
    (r"family|family stuff|家里|家里的事|家人|家事",
     re.compile(r"\b(wife|husband|partner|brother|sister|mum|mom|mother|dad|father|parents|son|daughter|kids?|baby|pregnant|family)\b"
                r"|老婆|老公|爸|妈|哥|姐|弟|妹|孩子|儿子|女儿|家里|家人|怀孕", re.IGNORECASE)),
    # "who from my past is going to show up", "前任那些事": a former partner.
    (r"(?:my |an |the )?ex|exes|my past|from my past|(?:my )?former (?:partner|boyfriend|girlfriend)|前任|前男友|前女友|前夫|前妻",
     re.compile(r"\b(ex|ex-(?:boyfriend|girlfriend|husband|wife|partner)|former (?:partner|boyfriend|girlfriend))\b|前任|前男友|前女友|前夫|前妻", re.IGNORECASE)),
    # "my trip abroad", "出国那趟": travel.
    (r"trips?|travel|travell?ing|abroad|holiday|vacation|旅行|旅游|出国|出差|那趟",
     re.compile(r"\b(trip|flight|fly|flying|travel\w*|abroad|holiday|vacation|off to)\b|出国|旅行|旅游|机票|出差", re.IGNORECASE)),
    (r"job|work|career|boss|manager|colleagues?|co-?workers?|lay-?offs?|laid off|fired|工作|工作上|领导|老板|上司|跳槽|辞职|被裁|裁员|同事|单位|学校里?(?:的|那个)?人",
     re.compile(r"\b(job|laid off|fired|quit|quitting|resign\w*|interview\w*|boss|manager|cto|ceo|colleagues?|co-?workers?|team lead)\b"
                r"|被裁|裁员|辞职|跳槽|看机会|面试|领导|老板|上司|工作|同事|组长|主任|校长|单位", re.IGNORECASE)),
]


def forget_kinds(subject: str, *, alone: bool = True) -> list[re.Pattern[str]]:
    """What records of the kinds the subject names say (see _FORGET_CATEGORIES): the subject is
    only the kind (`alone`), or names it among other words. Computed once per request, then
    matched against each record with `says_kind`."""
    text = subject.strip()
    out = []
    for words, says in _FORGET_CATEGORIES:
        found = re.fullmatch(rf"(?:{words})", text, re.IGNORECASE) if alone else re.search(rf"(?<![a-z])(?:{words})(?![a-z])", text, re.IGNORECASE)
        if found:
            out.append(says)
    return out


def says_kind(record: str, kinds: list[re.Pattern[str]]) -> bool:
    """Whether `record` says information of one of `kinds` (from `forget_kinds`)."""
    return any(says.search(record) for says in kinds)
