"""Real servers for a run: started fresh on loopback, or borrowed from outside.

A fault is global to a server (a clock jump moves every key on that node), so in the embedded
lab every run gets its own servers: free ports, a temp dir, no persistence unless asked, gone
when the run ends. Each kind of server (Redis, ZooKeeper, PostgreSQL, etcd) lives in a module
of this package that knows how to start, probe and stop it; a server's name says its kind
(``redis-3``, ``storage``, ``zk-1``, ``pg-1``, ``etcd-1``).

With ``LOCKVIZ_SERVERS`` set (docker compose), runs use those servers instead, one run at a
time, each waiting its turn in a visible queue, and the lab wipes them before each run.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from lockviz.lab import procs, registry


class LabError(Exception):
    """The lab cannot provide what a run needs (a server is missing or would not start)."""


@dataclass(frozen=True)
class Requirement:
    what: str
    found: str | None
    debian_package: str


_handed_out: dict[int, float] = {}  # port -> when; not handed out again for a minute
_ports_lock = threading.Lock()


def _ephemeral_range() -> tuple[int, int]:
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low, high = (int(n) for n in f.read().split())
            return low, high
    except (OSError, ValueError):
        return 32768, 60999


def free_port() -> int:
    """A loopback port for a server to listen on later.

    Chosen below the kernel's ephemeral range: a port handed out here is closed again until the
    server binds it, and in that gap a port the kernel picks for someone else (a proxy's
    listener, an outgoing connection) must not land on it. Not the same port twice within a
    minute in this process.
    """
    low, _ = _ephemeral_range()
    first = 10_000 if low > 12_000 else 1024
    with _ports_lock:
        now = time.monotonic()
        for _ in range(1000):
            port = random.randrange(first, low)
            if now - _handed_out.get(port, -3600.0) < 60:
                continue
            with socket.socket() as sock:
                try:
                    sock.bind(("127.0.0.1", port))
                except OSError:
                    continue
            _handed_out[port] = now
            return port
    raise LabError("no free loopback port below the ephemeral range")


def wait_until(ready: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        if time.monotonic() > deadline:
            raise LabError(f"{what} did not become ready within {timeout_s:.0f} s")
        time.sleep(0.005)


class OneProcess:
    """What a server run as one child process has: an address, a pid, kill -9, stop, a log.

    Mixed into the dataclasses of the server kinds, which provide ``host``, ``port``, ``proc``
    and ``log_path``.
    """

    host: str
    port: int
    proc: subprocess.Popen[bytes] | None
    log_path: str

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def pids(self) -> list[int]:
        return [self.proc.pid] if self.proc else []

    def kill(self) -> None:
        """kill -9: no shutdown, no save; whatever the server had on disk is there at restart."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None:
            procs.stop(self.proc)

    def log_tail(self) -> str:
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-500:].strip() or "no log output"
        except OSError:
            return "no log"


class Server(Protocol):
    """One server process the lab controls."""

    name: str
    host: str
    port: int
    offset_ms: float

    @property
    def address(self) -> str: ...

    def launch(self) -> None: ...

    def wait_ready(self) -> None: ...

    def stop(self) -> None: ...

    def kill(self) -> None: ...

    def pids(self) -> list[int]: ...


class ServerKind(Protocol):
    """A module of this package: how to start one kind of server."""

    def requirements(self) -> list[Requirement]: ...

    def create(self, names: list[str], workdir: str, options: dict[str, Any]) -> list[Server]: ...

    def wipe(self, host: str, port: int) -> None: ...


def kind_of(name: str) -> str:
    """``redis-2`` and ``storage`` are Redis, ``zk-1`` ZooKeeper, ``pg-1`` PostgreSQL, ..."""
    prefix = name.rsplit("-", 1)[0]
    return "redis" if name == "storage" else prefix


def kinds() -> dict[str, Any]:
    from lockviz.lab.servers import redis

    found: dict[str, Any] = {"redis": redis}
    for kind, module in (("zk", "zookeeper"), ("pg", "postgres"), ("etcd", "etcd")):
        try:
            found[kind] = __import__(f"lockviz.lab.servers.{module}", fromlist=["create"])
        except ImportError:
            continue
    return found


def requirements(kind: str | None = None) -> list[Requirement]:
    """What the embedded lab needs from the machine (for one kind, or all)."""
    return [
        req
        for name, module in kinds().items()
        if kind in (None, name)
        for req in module.requirements()
    ]


def missing(kind: str | None = None) -> list[Requirement]:
    return [req for req in requirements(kind) if req.found is None]


def install_hint(absent: list[Requirement]) -> str:
    names = ", ".join(req.what for req in absent)
    packages = " ".join(sorted({req.debian_package for req in absent}))
    return f"missing {names}: install with `sudo apt-get install {packages}`"


