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
from typing import Annotated, Any, Literal

from django.db import DatabaseError, transaction
from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

from apps.accounts.models import Profile
from apps.accounts.services import audit_record
from apps.conversations.shards import MAX_ROW_DEPTH, nests_deeper_than
from apps.tools.dispatch import text_scrub, text_scrub_deep, validate_body
from apps.tools.errors import Unavailable
from apps.tools.registry import NOT_BLANK

logger = logging.getLogger(__name__)

MAX_ROWS_PER_CALL = 1000
MAX_KEY_CHARS = 512  # id, sessionKey, sessionId, tool_name, tool_call_id
MAX_ROLE_CHARS = 64
MAX_CWD_CHARS = 4096
SERVER_OWNED = ("recordedAt", "sourceLine", "messageRef", "sourceFile", "sourceOffset")
FEED_ROLES = ("system", "user", "assistant", "tool_call", "tool_result")
# Fields that identify or place a row (and reach index columns): NUL or a lone surrogate
# there is refused. Every other string of a row is free text (replaced).
L0_KEY_FIELDS = frozenset({"id", "role", "sessionKey", "sessionId", "cwd", *SERVER_OWNED})
FEED_KEY_FIELDS = frozenset({"role", "sessionKey", "tool_name", "tool_call_id", *SERVER_OWNED})

Key = Annotated[str, Field(min_length=1, max_length=MAX_KEY_CHARS, pattern=NOT_BLANK)]
OptionalKey = Annotated[str | None, Field(max_length=MAX_KEY_CHARS)]
# JSON Schema for "none of the server-owned fields": a client that sends one gets a 400.
_NO_SERVER_FIELDS: dict[str, Any] = {"not": {"anyOf": [{"required": [name]} for name in SERVER_OWNED]}}


class _Row(BaseModel):
    """Common rules of a stored row: strict types, extras kept, server fields refused."""

    model_config = ConfigDict(extra="allow", strict=True, json_schema_extra=_NO_SERVER_FIELDS)

    content: Annotated[str, Field(json_schema_extra={"x-free-text": True})]
    sessionKey: Key
    # Declared only so that sending one is an error naming it (the schema says so with
    # `not`, above); never stored from the client.
    recordedAt: SkipJsonSchema[Any] = Field(None, exclude=True)
    sourceLine: SkipJsonSchema[Any] = Field(None, exclude=True)
    messageRef: SkipJsonSchema[Any] = Field(None, exclude=True)
    sourceFile: SkipJsonSchema[Any] = Field(None, exclude=True)
    sourceOffset: SkipJsonSchema[Any] = Field(None, exclude=True)

    @field_validator(*SERVER_OWNED, mode="before")
    @classmethod
    def _server_owned(cls, value: Any) -> Any:
        raise ValueError("is written by the server; do not send it")

    @model_validator(mode="before")
    @classmethod
    def _not_too_deep(cls, data: Any) -> Any:
        # Readers treat a line nested this deep as malformed, so it would never be read.
        if isinstance(data, dict) and nests_deeper_than(data, MAX_ROW_DEPTH):
            raise ValueError(f"nests lists/objects deeper than {MAX_ROW_DEPTH} levels")
        return data


class L0Row(_Row):
    """One conversation row (SPEC §1.1); other fields are kept as sent."""

    role: Annotated[str, Field(min_length=1, max_length=MAX_ROLE_CHARS, pattern=NOT_BLANK)]
    id: Annotated[str | None, Field(min_length=1, max_length=MAX_KEY_CHARS, pattern=NOT_BLANK)] = None
    timestamp: Annotated[int | None, Field(ge=0, lt=2**53, description="event time, epoch milliseconds")] = None
    sessionId: OptionalKey = None
    cwd: Annotated[str | None, Field(max_length=MAX_CWD_CHARS, description="null is stored as \"\"")] = ""

    def stored(self) -> dict[str, Any]:
        row = {
            "id": self.id, "role": self.role, "content": self.content, "timestamp": self.timestamp,
            "sessionKey": self.sessionKey, "sessionId": self.sessionId, "cwd": self.cwd if self.cwd is not None else "",
        }
        row.update({k: v for k, v in (self.model_extra or {}).items() if k not in row})
        return row


class L0MessagesBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    messages: list[L0Row] = Field(max_length=MAX_ROWS_PER_CALL, description=f"at most {MAX_ROWS_PER_CALL} rows")


class FeedEvent(_Row):
    """One sanitized skill-feed row (SPEC §1.8); other fields are kept as sent."""

    role: Literal["system", "user", "assistant", "tool_call", "tool_result"]
    tool_name: OptionalKey = None
    tool_call_id: OptionalKey = None
    is_error: bool | None = None

    def stored(self) -> dict[str, Any]:
        return {**self.model_dump(exclude_unset=True), **(self.model_extra or {})}


class FeedEventsBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    events: list[FeedEvent] = Field(max_length=MAX_ROWS_PER_CALL, description=f"at most {MAX_ROWS_PER_CALL} rows")


