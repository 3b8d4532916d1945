"""``manage.py serve``: what ``make run`` runs — prepare, prove the lab works, then Daphne.

It applies migrations, collects the static files if they changed (lockviz.edge.staticfiles), checks
the machine has the servers, lets the process hold a socket per viewer and serves the app under
Daphne. Meanwhile, in a thread of its own (:class:`LabCheck`), it starts a lock node and a
storage node once to show they come up (and how fast), the fork server, and the channel layer's
redis-server (or checks the shared one in LOCKVIZ_CHANNEL_REDIS answers): the page answers in
about a second instead of waiting for them, and a lab that does not work is still reported at
start — the check says what failed and stops the app, which exits with an error. A run or a live
stream asked for meanwhile waits for what it needs (each starts once, under a lock). Ctrl-C stops
Daphne; every server and client the app started dies with it (see lockviz.lab.procs).

Where runs' labs run (``LOCKVIZ_LAB_HOSTS``, lockviz.labhost): by default ``serve`` starts one
lab host of its own as a child process (lockviz.labhost.embedded) on the Redis it uses, and runs
no lab itself; ``remote``: no lab here at all, runs go to ``manage.py labhost`` processes
elsewhere; ``inprocess``: labs in this process, as before lab hosts.
"""

from __future__ import annotations

import fcntl
import os
import resource
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

from daphne.cli import CommandLineInterface
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection

from lockviz.catalogue import REDIS
from lockviz.edge import squashed, staticfiles
from lockviz.edge.bodylimit import guard_daphne
from lockviz.lab import forkserver, registry, spares
from lockviz.lab.errors import LabError
from lockviz.lab.labs import self_test
from lockviz.lab.servers import install_hint, missing
from lockviz.labhost import embedded
from lockviz.live import channel_layer
from lockviz.live.unsent import measure_daphne
from lockviz.models import Run
from lockviz.runs import recorder, recovery


class Command(BaseCommand):
    help = "Start lockviz: migrate, check the lab, and serve under Daphne."
    fresh_layer = False  # the channel layer's Redis is this start's own: it holds no request

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)

    def handle(self, *args: object, **options: object) -> None:
        # Its lab host first: its start (imports, the lab's self-test, the fork server, a warm
        # set) goes on while this process migrates, and the first learner waits for less.
        labhost = self.start_lab_host()
        self.step("database", migrate_once)
        self.step("static files", staticfiles.collect)
        self.forget_requests()
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
        elif missing(REDIS) and settings.LOCKVIZ_LAB_HOSTS == "inprocess":
            raise CommandError(install_hint(missing(REDIS)))
        viewers = raise_open_files_limit() - 50
        self.stdout.write(f"  room for {viewers} live viewers (open files limit)")
        # Ctrl-C must stop the app even when it was started from a shell that ignores SIGINT
        # in background jobs (Twisted only takes SIGINT over when it has the default handler).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        guard_daphne(settings.LOCKVIZ_MAX_BODY)  # refuse an oversized body before reading it
        measure_daphne()  # a viewer far behind on its frames is dropped (lockviz.live.unsent)
        lab = LabCheck(self.stdout.write, self.stderr.write, labhost)
        try:
            if settings.LOCKVIZ_LAB_HOSTS == "inprocess" and not settings.LOCKVIZ_SERVERS:
                spares.process_pool()  # runs play here: their warm spares from the start
            url = f"http://{options['host']}:{options['port']}/"
            self.stdout.write(
                self.style.SUCCESS(f"lockviz is at {url}  (Ctrl-C stops it and every server)")
            )
            CommandLineInterface().run(
                ["-e", endpoint(str(options["host"]), int(str(options["port"]))), ASGI_APP]
            )
        except KeyboardInterrupt:  # the check stopped us before Daphne took over Ctrl-C
            lab.stopping.set()
            if lab.failed is None:
                raise
        if lab.failed is not None:
            raise CommandError(f"the lab does not work here, so lockviz stopped: {lab.failed}")

    def start_lab_host(self) -> subprocess.Popen[bytes] | None:
        """By default (``LOCKVIZ_LAB_HOSTS=embedded``) one lab host of its own, a child on the
        Redis this process uses; from then on this process only serves."""
        if settings.LOCKVIZ_LAB_HOSTS != "embedded":
            return None
        if missing(REDIS):
            raise CommandError(install_hint(missing(REDIS)))
        if not settings.LOCKVIZ_CHANNEL_REDIS:
            try:
                self.step("live streams: their redis-server", channel_layer.embedded_url)
            except CommandError as exc:
                raise CommandError(
                    f"the lab does not work here, so lockviz stopped: live streams: {exc}"
                ) from None
            settings.LOCKVIZ_CHANNEL_REDIS = channel_layer.embedded_url()
            self.fresh_layer = True
        settings.LOCKVIZ_LAB_HOSTS = "remote"
        return embedded.start(settings.LOCKVIZ_CHANNEL_REDIS)

    def forget_requests(self) -> None:
        """A new Redis for the layer holds no run request: runs an earlier start left waiting
        for a lab host will not be run."""
        if self.fresh_layer:
            for run in Run.objects.filter(status=Run.Status.QUEUED, host=""):
                recovery.interrupt(run, "the app was restarted before a lab host took it")

    def step(self, what: str, action: Callable[[], object]) -> None:
        self.stdout.write(f"  {what} …", ending="")
        self.stdout.flush()
        started = time.monotonic()
        try:
            action()
        except LabError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f" ok ({(time.monotonic() - started) * 1000:.0f} ms)")


