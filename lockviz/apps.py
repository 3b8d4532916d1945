from django.apps import AppConfig


class LockvizConfig(AppConfig):
    name = "lockviz"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth.models import User
        from django.contrib.auth.signals import user_logged_in
        from django.db.models.signals import pre_delete

        from lockviz.accounts.handover import adopt, disown

        user_logged_in.connect(adopt, dispatch_uid="lockviz.accounts.adopt")
        pre_delete.connect(disown, sender=User, dispatch_uid="lockviz.accounts.disown")
