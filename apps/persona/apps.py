from django.apps import AppConfig


class PersonaConfig(AppConfig):
    name = "apps.persona"
    label = "persona"
