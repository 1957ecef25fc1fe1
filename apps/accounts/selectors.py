"""Reads of profiles' API tokens (never the secret: only its hash is stored)."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from apps.accounts.models import TOKEN_PREFIX_LEN_MIN, ApiToken


def token_list(*, profile_slug: str | None = None, include_revoked: bool = True) -> QuerySet[ApiToken]:
    tokens = ApiToken.objects.select_related("profile").order_by("profile__slug", "revoked_at", "-created_at")
    if profile_slug is not None:
        tokens = tokens.filter(profile__slug=profile_slug)
    if not include_revoked:
        tokens = tokens.filter(revoked_at__isnull=True)
    return tokens


def token_matches(*, ref: str, profile_slug: str | None = None) -> list[ApiToken]:
    """Active tokens called `ref`, or whose shown prefix starts with it (`mw_Bgn…`)."""
    ref = ref.strip().rstrip("…")
    if not ref:
        return []
    match = Q(name=ref)
    if ref.startswith("mw_") and len(ref) >= TOKEN_PREFIX_LEN_MIN:
        match |= Q(prefix__startswith=ref)
    return list(token_list(profile_slug=profile_slug, include_revoked=False).filter(match))
