from django.apps import AppConfig


class PipelineConfig(AppConfig):
    name = "apps.pipeline"
    label = "pipeline"
