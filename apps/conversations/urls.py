from typing import Any

from django.urls import path
from pydantic import BaseModel, ConfigDict, Field

from apps.conversations import views
from apps.tools.registry import register_endpoint


class L0Row(BaseModel):
    """One conversation row (SPEC §1.1); other fields are kept as sent."""

    model_config = ConfigDict(extra="allow")
    role: str
    content: str
    sessionKey: str
    id: str | None = None
    timestamp: int | None = Field(None, description="event time, epoch milliseconds")
    sessionId: str | None = None
    cwd: str = ""


class L0MessagesBody(BaseModel):
    messages: list[L0Row] = Field(description="at most 1000 rows; a bare list of rows is accepted too")


class FeedEvent(BaseModel):
    """One sanitized skill-feed row (SPEC §1.8); other fields are kept as sent."""

    model_config = ConfigDict(extra="allow")
    role: str = Field(description="system, user, assistant, tool_call or tool_result")
    content: str
    sessionKey: str
    tool_name: str | None = None
    tool_call_id: str | None = None
    is_error: bool | None = None


class FeedEventsBody(BaseModel):
    events: list[FeedEvent] = Field(description="at most 1000 rows; a bare list of rows is accepted too")


urlpatterns: list[Any] = [
    path("l0/messages", views.l0_messages, name="l0-messages"),
    path("skill-feed/events", views.skill_feed_events, name="skill-feed-events"),
]

register_endpoint(
    "/api/v1/l0/messages", "post",
    "Append conversation rows to today's L0 shard; returns each row's shard, offset, sourceLine and messageRef. "
    "A 200 answer means the rows are stored, even with warnings (auditFailed): never resend them. "
    "unavailable (503): the shard could not be written and nothing was stored.",
    L0MessagesBody, "agent",
)
register_endpoint(
    "/api/v1/skill-feed/events", "post", "Append sanitized tool-using conversation rows to today's skill-feed shard",
    FeedEventsBody, "agent",
)
