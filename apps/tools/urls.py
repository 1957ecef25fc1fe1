from django.urls import path

from apps.tools import views
from apps.tools.registry import register_endpoint

urlpatterns = [
    path("tools", views.tools_catalog, name="tools-catalog"),
    path("tools/<str:name>", views.tool_call, name="tool-call"),
    path("openapi.json", views.openapi, name="openapi"),
    path("health", views.health, name="health"),
]

register_endpoint("/api/v1/tools", "get", "Tool catalog usable as OpenAI function definitions", None, "agent")
register_endpoint("/api/v1/openapi.json", "get", "This document", None, None)
register_endpoint("/api/v1/health", "get", "Service status; with an admin token also each check (database, index, broker, jobs, embedding model)", None, None)
