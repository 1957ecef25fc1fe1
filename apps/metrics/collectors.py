"""State read at scrape time, through the owning apps' selectors."""

from __future__ import annotations

import logging
from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric

logger = logging.getLogger(__name__)


class StateCollector:
    """Index outbox depth and failures, job queue depth and age."""

    def collect(self) -> Iterator[Metric]:
        from apps.pipeline.selectors import jobrun_queue_stats
        from apps.search.selectors import index_outbox_stats

        try:
            outbox = index_outbox_stats()
            queue = jobrun_queue_stats()
        except Exception:  # a scrape must answer even when the database does not
            logger.exception("metrics: reading the service state failed")
            yield GaugeMetricFamily("memoryweb_state_up", "1 when the database state could be read", value=0)
            return
        yield GaugeMetricFamily("memoryweb_state_up", "1 when the database state could be read", value=1)
        yield GaugeMetricFamily("memoryweb_index_outbox_pending", "Index operations waiting in the outbox", value=outbox["pending"])
        yield GaugeMetricFamily(
            "memoryweb_index_outbox_failing", "Outbox operations that failed at least once and wait for a retry", value=outbox["failing"]
        )
        yield GaugeMetricFamily(
            "memoryweb_index_outbox_oldest_seconds", "Age of the oldest pending index operation", value=outbox["oldestSeconds"]
        )
        yield GaugeMetricFamily("memoryweb_jobs_queued", "Job runs waiting for a worker", value=queue["queued"])
        yield GaugeMetricFamily("memoryweb_jobs_running", "Job runs being executed", value=queue["running"])
        yield GaugeMetricFamily(
            "memoryweb_jobs_oldest_queued_seconds", "How long the oldest queued run has waited (queue age)",
            value=queue["oldestQueuedSeconds"],
        )
        yield GaugeMetricFamily("memoryweb_jobs_failed_last_hour", "Job runs that failed in the last hour", value=queue["failedLastHour"])
