from django.urls import path

from apps.metrics import views

urlpatterns = [path("metrics", views.metrics, name="metrics")]
