"""Health checks for `GET /api/v1/health`: the Celery broker and the job queue."""

from __future__ import annotations

from typing import Any

from django.conf import settings

STALE_QUEUED_SECONDS = 300


def broker_health() -> dict[str, Any]:
    from memoryweb.celery import app

    transport = settings.CELERY_BROKER_URL.split("://", 1)[0]
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:  # noqa: BLE001 — any failure means "down", reported, never raised
        return {"ok": False, "transport": transport, "error": f"{type(exc).__name__}: {exc}"[:300]}
    return {"ok": True, "transport": transport}


def jobs_health() -> dict[str, Any]:
    """Queued runs nobody starts mean no worker consumes the queue."""
    from apps.pipeline.selectors import jobrun_queue_stats

    data = jobrun_queue_stats()
    age = data["oldestQueuedSeconds"]
    data["ok"] = age < STALE_QUEUED_SECONDS
    if not data["ok"]:
        data["error"] = f"a run has waited {age:.0f} s in the queue: is a worker running?"
    return data
