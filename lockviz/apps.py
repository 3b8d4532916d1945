from django.apps import AppConfig
from django.core import checks


class LockvizConfig(AppConfig):
    name = "lockviz"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth.models import User
        from django.contrib.auth.signals import user_logged_in
        from django.db.models.signals import pre_delete

        from lockviz import squashed
        from lockviz.accounts.handover import adopt, disown

        checks.register(squashed.check, checks.Tags.database)
        user_logged_in.connect(adopt, dispatch_uid="lockviz.accounts.adopt")
        pre_delete.connect(disown, sender=User, dispatch_uid="lockviz.accounts.disown")