# The published request bodies: the object form, or a bare list of rows (loggers often
# send one). Validation wraps a bare list into the object form, so errors always name
# `messages.<index>.<field>`.
L0IngestBody = RootModel[L0MessagesBody | Annotated[list[L0Row], Field(max_length=MAX_ROWS_PER_CALL)]]
FeedIngestBody = RootModel[FeedEventsBody | Annotated[list[FeedEvent], Field(max_length=MAX_ROWS_PER_CALL)]]


def _scrub_free_text(row: Any, keys: frozenset[str]) -> Any:
    """Content and a logger's extra fields are the verbatim archive: NUL or a lone
    surrogate there is replaced by U+FFFD rather than losing the batch (docs/l0.md,
    "Text"). The key fields (`keys`) are left for the door, which refuses them."""
    if not isinstance(row, dict) or nests_deeper_than(row, MAX_ROW_DEPTH):
        return row  # the model refuses it; never walk it recursively
    return {
        (k if k in keys else text_scrub(k)) if isinstance(k, str) else k: (v if k in keys else text_scrub_deep(v))
        for k, v in row.items()
    }


def _validate(model: type[BaseModel], body: Any, key: str, keys: frozenset[str]) -> list[Any]:
    if isinstance(body, list):
        body = {key: body}
    if isinstance(body, dict) and isinstance(body.get(key), list):
        body = {**body, key: [_scrub_free_text(row, keys) for row in body[key]]}
    params = validate_body(model, body)
    return list(getattr(params, key))


def _append_or_unavailable(append: Callable[[], list[dict[str, Any]]], what: str) -> list[dict[str, Any]]:
    """Run the shard append; a failed write (disk full, permissions) leaves the shard as
    it was (the appender takes a partial batch back out) and answers `unavailable`."""
    try:
        return append()
    except OSError as exc:
        logger.exception("writing the %s failed", what)
        raise Unavailable(f"could not write the {what}: {exc.strerror or exc}; nothing was stored, retry later") from None
    except DatabaseError:
        # Only the duplicate check before the write reaches the database and raises
        # (the index write after it is best effort): nothing was stored.
        logger.exception("the duplicate check of the %s failed", what)
        raise Unavailable(f"could not check the {what} for rows already stored; nothing was stored, retry later") from None


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
    return [row.stored() for row in _validate(L0MessagesBody, body, "messages", L0_KEY_FIELDS)]


def validate_feed_rows(body: Any) -> list[dict[str, Any]]:
    """Validate a `POST /skill-feed/events` body (SPEC §1.8 rows)."""
    return [row.stored() for row in _validate(FeedEventsBody, body, "events", FEED_KEY_FIELDS)]


def l0_ingest(*, profile: Profile, actor: str, body: Any) -> dict[str, Any]:
    """`POST /api/v1/l0/messages`: validate, append to today's shard (idempotent per
    (sessionKey, id)), index, audit, and wake the L1 trigger with the number of eligible
    rows appended. Answer: `{appended, rows: [{index, shard, offset, sourceLine,
    messageRef, recordedAt}], duplicates: [{index, shard, offset, sourceLine, messageRef}]}`."""
    from apps.conversations.services import ELIGIBLE_ROLES, l0_append
    from apps.pipeline import triggers

    rows = validate_l0_rows(body)
    if not rows:
        return {"appended": 0, "rows": [], "duplicates": []}
    slots = _append_or_unavailable(lambda: l0_append(profile=profile, rows=rows), "L0 shard")
    written = [{"index": i, **_public(slot)} for i, slot in enumerate(slots) if not slot["duplicate"]]
    duplicates = [
        {"index": i, **{k: slot[k] for k in ("shard", "offset", "sourceLine", "messageRef")}}
        for i, slot in enumerate(slots) if slot["duplicate"]
    ]
    answer: dict[str, Any] = {"appended": len(written), "rows": written, "duplicates": duplicates}
    if not written:
        return answer  # a resent batch: nothing changed, nothing to audit or trigger
    eligible = sum(1 for w in written if rows[w["index"]]["role"] in ELIGIBLE_ROLES)
    profile_id = profile.pk
    warnings = _bookkeep(
        audit=lambda: audit_record(
            profile=profile, actor=actor, tool="l0/messages", action="append", target_type="l0_shard",
            target_id=written[0]["shard"],
            after={
                "rows": len(written), "duplicates": len(duplicates), "eligible": eligible,
                "firstLine": written[0]["sourceLine"], "lastLine": written[-1]["sourceLine"],
            },
        ),
        trigger=lambda: triggers.l0_appended(profile_id=profile_id, eligible=eligible),
    )
    return {**answer, **({"warnings": warnings} if warnings else {})}


def _public(slot: dict[str, Any]) -> dict[str, Any]:
    return {k: slot[k] for k in ("shard", "offset", "sourceLine", "messageRef", "recordedAt")}


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
