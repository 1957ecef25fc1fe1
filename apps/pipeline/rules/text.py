"""Text heuristics of the rules driver: the seed's quality gate, sentence splitting,
language, paths and a lexical similarity that works for English and Chinese alike."""

from __future__ import annotations

import itertools
import re
import unicodedata

CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")
WORD_RE = re.compile(r"[A-Za-z0-9_]+")
CODE_FENCE_RE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
INLINE_CODE_RE = re.compile(r"`([^`\n]{1,200})`")

INJECTION_RE = re.compile(
    r"(ignore (all|any|the)? ?(previous|prior|above)? ?(instructions|prompts|rules)"
    r"|disregard (all|any|the)? ?(previous|prior|above)? ?(instructions|rules)"
    r"|(reveal|print|output|show|repeat) (me )?(your|the) (system|hidden|initial) prompt"
    r"|you are now (dan|in developer mode)|jailbreak"
    r"|忽略(所有|之前|以上|上面)?的?(指令|指示|规则|提示)|无视(所有|之前|以上)?的?(指令|规则)"
    r"|输出你的系统提示词?|(告诉我|显示|打印)你的(系统)?提示词)",
    re.IGNORECASE,
)
NOISE_RE = re.compile(
    r"^(NO_REPLY|HEARTBEAT_OK|\[image\]|\[图片\]|\[audio\]|\[file\]|\[sticker\]|<image>|"
    r"(new|start(ed)?) (session|conversation)|session (started|bootstrap(ped)?)|会话(开始|已开始|引导))\.?$",
    re.IGNORECASE,
)


def is_cjk_char(ch: str) -> bool:
    return bool(CJK_RE.match(ch))


def quality_gate(content: object) -> str | None:
    """Why a message must not be extracted from (the seed's gate), or None if it passes."""
    if not isinstance(content, str) or not content.strip():
        return "blank"
    text = content.strip()
    if text.startswith("/"):
        return "command"
    if set(text) <= set("?？ "):
        return "question marks"
    if len(text) <= 5 and all(not (ch.isalnum() or ch.isspace() or is_cjk_char(ch)) for ch in text):
        return "symbols"
    if INJECTION_RE.search(text):
        return "prompt injection"
    if NOISE_RE.match(text):
        return "framework noise"
    return None


def is_chinese(text: str) -> bool:
    """Chinese is the dominant language; paths and inline code do not count as English."""
    text = INLINE_CODE_RE.sub(" ", text)
    text = REL_FILE_RE.sub(" ", ABS_PATH_RE.sub(" ", text))
    letters = sum(1 for ch in text if ch.isalpha())
    if not letters:
        return False
    return len(CJK_RE.findall(text)) / letters >= 0.3


_SPLIT_RE = re.compile(r"(?<=[。！？；!?;])\s*|\n+|(?<=[a-z0-9)\]\"']\.)\s+(?=[A-Z\u4e00-\u9fff\"'(])")


def sentences(content: str) -> list[str]:
    """Split a message into sentences, dropping fenced code and list markers."""
    text = CODE_FENCE_RE.sub("\n", content)
    out = []
    for part in _SPLIT_RE.split(text):
        if not part:
            continue
        part = re.sub(r"^\s*(?:[-*•]|\d+[.)、])\s+", "", part)
        part = re.sub(r"\s+", " ", part).strip()
        if part:
            out.append(part)
    return out


def normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return re.sub(r"[\s\W_]+", "", text)


def tokens(text: str) -> set[str]:
    text = unicodedata.normalize("NFKC", text).lower()
    found = set(WORD_RE.findall(text))
    cjk = [ch for ch in text if is_cjk_char(ch)]
    found.update(a + b for a, b in itertools.pairwise(cjk))
    found.update(cjk if len(cjk) < 2 else [])
    return found


def dropped_weight(old: str, new: str) -> float:
    """How much of `old`'s wording `new` leaves out: an English word counts 1, a Chinese
    character bigram 1/3 (one Chinese word touches about three bigrams)."""
    gone = tokens(old) - tokens(new)
    return sum(1 / 3 if is_cjk_char(t[0]) else 1 for t in gone)


def lexical_similarity(a: str, b: str) -> float:
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / len(ta | tb)


ABS_PATH_RE = re.compile(r"(?<![\w/.])(?:[A-Za-z]:[\\/]|/)(?:[\w.\-]+[\\/])*[\w.\-]+")
REL_FILE_RE = re.compile(r"(?<![\w/.])(?:[\w.\-]+/)+[\w\-]+\.[A-Za-z0-9]{1,8}\b|\b[\w\-]+\.(?:py|ts|tsx|js|jsx|go|rs|java|kt|rb|php|c|h|cpp|hpp|cs|md|json|ya?ml|toml|ini|sql|sh|css|html|vue|svelte)\b")


def absolute_paths(text: str) -> list[str]:
    found = []
    for match in ABS_PATH_RE.finditer(text):
        path = match.group(0).rstrip(".,;:)")
        if path.count("/") + path.count("\\") >= 2 or re.match(r"^[A-Za-z]:", path):
            found.append(path)
    return found


def file_mentions(text: str) -> list[str]:
    return [m.group(0) for m in REL_FILE_RE.finditer(text)] + absolute_paths(text)


def normalize_path(path: str) -> str:
    """Windows drive paths, backslashes and Git-Bash forms compare equal after this."""
    p = path.replace("\\", "/")
    m = re.match(r"^/([a-zA-Z])/(.*)$", p)
    if m:
        p = f"{m.group(1)}:/{m.group(2)}"
    if re.match(r"^[A-Za-z]:", p):
        p = p[0].lower() + p[1:]
    return p.rstrip("/")


def path_within(path: str, root: str) -> bool:
    p, r = normalize_path(path), normalize_path(root)
    return bool(r) and (p == r or p.startswith(r + "/"))


def one_line(text: str, limit: int) -> str:
    text = re.sub(r"\s+", " ", text.replace("§", " ")).replace("<!--", "").strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
