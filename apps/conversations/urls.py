from typing import Any

from django.urls import path

from apps.conversations import views
from apps.conversations.ingest import FeedIngestBody, L0IngestBody
from apps.tools.registry import register_endpoint

urlpatterns: list[Any] = [
    path("l0/messages", views.l0_messages, name="l0-messages"),
    path("skill-feed/events", views.skill_feed_events, name="skill-feed-events"),
]

register_endpoint(
    "/api/v1/l0/messages", "post",
    "Append conversation rows to today's L0 shard; returns each row's shard, offset, sourceLine and messageRef. "
    "Idempotent per (sessionKey, id): a row whose id is already stored for its session is not appended again and "
    "is listed under `duplicates`, so a batch may be resent after a time-out. "
    "A 200 answer means the rows are stored, even with warnings (auditFailed): never resend them. "
    "unavailable (503): the shard could not be written and nothing was stored.",
    L0IngestBody, "agent",
)
register_endpoint(
    "/api/v1/skill-feed/events", "post", "Append sanitized tool-using conversation rows to today's skill-feed shard",
    FeedIngestBody, "agent",
)
