"""Read and write pipeline cursors. Writes belong inside the transaction they commit with."""

from __future__ import annotations

from typing import Any

from apps.accounts.models import Profile
from apps.conversations.models import Cursor


def cursor_get(*, profile: Profile, kind: str) -> dict[str, Any]:
    row = Cursor.objects.filter(profile=profile, kind=kind).first()
    return dict(row.value) if row else {}


def cursor_set(*, profile: Profile, kind: str, value: dict[str, Any]) -> None:
    Cursor.objects.update_or_create(profile=profile, kind=kind, defaults={"value": value})
