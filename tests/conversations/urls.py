"""Only the API routes these tests exercise, so a broken route elsewhere cannot mask them."""

from django.urls import include, path

urlpatterns = [
    path("api/v1/", include("apps.tools.urls")),
    path("api/v1/", include("apps.conversations.urls")),
]
