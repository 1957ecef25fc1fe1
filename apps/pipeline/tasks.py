"""Celery tasks: thin shells that take ids, re-fetch and call one pipeline service."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

logger = logging.getLogger(__name__)


@shared_task(name="apps.pipeline.tasks.run_job", acks_late=True)
def run_job(run_id: int) -> dict:
    from apps.pipeline.jobs import execute_run

    run = execute_run(run_id=run_id)
    return {"run": run_id, "status": run.status if run else "skipped"}


@shared_task(name="apps.pipeline.tasks.check_trigger")
def check_trigger(profile_id: int, kind: str) -> int | None:
    from apps.accounts.models import Profile
    from apps.pipeline.scheduling import consider

    profile = Profile.objects.filter(pk=profile_id).first()
    if profile is None:
        return None
    run = consider(profile=profile, kind=kind)
    return run.pk if run else None


@shared_task(name="apps.pipeline.tasks.sweep")
def sweep() -> dict:
    from apps.pipeline.scheduling import sweep as do_sweep

    return do_sweep()


@shared_task(name="apps.pipeline.tasks.drain_index_outbox")
def drain_index_outbox() -> dict:
    """Drain pending index operations when every process may open the index.

    With embedded Qdrant only the web process may open it (it drains after each commit
    itself), so a worker must not touch it.
    """
    if not settings.QDRANT_URL:
        return {"skipped": "embedded Qdrant belongs to the web process"}
    from apps.search.outbox import drain_outbox

    return {"drained": drain_outbox()}
