"""Text diffs as the dashboard shows them: (op, text) runs, op '=', '+' or '-'."""

from __future__ import annotations

import difflib


def word_diff(old: str, new: str) -> list[tuple[str, str]]:
    """Character-level diff. Works for Chinese (no spaces to split on) as well as for English."""
    if old == new:
        return [("=", new)]
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    out: list[tuple[str, str]] = []
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            out.append(("=", old[a0:a1]))
        else:
            if a1 > a0:
                out.append(("-", old[a0:a1]))
            if b1 > b0:
                out.append(("+", new[b0:b1]))
    return out


def line_diff(old: str, new: str) -> list[tuple[str, str]]:
    out = []
    for line in difflib.ndiff((old or "").splitlines(), (new or "").splitlines()):
        op = line[:1]
        if op == "?":
            continue
        out.append(({"+": "+", "-": "-"}.get(op, "="), line[2:]))
    return out
