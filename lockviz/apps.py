from django.apps import AppConfig
from django.core import checks


class LockvizConfig(AppConfig):
    name = "lockviz"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth.models import User
        from django.contrib.auth.signals import user_logged_in
        from django.db.models.signals import post_save, pre_delete

        from lockviz.accounts.handover import adopt, disown
        from lockviz.edge import squashed
        from lockviz.exercises import attempts, progress
        from lockviz.lms import grades
        from lockviz.models import Run

        checks.register(squashed.check, checks.Tags.database)
        user_logged_in.connect(adopt, dispatch_uid="lockviz.accounts.adopt")
        pre_delete.connect(disown, sender=User, dispatch_uid="lockviz.accounts.disown")
        user_logged_in.connect(progress.adopt, dispatch_uid="lockviz.exercises.adopt")
        # An exercise's attempt is judged as soon as its run's end is saved (on the lab host);
        # a score worth an LMS's gradebook goes to it.
        post_save.connect(attempts.on_run_saved, sender=Run, dispatch_uid="lockviz.attempts")
        progress.scored.connect(grades.on_scored, dispatch_uid="lockviz.lms.grades")
