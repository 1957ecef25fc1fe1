"""Only the tool API routes: skill tests must not depend on the dashboard's routes loading."""

from django.urls import include, path

urlpatterns = [path("api/v1/", include("apps.tools.urls"))]
