from django.apps import AppConfig
from django.utils.module_loading import autodiscover_modules


class ToolsConfig(AppConfig):
    name = "apps.tools"
    label = "tools"

    def ready(self) -> None:
        # Every app declares its tools in apps/<app>/tools.py.
        autodiscover_modules("tools")
