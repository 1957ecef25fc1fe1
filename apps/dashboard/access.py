"""Who may see which profile in the dashboard, and as whom a person acts.

A person sees only the profiles granted through `ProfileAccess` (superusers see all).
Every view that takes a profile slug goes through `_get_profile_for_user`, so a profile
the person may not see answers 404 exactly like one that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.http import Http404, HttpRequest

from apps.accounts.models import Profile, ProfileAccess


@dataclass(frozen=True)
class ProfileView:
    """The profile a request works on, with the person's rights on it."""

    profile: Profile
    is_admin: bool

    @property
    def slug(self) -> str:
        return self.profile.slug


def profiles_for_user(user) -> list[Profile]:
    if not user.is_authenticated:
        return []
    if user.is_superuser:
        return list(Profile.objects.order_by("slug"))
    return list(Profile.objects.filter(access__user=user).order_by("slug"))


def _get_profile_for_user(request: HttpRequest, slug: str) -> ProfileView:
    user = request.user
    profile = Profile.objects.filter(slug=slug).first()
    if profile is None or not user.is_authenticated:
        raise Http404("no such profile")
    if user.is_superuser:
        return ProfileView(profile=profile, is_admin=True)
    access = ProfileAccess.objects.filter(user=user, profile=profile).first()
    if access is None:
        raise Http404("no such profile")
    return ProfileView(profile=profile, is_admin=access.is_admin)


def actor_for(request: HttpRequest) -> str:
    return f"user:{request.user.get_username()}"
