"""Profiles, tokens and the audit log."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.accounts.models import MODE_CHAT, MODE_CODE, ROLES, ApiToken, AuditEvent, Profile

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


def token_create(*, profile: Profile, role: str, name: str = "") -> tuple[ApiToken, str]:
    """Create a token; returns the row and the plain token, which is never stored."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    plain = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        profile=profile, role=role, name=name, prefix=plain[:10], token_hash=_hash_token(plain)
    )
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
        # Cheap bookkeeping, at most once a minute per token.
        if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


def token_revoke(*, token: ApiToken) -> None:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])


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
