from django.urls import path
from pydantic import BaseModel, ConfigDict, Field

from apps.search import views
from apps.tools.registry import register_endpoint


class RecallContextBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(description="The user's message of this turn.")
    sessionKey: str = Field("", max_length=512, description="Conversation key (default: X-Memory-Session).")
    cwd: str = Field("", max_length=4096, description="The agent's working directory (default: X-Memory-Cwd).")


urlpatterns = [
    path("recall/context", views.recall_context, name="recall-context"),
]

register_endpoint(
    "/api/v1/recall/context", "post",
    "Per-turn injection block: live USER.md plus the top records as `- [type|scene] content` lines", RecallContextBody, "agent",
)
