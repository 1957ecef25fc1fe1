"""`load_memory_rules` (SPEC §3.1): the L1 record contract of the profile's mode, and the
per-session memory of having loaded it."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.accounts.models import Profile
from apps.records.models import RulesLoad
from apps.records.normalize import refuse_bad_context

RULES_DIR = Path(__file__).resolve().parent / "rules"
RULE_MODES = ("once", "always")


@lru_cache(maxsize=4)
def rules_text(profile_mode: str) -> str:
    name = "chat.md" if profile_mode == "chat" else "code.md"
    return (RULES_DIR / name).read_text(encoding="utf-8")


def rules_load(*, profile: Profile, session_key: str, mode: str = "once") -> dict[str, Any]:
    """Return the contract and remember the load for `session_key`.

    A session that already holds `always` keeps it when it later asks for `once`: the
    contract stays loaded for the session, as `always` promised."""
    if mode not in RULE_MODES:
        raise ValueError(f"mode must be one of {RULE_MODES}")
    refuse_bad_context(session_key=session_key)
    for attempt in range(2):
        existing = RulesLoad.objects.filter(profile=profile, session_key=session_key).first()
        effective = "always" if (mode == "always" or (existing and existing.mode == "always")) else "once"
        try:
            with transaction.atomic():
                RulesLoad.objects.update_or_create(
                    profile=profile, session_key=session_key, defaults={"mode": effective, "loaded_at": timezone.now()}
                )
            break
        except IntegrityError:
            if attempt:  # a concurrent first load of the same session won twice: give up loudly
                raise
    return {"rules": rules_text(profile.mode), "mode": effective, "expiresAfterCommit": effective == "once"}


def rules_loaded(*, profile: Profile, session_key: str) -> bool:
    return RulesLoad.objects.filter(profile=profile, session_key=session_key).exists()


def rules_consume_once(*, profile: Profile, session_key: str) -> None:
    """A successful l1_commit of the session clears a `once` load (inside its transaction)."""
    RulesLoad.objects.filter(profile=profile, session_key=session_key, mode="once").delete()
