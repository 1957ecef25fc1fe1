from __future__ import annotations

import pytest

from apps.accounts.models import AuditEvent
from apps.conversations.cursors import cursor_get
from apps.persona.models import PersonaProposal, PersonaVersion


def set_live(profile, entries: list[str]) -> None:
    last = PersonaVersion.objects.filter(profile=profile).order_by("-number").first()
    PersonaVersion.objects.create(profile=profile, number=(last.number + 1) if last else 1, entries=entries, action="import")


def state(profile) -> dict:
    proposal = PersonaProposal.objects.filter(profile=profile).first()
    return {
        "versions": list(PersonaVersion.objects.filter(profile=profile).order_by("number").values_list("number", "entries")),
        "proposal": (proposal.entries, proposal.base, proposal.base_version, proposal.run_open) if proposal else None,
        "cursor": cursor_get(profile=profile, kind="l3"),
        "audit": AuditEvent.objects.filter(profile=profile).count(),
    }


@pytest.fixture
def live():
    return set_live
