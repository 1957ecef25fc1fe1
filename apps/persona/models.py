"""Persona documents (SPEC §1.5): the live `USER.md` and the proposal `USER-temp.md`.

The live document is the newest `PersonaVersion` of the profile; every change of the
live text (a merge by a human, a restore, an import) appends a version, so every
previous `USER.md` stays in the history and can be restored.

The proposal is one `PersonaProposal` row per profile. It is a whole document (seeded
from `USER.md`), and each of its entries remembers which live entry it came from
(`origin`), so the difference to `USER.md` can be shown and merged entry by entry:
an entry without origin is an addition, an entry whose text differs from its origin is
an update, and a `base` entry that no proposal entry claims as origin is a deletion.
"""

from __future__ import annotations

from django.db import models

from apps.accounts.models import Profile


class PersonaVersion(models.Model):
    """One state of `USER.md`. The highest `number` of a profile is the live text."""

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="persona_versions")
    number = models.IntegerField()
    entries = models.JSONField(default=list)  # [str]
    action = models.CharField(max_length=32)  # merge | merge_entry | restore | import | edit
    actor = models.CharField(max_length=200, blank=True)
    note = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-number"]
        constraints = [models.UniqueConstraint(fields=["profile", "number"], name="uniq_persona_version_number")]


class PersonaProposal(models.Model):
    """`USER-temp.md`: the proposal a job writes entry by entry and a human merges."""

    profile = models.OneToOneField(Profile, on_delete=models.CASCADE, related_name="persona_proposal")
    entries = models.JSONField(default=list)  # [{"text": str, "origin": str | None}]
    # The live entries the proposal was seeded from, and that live version's number.
    base = models.JSONField(default=list)
    base_version = models.IntegerField(null=True, blank=True)
    # A run of the persona job: opened by its first l3_edit, closed by l3_commit.
    run_open = models.BooleanField(default=False)
    run_started_at = models.DateTimeField(null=True, blank=True)
    runs = models.IntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)
