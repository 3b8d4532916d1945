"""``manage.py serve``: what ``make run`` runs — prepare, prove the lab works, then Daphne.

It applies migrations, collects the static files if they changed (lockviz.staticfiles), checks
the machine has the servers, starts a lock node and a storage node once to show they come up (and
how fast), starts the channel layer's redis-server (or checks the shared one in
LOCKVIZ_CHANNEL_REDIS answers), lets the process hold a socket per viewer, then serves the app
under Daphne. Ctrl-C stops Daphne; every server and client the app
started dies with it (see lockviz.lab.procs).
"""

from __future__ import annotations

import fcntl
import resource
import signal
import time
from collections.abc import Callable

from daphne.cli import CommandLineInterface
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from lockviz import channel_layer, staticfiles
from lockviz.bodylimit import guard_daphne
from lockviz.catalogue import REDIS
from lockviz.lab import forkserver, registry
from lockviz.lab.errors import LabError
from lockviz.lab.labs import LocalLab
from lockviz.lab.servers import install_hint, missing
from lockviz.runs import recorder, recovery


class Command(BaseCommand):
    help = "Start lockviz: migrate, check the lab, and serve under Daphne."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)

    def handle(self, *args: object, **options: object) -> None:
        self.step("database", migrate_once)
        self.step("static files", staticfiles.collect)
        interrupted = recovery.recover()
        if interrupted:
            self.stdout.write(
                f"  {interrupted} run(s) left live by an app that stopped: interrupted"
            )
        call_command("prune", verbosity=0)
        recorder.keep_forever()  # heartbeat, a dead sibling's runs, clicks relayed to us
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
            self.step("the fork server for client processes", forkserver.server().start)
        if settings.LOCKVIZ_CHANNEL_REDIS:
            self.step(
                f"live streams: {without_password(settings.LOCKVIZ_CHANNEL_REDIS)}",
                self.check_layer,
            )
        else:
            self.step("live streams: starting their redis-server", channel_layer.embedded_url)
        viewers = raise_open_files_limit() - 50
        self.stdout.write(f"  room for {viewers} live viewers (open files limit)")
        # Ctrl-C must stop the app even when it was started from a shell that ignores SIGINT
        # in background jobs (Twisted only takes SIGINT over when it has the default handler).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        guard_daphne(settings.LOCKVIZ_MAX_BODY)  # refuse an oversized body before reading it
        url = f"http://{options['host']}:{options['port']}/"
        self.stdout.write(
            self.style.SUCCESS(f"lockviz is at {url}  (Ctrl-C stops it and every server)")
        )
        CommandLineInterface().run(
            ["-b", str(options["host"]), "-p", str(options["port"]), "lockviz.asgi:application"]
        )

    def step(self, what: str, action: Callable[[], object]) -> None:
        self.stdout.write(f"  {what} …", ending="")
        self.stdout.flush()
        started = time.monotonic()
        try:
            action()
        except LabError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f" ok ({(time.monotonic() - started) * 1000:.0f} ms)")

    def check_layer(self) -> None:
        import redis

        try:
            redis.Redis.from_url(settings.LOCKVIZ_CHANNEL_REDIS, socket_timeout=2).ping()
        except redis.RedisError as exc:
            shown = without_password(settings.LOCKVIZ_CHANNEL_REDIS)
            raise CommandError(f"LOCKVIZ_CHANNEL_REDIS={shown} does not answer: {exc}") from None

    def self_test(self) -> None:
        with LocalLab().servers(["redis-1", "storage"]):
            pass


MIGRATE_LOCK = 0x6C6F636B76697A  # "lockviz": the advisory lock replicas migrate under


def migrate_once() -> None:
    """Migrate the database, one process at a time: replicas that start together on an empty
    database would otherwise both add the same column, and one would crash. PostgreSQL: an
    advisory lock (the rest wait, then find nothing to do); SQLite: a lock on a file beside it."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", [MIGRATE_LOCK])
            try:
                call_command("migrate", verbosity=0, interactive=False)
            finally:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [MIGRATE_LOCK])
        return
    name = str(connection.settings_dict["NAME"])
    with open(f"{name}.migrate-lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        call_command("migrate", verbosity=0, interactive=False)


def raise_open_files_limit() -> int:
    """Every viewer holds a socket: take the most open files the system lets this process have."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        soft = 1_048_576 if hard == resource.RLIM_INFINITY else hard
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return soft


def without_password(url: str) -> str:
    """``redis://:secret@host:port/0`` as a log may show it: ``redis://host:port/0``."""
    scheme, sep, rest = url.partition("://")
    return f"{scheme}{sep}{rest.rpartition('@')[2]}" if sep else url
