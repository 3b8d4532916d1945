from django.apps import AppConfig


class LockvizConfig(AppConfig):
    name = "lockviz"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from lockviz.accounts.adopt import adopt

        user_logged_in.connect(adopt, dispatch_uid="lockviz.accounts.adopt")
