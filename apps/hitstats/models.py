"""Hit statistics per L1 record and the recall log (SPEC §1.6)."""

from __future__ import annotations

import hashlib

from django.db import models

from apps.accounts.models import Profile


class RecordHits(models.Model):
    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="record_hits")
    record_id = models.CharField(max_length=64)
    hits = models.IntegerField(default=0)
    invalid_hits = models.IntegerField(default=0)
    last_hit_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["profile", "record_id"], name="uniq_hits_per_record")]
        indexes = [
            models.Index(fields=["profile", "hits"]),
            # Covers the hits page: totals, ranking by hits - invalid_hits, recalled ids.
            models.Index(fields=["profile", "hits", "invalid_hits", "record_id"]),
        ]

    @property
    def effective_hits(self) -> int:
        return self.hits - self.invalid_hits


class RecallEvent(models.Model):
    """One recall: the query, who asked, and the returned ids with scores."""

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="recall_events")
    query = models.TextField()
    # Text, not varchar: the API accepts session keys of 512 characters (as L0 does) and
    # a varchar(300) refused them on PostgreSQL with a 500.
    session_key = models.TextField(blank=True)
    turn = models.TextField(blank=True)
    source = models.CharField(max_length=32, default="recall_l1_records")  # or recall_context, dashboard
    actor = models.CharField(max_length=200, blank=True, default="")  # who asked: token:<name>:<role>, user:…
    results = models.JSONField(default=list)  # [{recordId, score}]
    degraded = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["profile", "created_at"])]


class RecallHit(models.Model):
    """One returned record of one recall (for per-record recall logs without JSON scans)."""

    event = models.ForeignKey(RecallEvent, on_delete=models.CASCADE, related_name="hits")
    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="+")
    record_id = models.CharField(max_length=64)
    score = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["profile", "record_id", "created_at"])]


class RecallBudget(models.Model):
    """Recall calls used in one session turn (SPEC §3.14: at most `recall.callsPerTurn`).

    Kept in the database so every web process counts against the same budget. Unique on
    a digest of (session, turn): the two texts together can exceed what a PostgreSQL
    index entry holds (about 2.7 kB), the digest never does."""

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="+")
    session_key = models.TextField()
    turn = models.TextField()
    turn_key = models.CharField(max_length=64)
    calls = models.IntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True, db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["profile", "turn_key"], name="uniq_recall_budget_turn_key")]

    @staticmethod
    def key_of(session_key: str, turn: str) -> str:
        return hashlib.sha256(f"{session_key}\x00{turn}".encode()).hexdigest()