@dataclass
class ExternalServer:
    """A server someone else runs (docker compose); the lab can only talk to it."""

    name: str
    host: str
    port: int
    offset_ms: float = 0.0

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def client(self, timeout_ms: int = 1000) -> Any:
        """A Redis connection, for the lab's observers of a Redis server."""
        from algorithms.redis_client import connect

        return connect(self.host, self.port, timeout_ms=timeout_ms)

    def pids(self) -> list[int]:
        return []


@dataclass
class ServerSet:
    """The servers one run uses, by name (``redis-1``, ``storage``)."""

    servers: dict[str, Any]
    workdir: str | None = None
    local: bool = True
    release: Callable[[], None] = field(default=lambda: None)

    def __getitem__(self, name: str) -> Any:
        return self.servers[name]

    def addresses(self) -> dict[str, str]:
        return {name: server.address for name, server in self.servers.items()}

    def close(self) -> None:
        try:
            if self.local:
                for server in self.servers.values():
                    server.stop()
            if self.workdir:
                registry.forget(self.workdir)
                shutil.rmtree(self.workdir, ignore_errors=True)
        finally:
            self.release()


class LocalLab:
    """Starts fresh servers for each run as children of this process."""

    kind = "embedded"

    def __init__(self, base_dir: str | None = None) -> None:
        self.base_dir = base_dir

    def check(self, names: list[str] | None = None) -> None:
        needed = {kind_of(n) for n in names} if names else {None}
        for kind in needed:
            if kind is not None and kind not in kinds():
                raise LabError(f"this lab cannot start {kind} servers")
            absent = missing(kind)
            if absent:
                raise LabError(install_hint(absent))

    @contextlib.contextmanager
    def servers(
        self,
        names: list[str],
        on_wait: Callable[[int], None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> Iterator[ServerSet]:
        self.check(names)
        workdir = tempfile.mkdtemp(prefix="lockviz-run-", dir=self.base_dir)
        by_kind: dict[str, list[str]] = {}
        for name in names:
            by_kind.setdefault(kind_of(name), []).append(name)
        started: dict[str, Any] = {}
        server_set = ServerSet(started, workdir)
        try:
            for kind, group in by_kind.items():
                for server in kinds()[kind].create(group, workdir, options or {}):
                    started[server.name] = server
            for server in started.values():
                server.launch()
            registry.record(
                workdir,
                {f"{n}#{i}": pid for n, s in started.items() for i, pid in enumerate(s.pids())},
                ports={n: s.port for n, s in started.items()},
            )
            for server in started.values():
                server.wait_ready()
            yield ServerSet({n: started[n] for n in names}, workdir)
        finally:
            server_set.close()


class ExternalLab:
    """Uses servers given as ``LOCKVIZ_SERVERS=redis-1=host:port,storage=host:port``.

    They are shared, so runs take turns: ``on_wait`` hears each run's place in the queue.
    """

    kind = "external"

    def __init__(self, spec: str) -> None:
        self.servers_by_name: dict[str, ExternalServer] = {}
        for item in filter(None, (part.strip() for part in spec.split(","))):
            name, _, address = item.partition("=")
            host, _, port = address.rpartition(":")
            if not name or not host or not port.isdigit():
                raise LabError(f"LOCKVIZ_SERVERS: cannot read {item!r}; use name=host:port")
            self.servers_by_name[name] = ExternalServer(name, host, int(port))
        self._turn = threading.Lock()
        self._queue: list[object] = []
        self._queue_lock = threading.Lock()

    def check(self, names: list[str] | None = None) -> None:
        absent = [n for n in names or [] if n not in self.servers_by_name]
        if absent:
            raise LabError(f"LOCKVIZ_SERVERS has no {', '.join(absent)}")

    @contextlib.contextmanager
    def servers(
        self,
        names: list[str],
        on_wait: Callable[[int], None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> Iterator[ServerSet]:
        self.check(names)
        ticket = object()
        with self._queue_lock:
            self._queue.append(ticket)
        while not self._turn.acquire(timeout=0.5):
            if on_wait:
                with self._queue_lock:
                    on_wait(self._queue.index(ticket))
        with self._queue_lock:
            self._queue.remove(ticket)
        chosen = {name: self.servers_by_name[name] for name in names}
        try:
            for server in chosen.values():
                try:
                    kinds()[kind_of(server.name)].wipe(server.host, server.port)
                except Exception as exc:  # any client library's error: the server is unusable
                    raise LabError(
                        f"{server.name} at {server.address} is unreachable: {exc}"
                    ) from exc
            yield ServerSet(dict(chosen), local=False)
        finally:
            self._turn.release()


def make_lab(servers_spec: str | None, base_dir: str | None = None) -> LocalLab | ExternalLab:
    return ExternalLab(servers_spec) if servers_spec else LocalLab(base_dir)
