"""What every server the lab controls has, and what only some kinds can do.

A server is one main process (redis-server, a ZooKeeper JVM, a postmaster, etcd) plus, for some
kinds, helper processes that live and die with it (PostgreSQL's PgBouncer, the proxy mesh of a
ZooKeeper ensemble). Faults ask a server's kind what it supports (``kind.clock_jumps``,
``kind.peers``) instead of probing for methods; a server asked for what its kind cannot do
raises :class:`LabError` saying so.

The lab's servers are private to the run that started them. Kinds that can ask for a password
(Redis, PostgreSQL and its PgBouncer) get a fresh one per server, written only to files of
mode 0600 in the run's dir, never on a command line. A port is chosen before the server binds
it, so another process can take it in between: a server that exits at start because one of its
ports is taken raises :class:`PortTaken` (the lab starts it again on other ports), and a server
is used only once :meth:`Server.check_identity` has proved that what answers on its port is the
process the lab started (:class:`ForeignServer` if not).
"""

from __future__ import annotations

import functools
import os
import secrets
import signal
import socket
import subprocess
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, TypedDict, Unpack

from lockviz.catalogue import ServerKind, server_kind
from lockviz.lab import procs
from lockviz.lab.errors import LabError


class Spawn(Protocol):
    """How a server's processes start: :func:`procs.spawn`, or ``lab up``'s
    :func:`procs.spawn_detached`."""

    def __call__(
        self, args: list[str], **popen: Unpack[procs.Options]
    ) -> subprocess.Popen[bytes]: ...


class PortTaken(LabError):
    """Another process holds one of the server's ports: it can start again on other ports."""


class ForeignServer(PortTaken):
    """What answers on the server's port is not the process the lab started."""


def new_password() -> str:
    """A fresh secret for one server (URL-safe: it goes into config files as is)."""
    return secrets.token_urlsafe(24)


def write_private(path: str, text: str, owner: tuple[int, int] | None = None) -> None:
    """Write ``text`` to a file only its owner can read (0600); ``owner``: (uid, gid) to give it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with open(fd, "w") as f:
        os.fchmod(fd, 0o600)  # an existing file keeps its mode through O_CREAT
        if owner is not None:
            os.fchown(fd, *owner)
        f.write(text)


def port_taken(host: str, port: int) -> bool:
    """Does another socket listen on ``host:port`` (the server could not bind it)?"""
    with socket.socket() as sock:
        # As servers bind: a connection of an earlier process in TIME_WAIT does not count.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


@dataclass(frozen=True)
class Requirement:
    what: str
    found: str | None
    debian_package: str


class Server(ABC):
    """One server started by the lab: an address, its processes, kill -9, stop, a log.

    Subclasses are dataclasses providing ``name``, ``host``, ``port``, ``workdir`` and ``proc``,
    and implement :meth:`launch` and :meth:`wait_ready`.
    """

    name: str
    host: str
    port: int
    workdir: str
    proc: subprocess.Popen[bytes] | None
    offset_ms: float  # how far its wall clock has been moved (clock_jumps kinds only)
    persistence: str | None = None  # "none" | "fsync" where the kind has a choice
    password: str | None = None  # what clients must present (kinds that have passwords)
    retired: bool = False  # stopped for good: whoever watched it should stop too
    log_name: ClassVar[str] = "server.log"

    @property
    def kind(self) -> ServerKind:
        found = server_kind(self.name)
        assert found is not None, f"{self.name} is not a server's name"
        return found

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def log_path(self) -> str:
        return os.path.join(self.workdir, self.log_name)

    def helpers(self) -> list[subprocess.Popen[bytes]]:
        """Processes that belong to this server besides its main one."""
        return []

    def pids(self) -> list[int]:
        return [p.pid for p in (self.proc, *self.helpers()) if p is not None]

    def ports(self) -> list[int]:
        """Every port it listens on (its client port first)."""
        return [self.port]

    def exited_at_start(self, what: str, log_name: str | None = None) -> LabError:
        """The error for a process of this server that exited before it served.

        :class:`PortTaken` when another process listens on one of its ports (the lab then
        starts it again on others), else a LabError with the end of its log.
        """
        taken = [port for port in self.ports() if port and port_taken(self.host, port)]
        if taken:
            return PortTaken(f"{what} exited at start: port {taken[0]} is taken by another process")
        return LabError(f"{what} exited at start: {self.log_tail(log_name)}")

    def check_identity(self) -> None:
        """Raise :class:`ForeignServer` unless what answers on its port is the process started.

        Each kind asks the server something only its own process can answer (its pid, its data
        dir). Called before the server is used, at start and after a restart.
        """
        raise ForeignServer(f"{self.name}: the lab cannot tell whether {self.address} is its own")

    @abstractmethod
    def launch(self, spawn: Spawn = procs.spawn) -> None:
        """Start the process (without waiting for it to serve). Data survives a relaunch."""

    @abstractmethod
    def wait_ready(self) -> None:
        """Return once it serves; LabError (with its log's tail) if it exits or takes too long."""

    def kill(self) -> None:
        """kill -9: no shutdown, no save; whatever the server had on disk is there at restart."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        """Stop it for good: the main process, then its helpers (each always reaped, each
        stopped even if stopping another failed)."""
        self.retired = True
        procs.run_each(
            functools.partial(procs.stop, proc)
            for proc in (self.proc, *self.helpers())
            if proc is not None
        )

    def pause(self) -> None:
        """SIGSTOP its main process: it answers nothing, and its timers stand still."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT: it goes on where it stopped, unaware that time passed."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)

    def role(self) -> str | None:
        """Its part in its group as it says now (``primary``/``replica``, ``leader``/
        ``follower``); None for a server of no group, or one that does not answer."""
        return None

    def warm_up(self) -> None:
        """Serve a client once before a run does, so that the run's first client does not pay
        for what a server does only once (a JVM loading and compiling its request path); a
        warm spare is warmed before it is handed out (:mod:`lockviz.lab.spares`). It leaves
        nothing a run could see: the default does nothing (a Redis, etcd or PostgreSQL serves
        its first client as fast as its next). LabError when the server does not answer."""
        return None

    def known_as(self) -> str | None:
        """The address the rest of its group knows it by, and names it by to clients (a
        replicated Redis's front: what Sentinel answers); None: its own address."""
        return None

    def group_names(self) -> list[str] | None:
        """Every server of its group, itself included; None: its peers are its kind's servers
        (a ZooKeeper ensemble, an etcd cluster)."""
        return None

    def log_tail(self, log_name: str | None = None) -> str:
        """The end of its log (or of another log in its dir), to say why it would not start."""
        try:
            with open(os.path.join(self.workdir, log_name or self.log_name), errors="replace") as f:
                return f.read()[-500:].strip() or "no log output"
        except OSError:
            return "no log"

    # What only some kinds can do: the kind says which (see lockviz.catalogue.ServerKind).

    def jump_clock(self, ms: float) -> float:
        """Move this server's wall clock by ``ms`` (cumulative); returns the total offset."""
        raise LabError(f"clock jumps work on Redis nodes only, not on {self.name}")

    def reset_clock(self) -> None:
        """Put its clock back (kinds whose clocks cannot move have nothing to put back)."""
        self.offset_ms = 0.0

    def isolate(self, peers: list[str], mode: str) -> None:
        """Cut (``blackhole``/``reset``) or heal (``pass``) this server's links to ``peers``."""
        raise LabError(f"{self.name} has no peers to be cut off from")


