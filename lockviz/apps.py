from django.apps import AppConfig
from django.core import checks


class LockvizConfig(AppConfig):
    name = "lockviz"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from lockviz import squashed

        checks.register(squashed.check, checks.Tags.database)
