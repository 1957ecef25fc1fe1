"""Celery application. Configuration lives in settings under the CELERY_ namespace.

The embedded default broker is kombu's SQLAlchemy transport on a SQLite file in the data
dir (no server needed); `CELERY_BROKER_URL=redis://127.0.0.1:6379/N` switches to Redis.
Queues: `quick` (trigger sweeps and the extraction jobs) and `embed` (index outbox work).
"""

from __future__ import annotations

import os

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryweb.settings")

app = Celery("memoryweb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def _mark_worker_process(**_kwargs) -> None:
    # A worker process never owns embedded Qdrant: the tool executor uses this to pick
    # the HTTP transport (see apps.pipeline.executor).
    os.environ["MEMORYWEB_PROCESS_ROLE"] = "worker"