class LabCheck(threading.Thread):
    """What proves the lab works, beside Daphne starting: each step's line once it is done;
    the first failure is kept in :attr:`failed`, said, and stops the app (SIGINT, as Ctrl-C)."""

    def __init__(
        self, say: Callable[[str], Any], complain: Callable[[str], Any],
        labhost: subprocess.Popen[bytes] | None = None,
    ) -> None:  # fmt: skip
        super().__init__(name="lab-check", daemon=True)
        self.say, self.complain, self.labhost = say, complain, labhost
        self.failed: str | None = None
        self.stopping = threading.Event()  # set by the app once it is on its way out
        self.start()

    def run(self) -> None:
        steps: list[tuple[str, Callable[[], object]]] = []
        labhost = self.labhost
        if labhost is not None:
            steps.append(
                (
                    f"its lab host (pid {labhost.pid}: self-test)",
                    lambda: embedded.wait_ready(labhost),
                )
            )
        elif settings.LOCKVIZ_LAB_HOSTS == "remote":
            pass  # the lab hosts prove their own labs (manage.py labhost)
        elif not settings.LOCKVIZ_SERVERS:
            steps.append(("lab self-test (redis-1 and storage)", self_test))
            steps.append(("the fork server for client processes", forkserver.server().start))
        if settings.LOCKVIZ_CHANNEL_REDIS:
            shown = without_password(settings.LOCKVIZ_CHANNEL_REDIS)
            steps.append((f"live streams: {shown} answers", check_layer))
        else:
            steps.append(("live streams: their redis-server", channel_layer.embedded_url))
        if labhost is not None:  # the layer first: the lab host's self-test takes seconds
            steps.insert(0, steps.pop())
        for what, action in steps:
            started = time.monotonic()
            try:
                action()
            except (LabError, CommandError) as exc:
                self.failed = f"{what}: {exc}"
                self.complain(f"  {what} … FAILED: {exc}")
                stop_app(self.stopping)
                return
            self.say(f"  {what} … ok ({(time.monotonic() - started) * 1000:.0f} ms)")


RESEND_S = 2.0  # how long a Ctrl-C sent by the lab check has to take before it is sent again


def stop_app(stopping: threading.Event, every_s: float = RESEND_S) -> None:
    """SIGINT to this process, as Ctrl-C. Before Daphne's reactor takes Ctrl-C over, Python
    raises it as KeyboardInterrupt, and one that lands while the main thread runs a finalizer is
    printed as "ignored" and lost (seen once under load: the app went on serving with a broken
    lab until it was killed): so until the app says it is ``stopping``, it is sent again."""
    while True:
        raised = signal.getsignal(signal.SIGINT) is signal.default_int_handler
        os.kill(os.getpid(), signal.SIGINT)
        if not raised or stopping.wait(every_s):
            return


def check_layer() -> None:
    import redis

    try:
        redis.Redis.from_url(settings.LOCKVIZ_CHANNEL_REDIS, socket_timeout=2).ping()
    except redis.RedisError as exc:
        shown = without_password(settings.LOCKVIZ_CHANNEL_REDIS)
        raise CommandError(f"LOCKVIZ_CHANNEL_REDIS={shown} does not answer: {exc}") from None


MIGRATE_LOCK = 0x6C6F636B76697A  # "lockviz": the advisory lock replicas migrate under


def migrate_once() -> None:
    """Migrate the database, one process at a time: replicas that start together on an empty
    database would otherwise both add the same column, and one would crash. PostgreSQL: an
    advisory lock (the rest wait, then find nothing to do); SQLite: a lock on a file beside it.
    A database the migrations cannot carry on from (lockviz.edge.squashed) stops the app with the
    check's sentence, before anything is changed. The check runs under the same lock: a
    replica that looked while another was recording the squashed migration's parts would find
    the database half-migrated (seen in a full test run)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", [MIGRATE_LOCK])
            try:
                checked_migrate()
            finally:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [MIGRATE_LOCK])
        return
    name = str(connection.settings_dict["NAME"])
    with open(f"{name}.migrate-lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        checked_migrate()


def checked_migrate() -> None:
    """``migrate``, once the database is known not to be half-way through the squashed ones."""
    refused = squashed.check(databases=[connection.alias])
    if refused:
        raise CommandError(refused[0].msg)
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


ASGI_APP = "lockviz.asgi:application"
# A class told "open the link now" connects hundreds at once: Twisted's default queue of 50
# connections not yet accepted overflows while the loop is busy, and the kernel resets the rest
# (605 of a wave of 1,000 on a loaded machine). The kernel caps it at net.core.somaxconn.
BACKLOG = 1024


def endpoint(host: str, port: int) -> str:
    """Daphne's endpoint for ``host:port`` (an IPv6 address's colons escaped, as Daphne's own
    ``-b``/``-p`` do), with room for a lecture hall's worth of connections at once."""
    interface = host.replace(":", "\\:")
    return f"tcp:port={port}:interface={interface}:backlog={BACKLOG}"
