"""Cursors of the pipeline (L1 over L0, L2 over L1, L3 over L2, skill review over the feed).

L0 shards and the skill feed themselves are JSONL files under the data dir, not rows.
"""

from __future__ import annotations

from django.db import models

from apps.accounts.models import Profile

CURSOR_L1 = "l1"  # {version: 2, files: {shard: byteOffset}} — committed by l1_commit
CURSOR_L2 = "l2"  # {lastRecordId: <L1Change id>} — committed by l2_commit
CURSOR_L3 = "l3"  # {updated: ISO} — committed by l3_commit
CURSOR_SKILL_FEED = "skill_feed"  # {recordedAt: ISO}


class Cursor(models.Model):
    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="cursors")
    kind = models.CharField(max_length=16)
    value = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["profile", "kind"], name="uniq_cursor_per_profile_kind")]
