"""The on-disk form of a persona document (SPEC §1.5): one entry per line, entries
separated by a line holding only `§`."""

from __future__ import annotations

SEPARATOR = "§"
FORBIDDEN_FRAGMENTS = ("§", "<!--", "-->")
# Every character str.splitlines() breaks at: an entry holding one would read as
# several lines to any other reader of USER.md.
LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")


def render(entries: list[str]) -> str:
    """The file text of a document; the empty document is the empty string."""
    if not entries:
        return ""
    return f"\n{SEPARATOR}\n".join(entries) + "\n"


def parse(text: str) -> list[str]:
    """Entries of a document file. Lines between separators are joined with a space, so a
    hand-edited file with wrapped lines still yields one-line entries; HTML comments and
    blank entries are dropped."""
    entries: list[str] = []
    current: list[str] = []

    def flush() -> None:
        joined = " ".join(part.strip() for part in current if part.strip())
        if joined:
            entries.append(joined)
        current.clear()

    in_comment = False
    # Every line break splitlines() knows ends a line (a file with bare \r endings, or a
    # U+2028 in it, still yields one-line entries); NUL characters are dropped.
    for raw in text.replace("\x00", "").splitlines():
        line = raw
        if in_comment:
            if "-->" in line:
                line = line.split("-->", 1)[1]
                in_comment = False
            else:
                continue
        while "<!--" in line:
            head, _, tail = line.partition("<!--")
            if "-->" in tail:
                line = head + tail.split("-->", 1)[1]
            else:
                line = head
                in_comment = True
        if line.strip() == SEPARATOR:
            flush()
        else:
            current.append(line)
    flush()
    return entries


def entry_problem(text: str) -> str | None:
    """Why `text` cannot be an entry, or None when it can."""
    if not isinstance(text, str) or not text.strip():
        return "an entry must be non-empty text"
    if any(ch in LINE_BREAKS for ch in text):
        return "an entry must be a single line (no newline or other line break such as U+2028, U+0085, \\v, \\f)"
    if "\x00" in text:
        return "an entry must not contain NUL (\\u0000) characters"
    if any("\ud800" <= ch <= "\udfff" for ch in text):
        return "an entry must not contain lone UTF-16 surrogates (not valid Unicode text)"
    for fragment in FORBIDDEN_FRAGMENTS:
        if fragment in text:
            if fragment == SEPARATOR:
                return "an entry must not contain '§' (the entry separator)"
            return "an entry must not contain an HTML comment ('<!--' or '-->')"
    return None


def chars(entries: list[str]) -> int:
    """The budget price of a document: the length of its file text."""
    return len(render(entries))
