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


class L0Message(models.Model):
    """Where one L0 row lives in its shard, so a message reference is found without a scan.

    The shard file stays the source of truth; content is read by seeking to `offset`.
    `ref_key` and `session_hash` are sha1 hex digests, so long ids and session keys index well.
    """

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="l0_messages")
    ref = models.TextField()
    ref_key = models.CharField(max_length=40)
    session_key = models.TextField()
    session_hash = models.CharField(max_length=40)
    shard = models.CharField(max_length=255)
    offset = models.BigIntegerField()
    length = models.IntegerField()
    line = models.IntegerField()
    role = models.CharField(max_length=64, blank=True, default="")
    timestamp = models.BigIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["profile", "shard", "offset"], name="uniq_l0_message_position"),
        ]
        indexes = [
            models.Index(fields=["profile", "ref_key"], name="l0msg_ref_idx"),
            models.Index(fields=["profile", "session_hash", "shard", "offset"], name="l0msg_session_idx"),
        ]


class L0ShardState(models.Model):
    """How far a shard is indexed into L0Message: every complete line before `indexed_bytes`
    (`indexed_lines` of them) is in the index."""

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="l0_shard_states")
    shard = models.CharField(max_length=255)
    indexed_bytes = models.BigIntegerField(default=0)
    indexed_lines = models.IntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["profile", "shard"], name="uniq_l0_shard_state")]
