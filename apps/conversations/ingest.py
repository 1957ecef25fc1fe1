"""The two append endpoints' services: validate a batch of rows, append it, audit, trigger.

Rows are validated completely before anything is written, so a refused batch changes
nothing. Fields the SPEC names are type-checked; other fields are kept as sent (an
agent's logger may carry useful extras such as a model name); fields the server owns
(`recordedAt`, `sourceLine`, and the read-side `messageRef`, `sourceFile`, `sourceOffset`)
are refused rather than silently overwritten.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import transaction

from apps.accounts.models import Profile
from apps.accounts.services import audit_record
from apps.conversations.shards import MAX_ROW_DEPTH, nests_deeper_than
from apps.tools.errors import InvalidParams, Unavailable

logger = logging.getLogger(__name__)

MAX_ROWS_PER_CALL = 1000
MAX_KEY_CHARS = 512  # id, sessionKey, sessionId, role, tool_name, tool_call_id
SERVER_OWNED = ("recordedAt", "sourceLine", "messageRef", "sourceFile", "sourceOffset")
FEED_ROLES = ("system", "user", "assistant", "tool_call", "tool_result")


class _Errors:
    def __init__(self) -> None:
        self.details: list[dict[str, str]] = []

    def add(self, field: str, message: str) -> None:
        self.details.append({"field": field, "message": message})

    def raise_if_any(self) -> None:
        if self.details:
            summary = "; ".join(f"{d['field']}: {d['message']}" for d in self.details[:5])
            if len(self.details) > 5:
                summary += f"; and {len(self.details) - 5} more"
            raise InvalidParams(f"invalid rows: {summary}", details=self.details)


def _rows_from_body(body: Any, key: str) -> list[Any]:
    """`{<key>: [rows]}` or a bare list of rows."""
    if isinstance(body, list):
        rows = body
    elif isinstance(body, dict):
        unknown = sorted(set(body) - {key})
        if unknown:
            raise InvalidParams(
                f"unknown top-level field(s): {', '.join(unknown)} (expected {key})",
                details=[{"field": name, "message": "unknown field"} for name in unknown],
            )
        if key not in body:
            raise InvalidParams(f"{key} is required", details=[{"field": key, "message": "required"}])
        rows = body[key]
        if not isinstance(rows, list):
            raise InvalidParams(f"{key} must be a list of row objects", details=[{"field": key, "message": "must be a list"}])
    else:
        raise InvalidParams(f"the body must be {{{key}: [rows]}} or a list of rows", details=[{"field": "(body)", "message": "must be an object or a list"}])
    if len(rows) > MAX_ROWS_PER_CALL:
        raise InvalidParams(
            f"{key}: {len(rows)} rows in one call; the limit is {MAX_ROWS_PER_CALL}",
            details=[{"field": key, "message": f"at most {MAX_ROWS_PER_CALL} rows per call"}],
        )
    return rows


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_str(errors: _Errors, where: str, value: Any, *, required: bool, nullable: bool, nonempty: bool = False, limit: int | None = MAX_KEY_CHARS) -> None:
    if value is None:
        if required and not nullable:
            errors.add(where, "is required")
        return
    if not isinstance(value, str):
        errors.add(where, f"must be a string{' or null' if nullable else ''}, got {type(value).__name__}")
    elif nonempty and not value.strip():
        errors.add(where, "must not be empty")
    elif limit is not None and "\x00" in value:
        errors.add(where, "must not contain NUL characters")
    elif limit is not None and len(value) > limit:
        errors.add(where, f"is longer than {limit} characters")


def _check_common(errors: _Errors, where: str, raw: dict[str, Any]) -> None:
    for name in SERVER_OWNED:
        if name in raw:
            errors.add(f"{where}.{name}", "is written by the server; do not send it")
    _check_str(errors, f"{where}.content", raw.get("content"), required=True, nullable=False, limit=None)
    _check_str(errors, f"{where}.sessionKey", raw.get("sessionKey"), required=True, nullable=False, nonempty=True)


def _validate_rows(body: Any, key: str, check_row: Callable[[_Errors, str, dict[str, Any]], dict[str, Any]]) -> list[dict[str, Any]]:
    """Check every row (collecting every error) before returning any: all or nothing."""
    rows = _rows_from_body(body, key)
    errors = _Errors()
    out: list[dict[str, Any]] = []
    for index, raw in enumerate(rows):
        where = f"{key}.{index}"
        if not isinstance(raw, dict):
            errors.add(where, "must be an object")
            continue
        if nests_deeper_than(raw, MAX_ROW_DEPTH):
            errors.add(where, f"nests lists/objects deeper than {MAX_ROW_DEPTH} levels")
            continue
        _check_common(errors, where, raw)
        out.append(check_row(errors, where, raw))
    errors.raise_if_any()
    return out


def _check_l0_row(errors: _Errors, where: str, raw: dict[str, Any]) -> dict[str, Any]:
    _check_str(errors, f"{where}.role", raw.get("role"), required=True, nullable=False, nonempty=True, limit=64)
    _check_str(errors, f"{where}.id", raw.get("id"), required=False, nullable=True, nonempty=True)
    _check_str(errors, f"{where}.sessionId", raw.get("sessionId"), required=False, nullable=True)
    _check_str(errors, f"{where}.cwd", raw.get("cwd"), required=False, nullable=False, limit=4096)
    timestamp = raw.get("timestamp")
    if timestamp is not None and not (_is_int(timestamp) and 0 <= timestamp < 2**53):
        errors.add(f"{where}.timestamp", "must be an integer (epoch milliseconds, 0 ≤ t < 2^53) or null")
    row = {
        "id": raw.get("id"),
        "role": raw.get("role"),
        "content": raw.get("content"),
        "timestamp": timestamp,
        "sessionKey": raw.get("sessionKey"),
        "sessionId": raw.get("sessionId"),
        "cwd": raw.get("cwd") if raw.get("cwd") is not None else "",
    }
    row.update({k: v for k, v in raw.items() if k not in row})
    return row


def _check_feed_row(errors: _Errors, where: str, raw: dict[str, Any]) -> dict[str, Any]:
    role = raw.get("role")
    if role not in FEED_ROLES:
        errors.add(f"{where}.role", f"must be one of {', '.join(FEED_ROLES)}, got {role!r}")
    _check_str(errors, f"{where}.tool_name", raw.get("tool_name"), required=False, nullable=True)
    _check_str(errors, f"{where}.tool_call_id", raw.get("tool_call_id"), required=False, nullable=True)
    if raw.get("is_error") is not None and not isinstance(raw.get("is_error"), bool):
        errors.add(f"{where}.is_error", "must be a boolean or null")
    return dict(raw)


def _append_or_unavailable(append: Callable[[], list[dict[str, Any]]], what: str) -> list[dict[str, Any]]:
    """Run the shard append; a failed write (disk full, permissions) leaves the shard as
    it was (the appender takes a partial batch back out) and answers `unavailable`."""
    try:
        return append()
    except OSError as exc:
        logger.exception("writing the %s failed", what)
        raise Unavailable(f"could not write the {what}: {exc.strerror or exc}; nothing was stored, retry later") from None


def _bookkeep(*, audit: Callable[[], Any], trigger: Callable[[], Any]) -> list[dict[str, str]]:
    """Audit the append and wake its job, after the shard write.

    The shard write is the commit point: once it returned, the rows are stored. A database
    failure after it must not turn into an error, or the caller retries and every row is
    stored twice. So the audit event and the trigger are best effort: on failure the
    answer is still a success, with a warning, and the failure is logged. (The L0 index,
    the other database part, is caught up from the shard by `l0_reindex`.)
    """
    try:
        with transaction.atomic():
            audit()
            transaction.on_commit(trigger)
    except Exception:  # the rows are stored whatever failed here; see the docstring
        logger.exception("append bookkeeping failed after the shard write")
        try:
            trigger()
        except Exception:
            logger.exception("append trigger failed")
        return [{"code": "auditFailed", "message": "the rows are stored, but the audit event could not be written; do not resend them"}]
    return []


def validate_l0_rows(body: Any) -> list[dict[str, Any]]:
    """Validate a `POST /l0/messages` body; returns rows normalised to the SPEC §1.1 fields
    (`id`, `timestamp`, `sessionId` default to null, `cwd` to "")."""
    rows = _validate_rows(body, "messages", _check_l0_row)
    # A message id is unique within its session (SPEC §1.1): the same id twice in one
    # session of one batch would make its message reference ambiguous.
    errors = _Errors()
    first: dict[tuple[str, str], int] = {}
    for index, row in enumerate(rows):
        if row["id"] is None:
            continue
        key = (row["sessionKey"], row["id"])
        if key in first:
            errors.add(f"messages.{index}.id", f"repeats messages.{first[key]}.id {row['id']!r} in session {row['sessionKey']!r}; ids are unique within a session")
        else:
            first[key] = index
    errors.raise_if_any()
    return rows


def validate_feed_rows(body: Any) -> list[dict[str, Any]]:
    """Validate a `POST /skill-feed/events` body (SPEC §1.8 rows)."""
    return _validate_rows(body, "events", _check_feed_row)


def l0_ingest(*, profile: Profile, actor: str, body: Any) -> dict[str, Any]:
    """`POST /api/v1/l0/messages`: validate, append to today's shard, index, audit, and
    wake the L1 trigger with the number of eligible rows."""
    from apps.conversations.services import ELIGIBLE_ROLES, l0_append
    from apps.pipeline import triggers

    rows = validate_l0_rows(body)
    if not rows:
        return {"appended": 0, "rows": []}
    appended = _append_or_unavailable(lambda: l0_append(profile=profile, rows=rows), "L0 shard")
    eligible = sum(1 for r in rows if r["role"] in ELIGIBLE_ROLES)
    profile_id = profile.pk
    warnings = _bookkeep(
        audit=lambda: audit_record(
            profile=profile, actor=actor, tool="l0/messages", action="append", target_type="l0_shard",
            target_id=appended[0]["shard"],
            after={"rows": len(appended), "eligible": eligible, "firstLine": appended[0]["sourceLine"], "lastLine": appended[-1]["sourceLine"]},
        ),
        trigger=lambda: triggers.l0_appended(profile_id=profile_id, eligible=eligible),
    )
    return {"appended": len(appended), "rows": appended, **({"warnings": warnings} if warnings else {})}


def skill_feed_ingest(*, profile: Profile, actor: str, body: Any) -> dict[str, Any]:
    """`POST /api/v1/skill-feed/events`: validate, append, audit, wake the skill reviewer."""
    from apps.conversations.feed import skill_feed_append
    from apps.pipeline import triggers

    rows = validate_feed_rows(body)
    if not rows:
        return {"appended": 0, "rows": []}
    appended = _append_or_unavailable(lambda: skill_feed_append(profile=profile, rows=rows), "skill-feed shard")
    tool_calls = sum(1 for r in rows if r["role"] == "tool_call")
    profile_id = profile.pk
    warnings = _bookkeep(
        audit=lambda: audit_record(
            profile=profile, actor=actor, tool="skill-feed/events", action="append", target_type="skill_feed_shard",
            target_id=appended[0]["shard"], after={"rows": len(appended), "toolCalls": tool_calls},
        ),
        trigger=lambda: triggers.skill_feed_appended(profile_id=profile_id, tool_calls=tool_calls),
    )
    return {"appended": len(appended), "rows": appended, **({"warnings": warnings} if warnings else {})}
