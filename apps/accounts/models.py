"""Profiles (tenants), API tokens, people's access and the audit log."""

from __future__ import annotations

from django.conf import settings
from django.db import models

ROLE_AGENT = "agent"
ROLE_WORKER = "worker"
ROLE_ADMIN = "admin"
ROLES = (ROLE_AGENT, ROLE_WORKER, ROLE_ADMIN)
# A worker may do all an agent may; an admin all a worker may.
ROLE_RANK = {ROLE_AGENT: 0, ROLE_WORKER: 1, ROLE_ADMIN: 2}

# `revoketoken` accepts a token's shown prefix from this many characters on ("mw_" + 3).
TOKEN_PREFIX_LEN_MIN = 6

MODE_CODE = "code"
MODE_CHAT = "chat"


class Profile(models.Model):
    """One user or agent identity. Every other row belongs to exactly one profile."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200, blank=True)
    mode = models.CharField(max_length=8, choices=[(MODE_CODE, "code"), (MODE_CHAT, "chat")], default=MODE_CODE)
    # Per-profile overrides of SPEC §6 keys, e.g. {"l2.maxScenes": 30}.
    settings = models.JSONField(default=dict, blank=True)
    # Projects the dashboard or confirmed evidence maintain (absolute, normalised roots).
    known_projects = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class ApiToken(models.Model):
    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="tokens")
    role = models.CharField(max_length=8, choices=[(r, r) for r in ROLES])
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=12, db_index=True)
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # A name names one token of a profile for good (revoked ones keep theirs), so an
            # audit actor `token:<name>:<role>` never becomes ambiguous.
            models.UniqueConstraint(fields=["profile", "name"], name="token_name_unique_per_profile"),
        ]

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @property
    def actor(self) -> str:
        """How audit events name a call made with this token."""
        return f"token:{self.name}:{self.role}"


class ProfileAccess(models.Model):
    """A person's access to a profile in the dashboard."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile_access")
    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="access")
    is_admin = models.BooleanField(default=False)

    class Meta:
        unique_together = [("user", "profile")]


class AuditEvent(models.Model):
    """Every write: who, through what, when, and the before/after of each changed object."""

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="audit_events")
    actor = models.CharField(max_length=200)
    tool = models.CharField(max_length=100)
    action = models.CharField(max_length=100)
    target_type = models.CharField(max_length=50, blank=True)
    target_id = models.CharField(max_length=200, blank=True, db_index=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    note = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["profile", "target_type", "target_id"])]
