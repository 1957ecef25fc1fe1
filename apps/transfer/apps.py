from django.apps import AppConfig


class TransferConfig(AppConfig):
    name = "apps.transfer"
    verbose_name = "export, import and backup"
