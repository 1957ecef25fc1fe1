"""The filtered record list as a download: CSV (for spreadsheets) or JSON."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

FORMATS = {"csv": "text/csv; charset=utf-8", "json": "application/json; charset=utf-8"}


def csv_cell(value: Any) -> str:
    """A cell a spreadsheet will not run: text starting with = + - @ (or a tab/CR) is a
    formula there, so it gets a leading apostrophe. Lists are joined with spaces."""
    if isinstance(value, list):
        value = " ".join(str(v) for v in value)
    if not isinstance(value, str):
        return "" if value is None else str(value)
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def render(fmt: str, rows: list[dict[str, Any]], *, total: int, ignored: list[str]) -> str:
    """The body of the download. CSV starts with a BOM, so spreadsheet programs read the
    UTF-8 (Chinese) text correctly; JSON says how many matched and whether it was cut."""
    if fmt == "json":
        return json.dumps({"total": total, "returned": len(rows), "truncated": total > len(rows), "filtersIgnored": ignored,
                           "records": rows}, ensure_ascii=False, indent=1)
    out = io.StringIO()
    writer = csv.writer(out)
    columns = list(rows[0]) if rows else ["recordId", "type", "content"]
    writer.writerow(columns)
    for row in rows:
        writer.writerow([csv_cell(row[c]) for c in columns])
    return "\ufeff" + out.getvalue()
