"""A throwaway PostgreSQL cluster (``pg-1``) per run, with a real PgBouncer in front of it.

Each run gets its own cluster in the run's temp dir: ``initdb --auth=scram-sha-256
--pwfile=<file> --no-sync``, then ``postgres`` on a free loopback port with ``fsync=off``
(nothing here must survive a crash), its Unix socket in the same dir, and no system cluster
touched. Next to it runs ``pgbouncer`` in ``pool_mode = transaction`` with one server
connection per pool, for the ``pooled`` variant; the lab publishes its address on the server as
the custom setting ``lockviz.pooler`` so a client that only knows ``pg-1`` can find it (an
external server may set it too).

Private to its run: the superuser ``postgres`` has a fresh password, and every connection, on
the Unix socket too, must prove it with SCRAM (with ``trust``, any local user was superuser,
and ``COPY ... TO PROGRAM`` runs commands as the app's user). PgBouncer asks for the same
password (``auth_type = scram-sha-256``, from an ``auth_file``). The password file for initdb
is deleted once it has run; the auth file stays (mode 0600) while the server runs. Before use
the lab checks that what answers on each port is its own cluster:
``current_setting('data_directory')`` is this server's data dir, directly and through PgBouncer.

The password's SCRAM secret has 1 PBKDF2 iteration, not PostgreSQL's default 4096: the lab
computes it and sets it as a ready secret (:func:`~lockviz.lab.servers.pgtemplate.scram_secret`;
every PostgreSQL version keeps such a secret as it is, where 16+ could also be told
``scram_iterations``). Iterations only slow down *guessing* a password from its secret (read
from ``pg_authid``, or from a recorded login); each password here is 24 random bytes (192 bits),
which no number of guesses finds, at 1 iteration or 4096, and it lives only as long as its run.
What the count does cost is the client's CPU at every login (the server only checks a proof):
libpq computes the 4096 iterations each time, 2.3 ms of CPU per login here (2.8 against 0.55
ms a connection, measured at load 8), and a run logs in at least three times at its start
(alice, bob, the lab's observer) on a machine where every millisecond of CPU is waited for.
PgBouncer keeps the plain password (it must log in to the server with it) and makes a secret of
its own for the clients that log in through it (the ``pooled`` variant only).

What a run that takes a ready cluster (a warm spare) still pays at its start is its sessions'
logins: each forks a backend that starts up (the relcache init files it reads were written by
the readiness check's own login; ``SETUP_SQL`` ran there too, never per client). Measured phase
by phase with ``bench/startphases.py`` (docs/performance.md, "Warm spares").

Measured on the 2-core dev machine: initdb 0.42 s idle and 0.8-2.5 s with both cores busy
(2.4-3.9 s at a load average of 15); postgres ready 25-50 ms after its start (up to 160 ms
loaded), pgbouncer 5-30 ms after that. So a process runs initdb once, into a template dir, and
each cluster starts from a copy of it with a password of its own
(:mod:`lockviz.lab.servers.pgtemplate`: 0.6 s at that load); the template dir is in the
registry, so a killed app's is swept like its runs' dirs.

``initdb`` and ``postgres`` refuse to run as root: as root they run as the ``postgres`` OS user
(Debian creates it with the server package), in a dir it owns. Backends are forked by the
postmaster into sessions of their own, so killing the postmaster's process group would miss
them; on Linux they get a signal when the postmaster dies and exit at once, and :meth:`kill`
SIGKILLs any that a snapshot taken before the kill still finds alive.

One module past the usual ~300 lines, on purpose: initdb, the server, PgBouncer and their passwords
are one server's start-up, and its failure messages must name which of them failed. Where their
binaries are and the OS user they run as: :mod:`lockviz.lab.servers.pgbinaries`.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import psycopg

from algorithms.postgres_lock import SETUP_SQL
from algorithms.postgres_session import Connection, connect
from lockviz.lab import procs
from lockviz.lab.errors import LabError
from lockviz.lab.ports import free_port
from lockviz.lab.procs import children, wait_until
from lockviz.lab.servers import pgtemplate
from lockviz.lab.servers.base import (
    ForeignServer,
    PrivateServer,
    Requirement,
    ServerOptions,
    Spawn,
    write_private,
)
from lockviz.lab.servers.pgbinaries import (
    OS_USER,
    as_os_user,
    bin_dir,
    give_template_dir,
    os_user_ids,
    pgbouncer_binary,
)

START_TIMEOUT_S = 20.0
STOP_GRACE_S = 3.0
# Fast to start, nothing kept past the run. fsync is off (the machine will not crash under a
# run), but commits stay synchronous: each one hands its WAL to the kernel, so a kill -9 of the
# server loses nothing. With synchronous_commit = off it lost the last 200 ms of commits, and
# the fencing sequence handed out the same token again after a restart (measured).
# The keepalives let the server notice a client whose machine vanished (no FIN) in about 8 s.
SERVER_SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "fsync": "off",
    "full_page_writes": "off",
    "synchronous_commit": "on",
    "shared_buffers": "16MB",
    "max_connections": "40",
    "autovacuum": "off",
    "tcp_keepalives_idle": "5",
    "tcp_keepalives_interval": "1",
    "tcp_keepalives_count": "3",
    "log_min_messages": "warning",
}
# Every wait is explicit: PgBouncer's defaults wait 120 s for a pool slot and 15 s before
# retrying a server it could not reach (which at start is just "not ready yet").
PGBOUNCER_INI = """\
[databases]
postgres = host=127.0.0.1 port={pg_port} dbname=postgres user=postgres

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = scram-sha-256
auth_file = {auth_file}
pool_mode = transaction
default_pool_size = 1
max_client_conn = 50
server_reset_query =
server_login_retry = 0.05
server_connect_timeout = 2
query_wait_timeout = 10
query_timeout = 5
logfile = {log}
pidfile =
"""


def requirements() -> list[Requirement]:
    needs = [
        Requirement("PostgreSQL server (initdb, postgres)", bin_dir(), "postgresql"),
        Requirement("pgbouncer", pgbouncer_binary(), "pgbouncer"),
    ]
    if os.geteuid() == 0:  # the servers refuse root: they need the user the package creates
        try:
            home: str | None = pwd.getpwnam(OS_USER).pw_dir
        except KeyError:
            home = None
        needs.append(Requirement(f"the {OS_USER!r} OS user (not root)", home, "postgresql"))
    return needs


def create(names: list[str], workdir: str, options: ServerOptions) -> list[PostgresServer]:
    extra = {}
    if options.get("idle_session_timeout_ms"):  # the setting that frees a ghost holder's lock
        extra["idle_session_timeout"] = str(options["idle_session_timeout_ms"])
    return [PostgresServer(name, os.path.join(workdir, name), extra=extra) for name in names]


def wipe(host: str, port: int, password: str | None = None) -> None:
    """Before a run on the lab's external server: end every other session (and so every
    advisory lock, pooled ones included), and restart the fencing sequence."""
    with connect(
        host, port, application_name="lockviz-lab", timeout_ms=5000, password=password
    ) as conn:
        row = conn.execute("SELECT to_regclass('public.lockviz_marker') IS NOT NULL").fetchone()
        if not row or not row[0]:
            raise LabError(
                f"PostgreSQL at {host}:{port} is not marked as lockviz's (no table "
                "lockviz_marker): lockviz ends every other session before each run, so it only "
                "uses a server set aside for it: CREATE TABLE lockviz_marker ()"
            )
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'"
        )
        conn.execute("DROP SEQUENCE IF EXISTS lockviz_fence")
        conn.execute(SETUP_SQL)


def _refused_password(exc: psycopg.Error) -> bool:
    """A server that refuses our password is not ours (ours would take it)."""
    text = str(exc)  # PostgreSQL says the first, PgBouncer the second
    return "password authentication failed" in text or "SASL authentication failed" in text


@dataclass
class PostgresServer(PrivateServer):
    """A postmaster and a pgbouncer, children of the lab, with their dir, ports and log."""

    pooler_port: int = 0
    pooler: subprocess.Popen[bytes] | None = None
    timings: dict[str, float] = field(default_factory=dict)  # seconds: initdb, until ready
    extra: dict[str, str] = field(default_factory=dict)  # server settings a scenario asked for
    _started: float = 0.0
    log_name = "postgres.log"

    @property
    def pooler_address(self) -> str:
        return f"{self.host}:{self.pooler_port}"

    @property
    def data_dir(self) -> str:
        return os.path.join(self.workdir, "data")

    def helpers(self) -> list[subprocess.Popen[bytes]]:
        return [self.pooler] if self.pooler is not None else []

    def ports(self) -> list[int]:
        return [self.port, self.pooler_port]

    def connect(
        self, *, pooled: bool = False, application_name: str = "lab", timeout_ms: int = 1000
    ) -> Connection:
        """A connection as the superuser, to the server or (``pooled``) through PgBouncer."""
        return connect(
            self.host,
            self.pooler_port if pooled else self.port,
            application_name=application_name,
            timeout_ms=timeout_ms,
            pooled=pooled,
            password=self.password,
        )

    def launch(self, spawn: Spawn = procs.spawn) -> None:
        """initdb (first time only), then start postgres and pgbouncer without waiting."""
        binaries = bin_dir()
        if binaries is None:
            raise LabError("PostgreSQL is not installed: `sudo apt-get install postgresql`")
        self._prepare_dir()
        if not os.path.exists(os.path.join(self.data_dir, "PG_VERSION")):
            started = time.monotonic()
            source = pgtemplate.template(binaries, self._initdb_into, give_template_dir)
            init_log = os.path.join(self.workdir, "initdb.log")
            pgtemplate.copy(binaries, source, self.data_dir, self.password, init_log, as_os_user())
            self.timings["initdb_s"] = time.monotonic() - started
        self._started = time.monotonic()
        self.port = self.port or free_port()
        self.pooler_port = self.pooler_port or free_port()
        settings = {**SERVER_SETTINGS, **self.extra, "lockviz.pooler": self.pooler_address}
        args = [os.path.join(binaries, "postgres"), "-D", self.data_dir, "-p", str(self.port)]
        args += ["-k", self.workdir]
        for name, value in settings.items():
            args += ["-c", f"{name}={value}"]
        as_user = as_os_user()
        with open(os.path.join(self.workdir, "postgres.log"), "ab") as log:  # the child has a copy
            self.proc = spawn(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, **as_user)
        if self.pooler is not None and self.pooler.poll() is None:
            return  # a restart of the server after kill(): the pooler kept running
        ini = os.path.join(self.workdir, "pgbouncer.ini")
        auth_file = os.path.join(self.workdir, "pgbouncer.users")
        write_private(auth_file, f'"postgres" "{self.password}"\n', os_user_ids())
        config = PGBOUNCER_INI.format(
            pg_port=self.port,
            port=self.pooler_port,
            log=os.path.join(self.workdir, "pgbouncer.log"),
            auth_file=auth_file,
        )
        write_private(ini, config, os_user_ids())
        self.pooler = spawn(
            [pgbouncer_binary() or "pgbouncer", "--quiet", ini],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            **as_user,
        )

    def _prepare_dir(self) -> None:
        os.makedirs(self.workdir, mode=0o700, exist_ok=True)
        ids = os_user_ids()
        if ids is not None:
            # The run's dir and the lab's base are root's and private (0700): the postgres user
            # must pass through them (search only: it cannot list them or read what is inside).
            run_dir = os.path.dirname(self.workdir)
            for path in (run_dir, os.path.dirname(run_dir)):
                os.chmod(path, os.stat(path).st_mode | 0o011)
            os.chown(self.workdir, *ids)

    def _initdb_into(self, workdir: str, data_dir: str, password: str) -> None:
        """initdb of a new cluster in ``data_dir`` whose superuser has ``password``."""
        binaries = bin_dir() or ""
        pwfile = os.path.join(workdir, "initdb.pw")
        write_private(pwfile, password + "\n", os_user_ids())
        args = [os.path.join(binaries, "initdb"), "-D", data_dir, "-U", "postgres"]
        args += ["--auth=scram-sha-256", f"--pwfile={pwfile}"]
        args += ["--no-sync", "--no-instructions", "-E", "UTF8", "--locale=C"]
        try:
            pgtemplate.run(args, os.path.join(workdir, "initdb.log"), as_os_user(),
                           f"{self.name}: initdb")  # fmt: skip
        finally:
            os.unlink(pwfile)

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Ready means our cluster answers with our password, directly and through PgBouncer."""

        def ready(proc: subprocess.Popen[bytes] | None, what: str, log: str) -> Callable[[], bool]:
            pooled = proc is self.pooler

            def probe() -> bool:
                if proc is not None and proc.poll() is not None:
                    raise self.exited_at_start(what, log)
                try:
                    self._check_data_dir(pooled, timeout_ms=1000)
                except psycopg.OperationalError as exc:
                    if _refused_password(exc):
                        raise ForeignServer(f"{what} on port {self._port(pooled)}: {exc}") from exc
                    return False  # not listening, or still starting up
                return True

            return probe

        what = f"{self.name} (postgres)"
        wait_until(ready(self.proc, what, "postgres.log"), timeout_s, what)
        self.timings["postgres_ready_s"] = time.monotonic() - self._started
        with self.connect() as conn:
            conn.execute(SETUP_SQL)
        what = f"{self.name}'s pgbouncer"
        wait_until(ready(self.pooler, what, "pgbouncer.log"), timeout_s, what)
        self.timings["pgbouncer_ready_s"] = time.monotonic() - self._started

    def check_identity(self) -> None:
        for pooled in (False, True):
            try:
                self._check_data_dir(pooled, timeout_ms=2000)
            except psycopg.Error as exc:
                port = self._port(pooled)
                raise ForeignServer(f"{self.name}: no answer on port {port}: {exc}") from exc

    def _port(self, pooled: bool) -> int:
        return self.pooler_port if pooled else self.port

    def _check_data_dir(self, pooled: bool, timeout_ms: int) -> None:
        """ForeignServer unless the cluster behind the port is the one in our data dir."""
        with self.connect(pooled=pooled, timeout_ms=timeout_ms) as conn:
            row = conn.execute("SELECT current_setting('data_directory')").fetchone()
        found = str(row[0]) if row else ""
        if os.path.realpath(found) != os.path.realpath(self.data_dir):
            raise ForeignServer(
                f"{self.name}: the PostgreSQL on port {self._port(pooled)} serves {found}, "
                f"not {self.data_dir}"
            )

    def kill(self) -> None:
        """kill -9 of the postmaster: no shutdown; its backends die with it (checked)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        backends = children(self.proc.pid)
        self.proc.kill()
        self.proc.wait()
        for pid in backends:  # normally gone already: they watch for the postmaster's death
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def stop(self) -> None:
        """PgBouncer's immediate shutdown, postgres's fast shutdown; SIGKILL if either lingers."""
        for proc, sig in ((self.pooler, signal.SIGTERM), (self.proc, signal.SIGINT)):
            if proc is None or proc.poll() is not None:
                continue
            backends = children(proc.pid)
            try:
                proc.send_signal(signal.SIGCONT)
                proc.send_signal(sig)
                proc.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            except ProcessLookupError:
                proc.wait()
            for pid in backends:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
