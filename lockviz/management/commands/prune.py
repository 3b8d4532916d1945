"""``manage.py prune [--days N]``: remove runs and imported runs older than the retention period.

The app does this at every start-up too (``serve``), with ``LOCKVIZ_RETENTION_DAYS`` (30 by
default). Runs still live are never removed, nor runs a teacher saved in their library
(lockviz.library), nor runs a lecture plan replays; an anonymous browser's plans untouched for
as long are removed first (lockviz.teaching.plans.prune). Expired sessions go with them, and
rooms whose presenter has been away longer than ``LOCKVIZ_ROOM_IDLE_HOURS`` with their polls
(lockviz.teaching.control).
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.sessions.models import Session
from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from lockviz.runs import recovery
from lockviz.teaching import control, plans


class Command(BaseCommand):
    help = (
        "Remove runs and imported runs older than LOCKVIZ_RETENTION_DAYS (or --days), "
        "except runs saved in a teacher's library."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, default=settings.LOCKVIZ_RETENTION_DAYS)

    def handle(self, *args: object, **options: object) -> None:
        days = options["days"]
        assert isinstance(days, int)  # argparse made it one
        plans_removed = plans.prune(max(0, days))  # first: their runs are then kept no more
        removed = recovery.prune(max(0, days))
        Session.objects.filter(expire_date__lt=timezone.now()).delete()
        rooms = control.prune()
        if options["verbosity"] != 0:
            runs = f"{removed} run{'s' * (removed != 1)}"
            self.stdout.write(f"Removed {runs} older than {options['days']} days.")
            self.stdout.write(f"Removed {plans_removed} anonymous lecture plans untouched as long.")
            idle = f"{settings.LOCKVIZ_ROOM_IDLE_HOURS:g} h"
            self.stdout.write(f"Removed {rooms} room{'s' * (rooms != 1)} idle for over {idle}.")
