"""L3 persona services (SPEC §1.5, §3.12, §3.13) and the human merge."""

from __future__ import annotations

from apps.accounts.models import Profile
from apps.persona import document
from apps.persona.models import PersonaVersion


def persona_live_entries(*, profile: Profile) -> list[str]:
    version = PersonaVersion.objects.filter(profile=profile).order_by("-number").first()
    return list(version.entries) if version else []


def persona_live_text(*, profile: Profile) -> str:
    """The live `USER.md` text (entries separated by `§` lines); '' when there is none."""
    return document.render(persona_live_entries(profile=profile))
