from django.urls import path

from apps.mcp import views

urlpatterns = [
    path("mcp", views.mcp_endpoint, name="mcp"),
]
