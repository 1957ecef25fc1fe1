"""Skills are folders on disk (the files are the truth for content); the database only
remembers which of a profile's skills are pinned."""

from __future__ import annotations

from django.db import models

from apps.accounts.models import Profile


class SkillPin(models.Model):
    """A pinned skill cannot be deleted until it is unpinned (SPEC §1.7); editing still works."""

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="skill_pins")
    name = models.CharField(max_length=64)
    pinned_by = models.CharField(max_length=200, blank=True)
    pinned_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["profile", "name"], name="skills_pin_unique_per_profile")]
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.profile.slug}:{self.name}"
