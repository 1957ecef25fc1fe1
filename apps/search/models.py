"""The index outbox: index operations written in the record's transaction and drained
after commit, so a crash between the database and the index never loses a record and
never leaves a tombstoned record searchable."""

from __future__ import annotations

from django.db import models

from apps.accounts.models import Profile

OP_UPSERT = "upsert"  # (re)embed and write the point
OP_DELETE = "delete"  # remove the point (tombstone)
OP_PAYLOAD = "payload"  # payload-only change (task state, scene)


class IndexOp(models.Model):
    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="index_ops")
    record_id = models.CharField(max_length=64)
    op = models.CharField(max_length=16)
    created_at = models.DateTimeField(auto_now_add=True)
    attempts = models.IntegerField(default=0)
    last_error = models.TextField(blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    # A client-supplied embedding (l1_commit `embedding`), used only if it fits the model.
    vector = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["profile", "id"])]