@dataclass
class LocalServer(Server):
    """A server the lab starts itself, in a directory of its own: what every kind's dataclass
    begins with (each adds its own ports and settings after these)."""

    name: str
    workdir: str
    port: int = 0  # its client port (each kind's ``create`` picks a free one)
    host: str = "127.0.0.1"
    offset_ms: float = 0.0  # only Redis can have its clock moved (libfaketime)
    proc: subprocess.Popen[bytes] | None = None


@dataclass
class PrivateServer(LocalServer):
    """A local server that asks for a password: a fresh one each, never on a command line."""

    password: str = field(default_factory=new_password, repr=False)


@dataclass
class ExternalServer(Server):
    """A server someone else runs (docker compose, LOCKVIZ_SERVERS): the lab only talks to it."""

    name: str
    host: str
    port: int
    workdir: str = ""
    proc: subprocess.Popen[bytes] | None = None
    offset_ms: float = 0.0

    def launch(self, spawn: Spawn = procs.spawn) -> None:
        raise LabError(f"{self.name} at {self.address} is not the lab's to start")

    def wait_ready(self) -> None:
        """Someone else keeps it running."""

    def check_identity(self) -> None:
        """Whatever answers there is the server we were given."""

    def kill(self) -> None:
        raise LabError(f"crashing {self.name} needs the embedded lab (servers it started)")

    def stop(self) -> None:
        """Not ours to stop."""


class ServerOptions(TypedDict, total=False):
    """What a scenario asks of its servers (each kind reads what concerns it)."""

    persistence: str  # Redis and ZooKeeper: "none" (a restart comes back empty) or "fsync"
    idle_session_timeout_ms: int | None  # PostgreSQL: ends an idle session, freeing its locks
    min_replicas_to_write: int  # a replicated Redis: a primary with fewer good replicas refuses


class ServerModule(Protocol):
    """A module of :mod:`lockviz.lab.servers`: how to start, and wipe, one kind of server."""

    def requirements(self) -> list[Requirement]: ...

    def create(
        self, names: list[str], workdir: str, options: ServerOptions
    ) -> Sequence[Server]: ...

    def wipe(self, host: str, port: int) -> None: ...
