"""SPEC §6 settings with per-profile overrides."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from apps.accounts.models import Profile


def profile_setting(profile: Profile | None, key: str) -> Any:
    defaults = settings.MEMORYWEB_DEFAULTS
    if key not in defaults:
        raise KeyError(f"unknown memoryweb setting {key!r}")
    if profile is not None:
        if key == "l1.mode":
            return profile.mode
        overrides = profile.settings or {}
        if key in overrides:
            return overrides[key]
    return defaults[key]
