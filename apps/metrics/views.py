"""`GET /metrics`: Prometheus text format, for an admin token or the scrape token."""

from __future__ import annotations

import hmac
import os

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    generate_latest,
    multiprocess,
)

from apps.accounts.models import ROLE_ADMIN
from apps.metrics.collectors import StateCollector
from apps.metrics.instruments import REGISTRY
from apps.tools.errors import Forbidden, ToolError
from apps.tools.http import context_from_request, error_response


def _check_scraper(request: HttpRequest) -> None:
    scheme, _, plain = request.headers.get("Authorization", "").partition(" ")
    if settings.METRICS_TOKEN and scheme.lower() == "bearer" and hmac.compare_digest(
        plain.strip().encode(), settings.METRICS_TOKEN.encode()
    ):
        return
    ctx = context_from_request(request)  # unauthorized without a valid token
    if ctx.role != ROLE_ADMIN:
        raise Forbidden(f"role {ctx.role!r} may not read metrics (needs admin or the scrape token)")


@csrf_exempt
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    try:
        _check_scraper(request)
    except ToolError as exc:
        return error_response(exc)
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        events = CollectorRegistry()
        multiprocess.MultiProcessCollector(events)
    else:
        events = REGISTRY
    state = CollectorRegistry()
    state.register(StateCollector())
    return HttpResponse(generate_latest(events) + generate_latest(state), content_type=CONTENT_TYPE_LATEST)
