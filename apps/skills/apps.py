from django.apps import AppConfig


class SkillsConfig(AppConfig):
    name = "apps.skills"
    label = "skills"
