"""Profiles, tokens and the audit log."""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from apps.accounts.models import (
    MODE_CHAT,
    MODE_CODE,
    ROLES,
    ApiToken,
    AuditEvent,
    Profile,
)

TOKEN_PREFIX = "mw_"


def _hash_token(plain: str) -> str:
    return hashlib.sha256(plain.encode("utf-8")).hexdigest()


def profile_create(*, slug: str, mode: str = MODE_CODE, name: str = "") -> Profile:
    if mode not in (MODE_CODE, MODE_CHAT):
        raise ValueError(f"mode must be 'code' or 'chat', got {mode!r}")
    profile = Profile(slug=slug, mode=mode, name=name or slug)
    profile.full_clean()
    profile.save()
    return profile


def profile_settings_restore(*, profile: Profile, settings: dict, known_projects: list) -> bool:
    """Give an imported profile the per-profile settings and known projects of its export,
    only when it has none of its own (an import never overrides what a person set)."""
    if profile.settings or profile.known_projects:
        return False
    Profile.objects.filter(pk=profile.pk).update(settings=dict(settings or {}), known_projects=list(known_projects or []))
    profile.settings, profile.known_projects = dict(settings or {}), list(known_projects or [])
    return True


# A name is what people and the audit log call a token: letters (any script), digits,
# spaces and . _ @ + -; no ':' because the audit actor is `token:<name>:<role>`.
TOKEN_NAME_RE = re.compile(r"^\w[\w .@+-]{0,63}$")
# last_used_at is bookkeeping: at most one write per token per minute, however busy it is.
LAST_USED_RESOLUTION = timedelta(seconds=60)


class TokenNameError(ValueError):
    """The name is malformed or another token of the profile has it."""


def token_name_check(name: str) -> str:
    name = (name or "").strip()
    if not TOKEN_NAME_RE.match(name) or name.endswith(" "):
        raise TokenNameError(
            f"token name {name!r} is not valid: 1-64 characters, letters, digits, spaces and . _ @ + - "
            "(starting with a letter or digit)"
        )
    return name


def token_name_free(*, profile: Profile, base: str) -> str:
    """`base`, or `base 2`, `base 3`… — the first name no token of the profile has."""
    taken = set(ApiToken.objects.filter(profile=profile, name__startswith=base).values_list("name", flat=True))
    if base not in taken:
        return base
    n = 2
    while f"{base} {n}" in taken:
        n += 1
    return f"{base} {n}"


def token_create(*, profile: Profile, role: str, name: str = "") -> tuple[ApiToken, str]:
    """Create a token; returns the row and the plain token, which is never stored.

    Without a name (programmatic callers) the token is named `<role>-<prefix>`; people
    name theirs (`createtoken --name`, the dashboard form). Names are never reused within
    a profile, revoked tokens included, so the audit log stays unambiguous."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    plain = TOKEN_PREFIX + secrets.token_urlsafe(32)
    prefix = plain[:10]
    name = token_name_check(name) if (name or "").strip() else f"{role}-{prefix}"
    taken = TokenNameError(
        f"profile {profile.slug!r} already has a token named {name!r} (revoked tokens keep their names); choose another"
    )
    if ApiToken.objects.filter(profile=profile, name=name).exists():
        raise taken
    try:
        with transaction.atomic():
            token = ApiToken.objects.create(profile=profile, role=role, name=name, prefix=prefix, token_hash=_hash_token(plain))
    except IntegrityError:
        raise taken from None
    return token, plain


def token_authenticate(*, plain: str) -> ApiToken | None:
    if not plain:
        return None
    token = (
        ApiToken.objects.select_related("profile")
        .filter(token_hash=_hash_token(plain), revoked_at__isnull=True)
        .first()
    )
    if token is not None:
        now = timezone.now()
        stale = now - LAST_USED_RESOLUTION
        if token.last_used_at is None or token.last_used_at < stale:
            # Conditional, so concurrent requests (threads, processes) write it once.
            ApiToken.objects.filter(pk=token.pk).filter(Q(last_used_at__isnull=True) | Q(last_used_at__lt=stale)).update(
                last_used_at=now
            )
    return token


def token_revoke(*, token: ApiToken, actor: str = "", tool: str = "accounts") -> bool:
    """Revoke a token; with an `actor`, audited on its profile. False if it was revoked already."""
    with transaction.atomic():
        changed = ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
        token.refresh_from_db(fields=["revoked_at"])
        if changed and actor:
            audit_record(profile=token.profile, actor=actor, tool=tool, action="token_revoke", target_type="token",
                         target_id=token.prefix, before={"role": token.role, "name": token.name, "prefix": token.prefix,
                                                       "active": True}, after={"active": False})
    return bool(changed)


def audit_record(
    *,
    profile: Profile,
    actor: str,
    tool: str,
    action: str,
    target_type: str = "",
    target_id: str = "",
    before: Any = None,
    after: Any = None,
    note: Any = None,
) -> AuditEvent:
    """Write one audit event inside the caller's transaction."""
    if not transaction.get_connection().in_atomic_block:
        # Audit rows must commit or roll back with the change they describe.
        with transaction.atomic():
            return audit_record(
                profile=profile, actor=actor, tool=tool, action=action, target_type=target_type,
                target_id=target_id, before=before, after=after, note=note,
            )
    return AuditEvent.objects.create(
        profile=profile, actor=actor, tool=tool, action=action, target_type=target_type,
        target_id=str(target_id), before=before, after=after, note=note,
    )


def audit_records(*, profile: Profile, actor: str, tool: str, events: list[dict[str, Any]]) -> list[AuditEvent]:
    """Write several audit events (each `{action, target_type, target_id, before, after,
    note}`) in one insert, in order, inside the caller's transaction."""
    if not transaction.get_connection().in_atomic_block:
        with transaction.atomic():
            return audit_records(profile=profile, actor=actor, tool=tool, events=events)
    return AuditEvent.objects.bulk_create([
        AuditEvent(profile=profile, actor=actor, tool=tool, action=e["action"], target_type=e.get("target_type", ""),
                   target_id=str(e.get("target_id", "")), before=e.get("before"), after=e.get("after"), note=e.get("note"))
        for e in events
    ])
