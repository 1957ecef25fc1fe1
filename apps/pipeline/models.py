"""Job runs (SPEC §5): every run of an extraction job is one row, from queued to done.

The partial unique constraint is the database-level guard of "at most one run per
(profile, job) at a time": a second queued/running row for the same pair cannot exist,
whichever process tries to create it.
"""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import Q

from apps.accounts.models import Profile

KIND_L1 = "l1_extract"
KIND_L2 = "l2_organize"
KIND_L3 = "l3_persona"
KIND_SKILL = "skill_review"
KINDS = (KIND_L1, KIND_L2, KIND_L3, KIND_SKILL)

DRIVER_LLM = "llm"
DRIVER_RULES = "rules"

STATUS_QUEUED = "queued"
STATUS_RUNNING = "running"
STATUS_SUCCEEDED = "succeeded"
STATUS_FAILED = "failed"
ACTIVE_STATUSES = (STATUS_QUEUED, STATUS_RUNNING)
STATUSES = (STATUS_QUEUED, STATUS_RUNNING, STATUS_SUCCEEDED, STATUS_FAILED)


class JobRun(models.Model):
    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="job_runs")
    kind = models.CharField(max_length=16, choices=[(k, k) for k in KINDS])
    driver = models.CharField(max_length=8, choices=[(DRIVER_LLM, DRIVER_LLM), (DRIVER_RULES, DRIVER_RULES)])
    status = models.CharField(max_length=12, choices=[(s, s) for s in STATUSES], default=STATUS_QUEUED)
    trigger_reason = models.CharField(max_length=300)
    requested_by = models.CharField(max_length=200, default="scheduler")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # {messagesRead, recordsStored, recordsUpdated, recordsSkipped, scenesWritten, …}
    counts = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    # LLM driver: every model turn and tool call with timings and token usage.
    transcript = models.JSONField(default=list, blank=True)
    # {step, message, done, total, updatedAt}: what the dashboard polls while it runs.
    progress = models.JSONField(default=dict, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True)  # "host:pid" of the process running it
    task_id = models.CharField(max_length=64, blank=True)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    enqueue_attempts = models.IntegerField(default=0)
    enqueue_error = models.TextField(blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["profile", "kind"],
                condition=Q(status__in=ACTIVE_STATUSES),
                name="one_active_run_per_profile_kind",
            )
        ]
        indexes = [models.Index(fields=["profile", "kind", "status"]), models.Index(fields=["status", "created_at"])]

    def __str__(self) -> str:
        return f"{self.kind}#{self.pk} {self.profile_id} {self.status}"

    @property
    def duration_seconds(self) -> float | None:
        if self.started_at and self.finished_at:
            return (self.finished_at - self.started_at).total_seconds()
        return None

    def as_dict(self, *, transcript: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.pk,
            "profile": self.profile.slug,
            "kind": self.kind,
            "driver": self.driver,
            "status": self.status,
            "triggerReason": self.trigger_reason,
            "requestedBy": self.requested_by,
            "createdAt": _iso(self.created_at),
            "startedAt": _iso(self.started_at),
            "finishedAt": _iso(self.finished_at),
            "durationSeconds": self.duration_seconds,
            "counts": dict(self.counts or {}),
            "error": self.error,
            "progress": dict(self.progress or {}),
            "worker": self.worker,
            "enqueueError": self.enqueue_error,
        }
        if transcript:
            data["transcript"] = list(self.transcript or [])
        return data


class JobSignal(models.Model):
    """A request for a job that the data alone cannot show (an L2 run's personaSignal).

    Consumed by the run it starts; kept afterwards so the dashboard can show why a run ran.
    """

    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="job_signals")
    kind = models.CharField(max_length=16, choices=[(k, k) for k in KINDS])
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    consumed_by = models.ForeignKey(JobRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="signals")

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["profile", "kind", "consumed_by"])]


def _iso(value) -> str | None:
    if value is None:
        return None
    return value.isoformat().replace("+00:00", "Z")
