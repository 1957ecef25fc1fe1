"""Sentence-level extraction of memories by pattern (English and Chinese).

Each sentence of an eligible message is classified into at most one category; the
category maps to a record type of the profile's mode with a priority. Weaker than a
model, but deterministic, explainable and honest about provenance: every candidate
carries the message reference it came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from apps.pipeline.rules.text import file_mentions, is_chinese

# Category patterns, checked in this order (first match wins).
STRONG_RE = re.compile(r"\b(never|always|must|must not|under no circumstances)\b|务必|必须|禁止|一律|永远不要|绝对不要|千万别", re.IGNORECASE)

PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("task_done", re.compile(
        r"\b(i|we|i've|we've|have)\s+(finished|completed|fixed|shipped|merged|resolved)\b|\b(is|are)\s+(done|finished|fixed) now\b"
        r"|已(经)?(完成|修复|搞定|做完|上线|合并)|(做|搞|修)完了", re.IGNORECASE)),
    ("instruction", re.compile(
        r"\b(always|never|don't|do not|make sure (to|you)|from now on|going forward|in future|please (always|never|use|reply|answer|write|keep|avoid)"
        r"|remember that|you should (always|never)|must (not )?|avoid)\b"
        r"|以后|今后|总是|永远|不要|别再|务必|必须|禁止|一律|记住|请(始终|总是|用|使用|回答|回复|保持|避免)|统一(用|使用)|避免", re.IGNORECASE)),
    ("preference", re.compile(
        r"\b(i|we) (prefer|like|love|hate|dislike|enjoy|favou?r|tend to)\b|\bmy (preferred|favou?rite)\b|\bi'?d rather\b"
        r"|我(比较|更|很|不|最)?(喜欢|偏好|习惯|讨厌|爱|倾向)|我们(习惯|偏好)|偏好", re.IGNORECASE)),
    ("decision", re.compile(
        r"\b(we|i) (decided|agreed|chose|picked|settled on|will use|'ll use|are going with|switched to|are switching to)\b"
        r"|\blet'?s (go with|use|switch to|stick with)\b|\bdecision\b"
        r"|决定|改用|换成|采用|就用|定为|选用|确定用|定下来", re.IGNORECASE)),
    ("task", re.compile(
        r"\b(todo|to-do|need to|needs to|we should|i should|remember to|don't forget to|next step|later (we|i)|still have to|have to|follow[- ]up)\b"
        r"|待办|需要|要做|记得|下一步|回头|稍后|还没|得把|还要|计划", re.IGNORECASE)),
    ("persona", re.compile(
        r"\b(i am|i'm) (a|an|the)\b|\bmy name is\b|\bi work (as|at|in|on)\b|\bi live in\b|\bi(?:'m| am) from\b"
        r"|\bmy (wife|husband|partner|son|daughter|kids?|dog|cat|job|role|team|birthday|hometown)\b|\bi have (a|two|three) \w+\b"
        r"|我是|我叫|我在\S{1,10}(工作|上班|上学)|我住在|我来自|我的(妻子|老婆|老公|丈夫|孩子|儿子|女儿|狗|猫|工作|职业|生日|家乡)", re.IGNORECASE)),
    ("episode", re.compile(
        r"\b(yesterday|today|tonight|this (morning|week|weekend)|last (week|night|month|year|weekend))\b"
        r"|\b(i|we) (went|visited|met|bought|started|moved|travel(l)?ed|had)\b"
        r"|昨天|今天|今晚|上周|上个月|去年|刚才|刚刚|前天|周末|今早|去了|见了|买了|搬到", re.IGNORECASE)),
    ("fact", re.compile(
        r"\b(uses|is using|runs on|depends on|is deployed|is hosted|listens on|port \d+|version \d|is stored in|lives in|is configured)\b"
        r"|\b(the|our) (api|server|database|db|service|build|ci|config|repo|project|backend|frontend) (is|uses|runs|needs|has)\b"
        r"|部署在|运行在|依赖|端口|版本|配置在|存放在|使用的是|用的是|数据库是|项目(是|用)", re.IGNORECASE)),
]
ARTIFACT_RE = re.compile(
    r"\b(created|added|wrote|generated|saved|new file|renamed|moved|exported|published)\b|创建了?|新建了?|生成了?|写了|添加了?|保存(了|到)|导出了?",
    re.IGNORECASE,
)
QUESTION_RE = re.compile(r"[?？]\s*$|^(what|how|why|when|where|which|who|can you|could you|do you|is it|are there)\b|吗[?？]?$|呢[?？]?$", re.IGNORECASE)

CODE_TYPES = {
    "instruction": ("work_method", 80),
    "preference": ("work_method", 75),
    "decision": ("work_fact", 75),
    "task": ("work_task", 70),
    "task_done": ("work_task", 60),
    "fact": ("work_fact", 60),
    "artifact": ("work_artifact", 55),
}
CHAT_TYPES = {
    "instruction": ("instruction", 85),
    "preference": ("persona", 75),
    "persona": ("persona", 70),
    "decision": ("episodic", 60),
    "episode": ("episodic", 55),
    "task": ("episodic", 50),
}


@dataclass
class Candidate:
    content: str
    type: str
    priority: int
    category: str
    message: dict
    language: str
    task_state: str | None = None
    files: list[str] = field(default_factory=list)


def classify(sentence: str, *, role: str) -> str | None:
    if QUESTION_RE.search(sentence):
        return None
    if role == "assistant":
        # An assistant's prose is mostly narration; only the files it produced are facts.
        return "artifact" if ARTIFACT_RE.search(sentence) and file_mentions(sentence) else None
    for category, pattern in PATTERNS:
        if pattern.search(sentence):
            return category
    if ARTIFACT_RE.search(sentence) and file_mentions(sentence):
        return "artifact"
    return None


def extract_from_message(message: dict, *, mode: str, sentences: list[str]) -> list[Candidate]:
    table = CODE_TYPES if mode == "code" else CHAT_TYPES
    found: list[Candidate] = []
    for sentence in sentences:
        if len(sentence) < 6 or len(sentence) > 400:
            continue
        category = classify(sentence, role=str(message.get("role")))
        if category is None or category not in table:
            continue
        record_type, priority = table[category]
        if STRONG_RE.search(sentence) and category == "instruction":
            priority = -1 if mode == "chat" else 90
        task_state = "done" if category == "task_done" else None
        found.append(
            Candidate(
                content=sentence, type=record_type, priority=priority, category=category, message=message,
                language="zh" if is_chinese(sentence) else "en", task_state=task_state, files=file_mentions(sentence),
            )
        )
    return found
