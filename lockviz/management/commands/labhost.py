"""``manage.py labhost``: run labs and nothing else (lockviz.runs.host).

It takes run requests from LOCKVIZ_CHANNEL_REDIS while it has a free slot, runs them, answers
the clicks web processes relay to it, and keeps a heartbeat. SIGTERM drains (no new run; the
ones here play to their verdict; then it exits); Ctrl-C stops at once, saying so in its runs.
``labhost --healthy`` (a container's healthcheck) exits 0 when a lab host on this machine
beats, 1 when none does.
"""

from __future__ import annotations

import socket
import time
from concurrent.futures import Future, ThreadPoolExecutor

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from lockviz.catalogue import REDIS
from lockviz.lab import forkserver, registry, spares
from lockviz.lab.errors import LabError
from lockviz.lab.labs import self_test
from lockviz.lab.servers import install_hint, missing
from lockviz.labhost import heartbeat
from lockviz.live import broadcast
from lockviz.runs.host import LabHost

MIGRATED_WAIT_S = 120.0


def wait_migrated() -> None:
    """Until the database has the runs' table (``serve`` migrates it as its lab host starts)."""
    deadline = time.monotonic() + MIGRATED_WAIT_S
    while "lockviz_runevent" not in connection.introspection.table_names():
        if time.monotonic() > deadline:
            raise CommandError("the database has no lockviz tables: run manage.py migrate")
        time.sleep(0.1)
    connection.close()


class Command(BaseCommand):
    help = "Run labs for the web processes: take run requests from LOCKVIZ_CHANNEL_REDIS."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--healthy", action="store_true",
            help="exit 0 if a lab host on this machine beats (a healthcheck), else 1",
        )  # fmt: skip

    def handle(self, *args: object, **options: object) -> None:
        if not settings.LOCKVIZ_CHANNEL_REDIS:
            raise CommandError(
                "a lab host needs LOCKVIZ_CHANNEL_REDIS: the Redis the web processes publish "
                "run requests on, e.g. redis://127.0.0.1:6379/0"
            )
        settings.LOCKVIZ_LAB_HOSTS = "inprocess"  # whatever the web processes' setting: runs here
        if options["healthy"]:
            here = [h for h in heartbeat.hosts() if h.host.startswith(f"{socket.gethostname()}:")]
            if not here:
                raise CommandError("no lab host on this machine beats")
            self.stdout.write(f"{len(here)} lab host(s) here, {here[0].free} free slot(s)")
            return
        checked: Future[None] | None = None
        try:
            registry.sweep()  # server sets a killed process left here
            if not settings.LOCKVIZ_SERVERS:
                if missing(REDIS):
                    raise CommandError(install_hint(missing(REDIS)))
                # All at once, and runs taken meanwhile: the first learner's session waits for
                # none of them in turn (its clients are forked by the fork server, its servers
                # are the warm set, or its own); the host beats once the self-test passed.
                spares.process_pool()  # the first set warm from the start
                starting = ThreadPoolExecutor(2, thread_name_prefix="labhost-start")
                checked = starting.submit(self_test)
                starting.submit(forkserver.server().start)
                starting.shutdown(wait=False)
        except LabError as exc:
            raise CommandError(f"the lab does not work here: {exc}") from None
        wait_migrated()  # ``serve`` starts its lab host before it migrates a fresh database
        broadcast.prompt_threads()  # a run's events are published as they happen
        try:
            LabHost(checked).serve()  # it says what it does in the log
        except KeyboardInterrupt:
            self.stdout.write("lab host stopped (Ctrl-C)")
        except LabError as exc:
            raise CommandError(f"the lab does not work here: {exc}") from None
