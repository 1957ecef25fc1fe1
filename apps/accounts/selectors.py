"""Read-only queries over tokens (never the secret: only its hash is stored), people's
access and the audit log."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from apps.accounts.models import (
    TOKEN_PREFIX_LEN_MIN,
    ApiToken,
    AuditEvent,
    Profile,
    ProfileAccess,
)

AUDIT_FILTERS = ("actor", "tool", "action", "target")


def profile_tokens(profile: Profile) -> list[ApiToken]:
    return list(ApiToken.objects.filter(profile=profile).order_by("revoked_at", "-created_at"))


def profile_token(profile: Profile, token_id: int) -> ApiToken | None:
    return ApiToken.objects.filter(profile=profile, pk=token_id).first()


def profile_access(profile: Profile) -> list[ProfileAccess]:
    return list(ProfileAccess.objects.filter(profile=profile).select_related("user").order_by("user__username"))


def profile_access_row(profile: Profile, access_id: int) -> ProfileAccess | None:
    return ProfileAccess.objects.filter(profile=profile, pk=access_id).select_related("user", "profile").first()


def audit_events(profile: Profile, filters: dict[str, str], *, exact_actor: str | None = None) -> QuerySet[AuditEvent]:
    """Newest first; `actor` matches a fragment, the others exact values; `exact_actor`
    matches one actor exactly (a job run's events)."""
    events = AuditEvent.objects.filter(profile=profile).order_by("-id")
    if exact_actor is not None:
        events = events.filter(actor=exact_actor)
    if filters.get("actor"):
        events = events.filter(actor__icontains=filters["actor"])
    if filters.get("tool"):
        events = events.filter(tool=filters["tool"])
    if filters.get("action"):
        events = events.filter(action=filters["action"])
    if filters.get("target"):
        events = events.filter(target_id=filters["target"])
    return events


def audit_choices(profile: Profile) -> dict[str, list[str]]:
    """The tools and actions that occur in the profile's audit log (for the filter menus)."""
    events = AuditEvent.objects.filter(profile=profile)
    return {
        "tools": list(events.values_list("tool", flat=True).distinct().order_by("tool")[:100]),
        "actions": list(events.values_list("action", flat=True).distinct().order_by("action")[:100]),
    }


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
