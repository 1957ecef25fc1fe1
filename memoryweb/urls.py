"""Root URLs. Each app owns its routes in apps/<app>/urls.py."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("django-admin/", admin.site.urls),
    path("api/v1/", include("apps.tools.urls")),
    path("api/v1/", include("apps.conversations.urls")),
    path("api/v1/", include("apps.search.urls")),
    path("api/v1/", include("apps.persona.urls")),
    path("", include("apps.mcp.urls")),
    path("", include("apps.metrics.urls")),
    path("", include("apps.dashboard.urls")),
]
