from django.apps import AppConfig


class ScenesConfig(AppConfig):
    name = "apps.scenes"
    label = "scenes"
