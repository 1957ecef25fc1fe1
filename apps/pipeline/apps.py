from django.apps import AppConfig


class PipelineConfig(AppConfig):
    name = "apps.pipeline"
    label = "pipeline"

    def ready(self) -> None:
        from apps.pipeline.health import broker_health, jobs_health
        from apps.tools.registry import register_health_check

        register_health_check("broker", broker_health)
        register_health_check("jobs", jobs_health)
