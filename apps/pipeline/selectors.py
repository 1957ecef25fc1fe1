"""Reads of the pipeline's job runs for other apps (health, metrics)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone

from apps.pipeline.models import STATUS_FAILED, STATUS_QUEUED, STATUS_RUNNING, JobRun


def jobrun_queue_stats() -> dict[str, Any]:
    """Queued and running runs, the oldest queued run's age, failures of the last hour."""
    now = timezone.now()
    oldest = JobRun.objects.filter(status=STATUS_QUEUED).order_by("created_at").values_list("created_at", flat=True).first()
    return {
        "queued": JobRun.objects.filter(status=STATUS_QUEUED).count(),
        "running": JobRun.objects.filter(status=STATUS_RUNNING).count(),
        "failedLastHour": JobRun.objects.filter(status=STATUS_FAILED, finished_at__gte=now - timedelta(hours=1)).count(),
        "oldestQueuedSeconds": round((now - oldest).total_seconds(), 1) if oldest else 0.0,
    }
