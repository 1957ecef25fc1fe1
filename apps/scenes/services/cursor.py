"""The L2 cursor (`l2/cursor.json`: `{lastRecordId}`, a change id of L1)."""

from __future__ import annotations

import json
from typing import Any

from django.db.models import Max

from apps.accounts.models import Profile
from apps.conversations.cursors import cursor_get
from apps.records.models import L1Change
from apps.scenes import blocks as B
from apps.tools.errors import InvalidParams, invalid_field

CURSOR_KIND = "l2"


def parse_l2_cursor(value: Any, *, field_name: str = "cursor") -> int:
    """An L2 cursor: a change id as int or digit string, or `{"lastRecordId": n}` (as an
    object or its JSON text, the form of `l2/cursor.json`)."""
    raw = value
    if isinstance(raw, str):
        text = raw.strip()
        if text.startswith("{"):
            try:
                raw = json.loads(text)
            except json.JSONDecodeError:
                raise invalid_field(field_name, "not valid JSON") from None
        else:
            raw = text
    if isinstance(raw, dict):
        if set(raw) - {"lastRecordId"} or "lastRecordId" not in raw:
            raise invalid_field(field_name, "a cursor object holds exactly one key, lastRecordId")
        raw = raw["lastRecordId"]
        if isinstance(raw, str):
            raw = raw.strip()
    if isinstance(raw, bool):
        raise invalid_field(field_name, "must be a change id")
    if isinstance(raw, str) and raw.isascii() and raw.isdigit():
        raw = int(raw)
    if not isinstance(raw, int) or raw < 0:
        raise invalid_field(field_name, f"must be a change id (a non-negative integer), got {value!r}")
    return raw


def resolve_l2_cursor(*, profile: Profile, value: Any, field_name: str = "cursor") -> int:
    """`parse_l2_cursor`, also accepting the id of an L1 record of the profile (the seed calls
    the cursor "lastRecordId"): it stands for that record's newest change."""
    raw = value.get("lastRecordId") if isinstance(value, dict) else value
    if isinstance(raw, str) and raw.strip().startswith("{"):
        try:
            decoded = json.loads(raw)
        except json.JSONDecodeError:
            decoded = None
        if isinstance(decoded, dict):
            raw = decoded.get("lastRecordId")
    if isinstance(raw, str) and raw.strip().startswith("l1_"):
        if B.text_problem(raw):
            raise invalid_field(field_name, f"{raw.strip()!r} is not a record of this profile")
        newest = L1Change.objects.filter(profile=profile, record__record_id=raw.strip()).aggregate(m=Max("id"))["m"]
        if newest is None:
            raise invalid_field(field_name, f"{raw.strip()} is not a record of this profile")
        return newest
    return parse_l2_cursor(value, field_name=field_name)


def stored_l2_cursor(profile: Profile) -> int:
    value = cursor_get(profile=profile, kind=CURSOR_KIND).get("lastRecordId", 0)
    try:
        return parse_l2_cursor(value)
    except InvalidParams:
        return 0


def _newest_change_id(profile: Profile) -> int:
    return L1Change.objects.filter(profile=profile).aggregate(m=Max("id"))["m"] or 0

