"""The service's Prometheus instruments, and the one call per event that feeds them.

Other apps call `observe_*` where the event happens (a request ends, a recall answers,
texts are embedded, a job run finishes); nothing here reads their models. Values that
are state rather than events (outbox depth, queue age) are read at scrape time through
the owning apps' selectors (`apps.metrics.collectors`).

Under `manage.py serve` several processes record (web workers, Celery pool processes):
serve sets PROMETHEUS_MULTIPROC_DIR for all of them, prometheus-client then keeps each
process's values in a file there, and `/metrics` adds them up. Without it (runserver,
tests) the values live in this process.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)

# Buckets from a fast tool call (a few ms) to a slow commit that embeds (seconds).
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
_JOB_BUCKETS = (0.5, 1, 2.5, 5, 10, 30, 60, 120, 180, 300, 600)

REQUESTS = Counter(
    "memoryweb_http_requests", "HTTP requests by endpoint (the tool name for tool calls) and status",
    ["endpoint", "status"], registry=REGISTRY,
)
REQUEST_SECONDS = Histogram(
    "memoryweb_http_request_duration_seconds", "HTTP request latency by endpoint and status",
    ["endpoint", "status"], buckets=_LATENCY_BUCKETS, registry=REGISTRY,
)
RECALLS = Counter(
    "memoryweb_recalls", "recall_l1_records answers by outcome (answered, empty, abstained)",
    ["outcome"], registry=REGISTRY,
)
RECALL_SECONDS = Histogram(
    "memoryweb_recall_duration_seconds", "recall_l1_records latency inside the service",
    buckets=_LATENCY_BUCKETS, registry=REGISTRY,
)
EMBED_SECONDS = Histogram(
    "memoryweb_embedding_duration_seconds", "Time spent in the embedding model per call, by kind (query, passage)",
    ["kind"], buckets=_LATENCY_BUCKETS, registry=REGISTRY,
)
EMBED_TEXTS = Counter(
    "memoryweb_embedded_texts", "Texts run through the embedding model (cache misses), by kind",
    ["kind"], registry=REGISTRY,
)
JOB_RUNS = Counter(
    "memoryweb_job_runs", "Finished job runs by kind and status", ["kind", "status"], registry=REGISTRY,
)
JOB_SECONDS = Histogram(
    "memoryweb_job_duration_seconds", "Job run duration by kind and status",
    ["kind", "status"], buckets=_JOB_BUCKETS, registry=REGISTRY,
)


def observe_request(*, endpoint: str, status: int, seconds: float) -> None:
    REQUESTS.labels(endpoint, str(status)).inc()
    REQUEST_SECONDS.labels(endpoint, str(status)).observe(seconds)


def observe_recall(*, seconds: float, records: int, abstained: bool) -> None:
    RECALLS.labels("abstained" if abstained else ("answered" if records else "empty")).inc()
    RECALL_SECONDS.observe(seconds)


def observe_embedding(*, kind: str, texts: int, seconds: float) -> None:
    EMBED_SECONDS.labels(kind).observe(seconds)
    EMBED_TEXTS.labels(kind).inc(texts)


def observe_job(*, kind: str, status: str, seconds: float) -> None:
    JOB_RUNS.labels(kind, status).inc()
    JOB_SECONDS.labels(kind, status).observe(seconds)
