from django.apps import AppConfig


class McpConfig(AppConfig):
    name = "apps.mcp"
    label = "mcp"
    default_auto_field = "django.db.models.BigAutoField"
