from django.urls import path

from apps.search import views
from apps.tools.registry import register_endpoint

urlpatterns = [
    path("recall/context", views.recall_context, name="recall-context"),
]

register_endpoint(
    "/api/v1/recall/context", "post",
    "Per-turn injection block: live USER.md plus the top records as `- [type|scene] content` lines", views.RecallContextBody,
    "agent",
)
