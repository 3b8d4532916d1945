"""``manage.py serve``: what ``make run`` runs — prepare, prove the lab works, then Daphne.

It applies migrations, checks the machine has the servers, starts a lock node and a storage
node once to show they come up (and how fast), then serves the app under Daphne. Ctrl-C stops
Daphne; every server and client the app started dies with it (see lockviz.lab.procs).
"""

from __future__ import annotations

import signal
import time
from typing import Any

from daphne.cli import CommandLineInterface
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from lockviz.catalogue import REDIS
from lockviz.lab import registry
from lockviz.lab.errors import LabError
from lockviz.lab.labs import LocalLab
from lockviz.lab.servers import install_hint, missing


class Command(BaseCommand):
    help = "Start lockviz: migrate, check the lab, and serve under Daphne."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)

    def handle(self, *args: Any, **options: Any) -> None:
        self.step("database", lambda: call_command("migrate", verbosity=0, interactive=False))
        try:
            swept = registry.sweep()
        except LabError as exc:
            raise CommandError(str(exc)) from None
        if swept:
            self.stdout.write(f"  cleaned up {swept} server set(s) left by an app that was killed")
        if settings.LOCKVIZ_SERVERS:
            self.stdout.write(f"  using servers from LOCKVIZ_SERVERS: {settings.LOCKVIZ_SERVERS}")
        else:
            if missing(REDIS):
                raise CommandError(install_hint(missing(REDIS)))
            self.step("lab self-test: starting redis-1 and storage", self.self_test)
        # Ctrl-C must stop the app even when it was started from a shell that ignores SIGINT
        # in background jobs (Twisted only takes SIGINT over when it has the default handler).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        url = f"http://{options['host']}:{options['port']}/"
        self.stdout.write(
            self.style.SUCCESS(f"lockviz is at {url}  (Ctrl-C stops it and every server)")
        )
        CommandLineInterface().run(
            ["-b", options["host"], "-p", str(options["port"]), "lockviz.asgi:application"]
        )

    def step(self, what: str, action: Any) -> None:
        self.stdout.write(f"  {what} …", ending="")
        self.stdout.flush()
        started = time.monotonic()
        try:
            action()
        except LabError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f" ok ({(time.monotonic() - started) * 1000:.0f} ms)")

    def self_test(self) -> None:
        with LocalLab().servers(["redis-1", "storage"]):
            pass
