from django.urls import path

from apps.persona import views
from apps.tools.registry import register_endpoint

urlpatterns = [
    path("persona/USER.md", views.user_md, name="persona-user-md"),
]

register_endpoint("/api/v1/persona/USER.md", "get", "The live persona USER.md as text/markdown (entries separated by § lines)", None, "agent")
