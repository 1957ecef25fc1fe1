from django.apps import AppConfig


class HitstatsConfig(AppConfig):
    name = "apps.hitstats"
    label = "hitstats"
