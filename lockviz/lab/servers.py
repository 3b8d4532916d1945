"""Real servers for a run: started fresh on loopback, or borrowed from outside.

A fault is global to a server (a clock jump moves every key on that node), so in the embedded
lab every run gets its own servers: free ports, a temp dir, no persistence, gone when the run
ends. Five redis-server nodes start in well under a second.

Each Redis node runs under libfaketime with a clock file of its own, so a run can move one
node's wall clock while it runs. What it takes on Debian (measured): preloading
``libfaketime.so.1`` alone deadlocks redis-server at start (its jemalloc calls clock_gettime
during libfaketime's init); preloading glibc's ``libc_malloc_debug.so.0`` with it works.
``FAKETIME_NO_CACHE=1`` applies a change at once; ``FAKETIME_DONT_FAKE_MONOTONIC=1`` keeps a
backward jump from stalling Redis's expiry timer. Key expiry then follows the faked wall clock.

With ``LOCKVIZ_SERVERS`` set (docker compose), runs use those servers instead, one run at a
time, each waiting its turn in a visible queue, and the lab wipes them before each run.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import redis

from lockviz.lab import procs, registry

REDIS_BINARY = "redis-server"
START_TIMEOUT_S = 10.0


class LabError(Exception):
    """The lab cannot provide what a run needs (a server is missing or would not start)."""


@dataclass(frozen=True)
class Requirement:
    what: str
    found: str | None
    debian_package: str


def _faketime_libs() -> list[str]:
    found = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))
    malloc_debug = sorted(glob.glob("/usr/lib/*/libc_malloc_debug.so.0"))
    return found[:1] + malloc_debug[:1]


def requirements() -> list[Requirement]:
    """What the embedded lab needs from the machine, and whether it is there."""
    libs = _faketime_libs()
    faketime = next((lib for lib in libs if "faketime" in lib), None)
    malloc_debug = next((lib for lib in libs if "malloc_debug" in lib), None)
    return [
        Requirement("redis-server", shutil.which(REDIS_BINARY), "redis-server"),
        Requirement("libfaketime", faketime, "faketime"),
        Requirement("glibc's libc_malloc_debug", malloc_debug, "libc6"),
    ]


def missing() -> list[Requirement]:
    return [req for req in requirements() if req.found is None]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_until(ready: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        if time.monotonic() > deadline:
            raise LabError(f"{what} did not become ready within {timeout_s:.0f} s")
        time.sleep(0.005)


class Server(Protocol):
    name: str
    host: str
    port: int

    @property
    def address(self) -> str: ...


@dataclass
class RedisServer:
    """One redis-server child process with its own port, directory and clock file."""

    name: str
    workdir: str
    port: int = 0
    host: str = "127.0.0.1"
    persistence: str = "none"  # "none" | "fsync"
    offset_ms: float = 0.0
    proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def clock_file(self) -> str:
        return os.path.join(self.workdir, "clock")

    def launch(self, spawn: Callable[..., subprocess.Popen[Any]] = procs.spawn) -> None:
        """Start the process (without waiting for it to serve)."""
        os.makedirs(self.workdir, exist_ok=True)
        if not self.port:
            self.port = free_port()
        self._write_clock()
        args = [
            REDIS_BINARY,
            "--port", str(self.port),
            "--bind", self.host,
            "--dir", self.workdir,
            "--save", "",
            "--appendonly", "yes" if self.persistence == "fsync" else "no",
            "--appendfsync", "always",
            "--protected-mode", "no",
            "--daemonize", "no",
            "--hz", "100",  # sweep expired keys often: the diagram shows when the server expires
            "--notify-keyspace-events", "Eg$x",  # keyevents: set, del, expired
            "--loglevel", "warning",
            "--logfile", os.path.join(self.workdir, "redis.log"),
        ]  # fmt: skip
        env = {
            **os.environ,
            "LD_PRELOAD": ":".join(_faketime_libs()),
            "FAKETIME_TIMESTAMP_FILE": self.clock_file,
            "FAKETIME_NO_CACHE": "1",
            "FAKETIME_DONT_FAKE_MONOTONIC": "1",
        }
        self.proc = spawn(args, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        def ready() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise LabError(f"{self.name} (redis-server) exited at start: {self._log_tail()}")
            return self.ping()

        wait_until(ready, timeout_s, f"{self.name} (redis-server on port {self.port})")

    def ping(self) -> bool:
        try:
            return bool(self.client(timeout_ms=200).ping())
        except redis.RedisError:
            return False

    def client(self, timeout_ms: int = 1000) -> redis.Redis:
        return redis.Redis(
            host=self.host,
            port=self.port,
            socket_timeout=timeout_ms / 1000,
            socket_connect_timeout=timeout_ms / 1000,
            decode_responses=True,
        )

    def jump_clock(self, ms: float) -> float:
        """Move this node's wall clock by ``ms`` (cumulative); returns the total offset."""
        self.offset_ms += ms
        self._write_clock()
        return self.offset_ms

    def _write_clock(self) -> None:
        # Written whole, then renamed: libfaketime reads a half-written file as +0.
        tmp = self.clock_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{self.offset_ms / 1000:+.3f}\n")
        os.replace(tmp, self.clock_file)

    def kill(self) -> None:
        """kill -9: no shutdown, no save."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None:
            procs.stop(self.proc)

    def _log_tail(self) -> str:
        try:
            with open(os.path.join(self.workdir, "redis.log")) as f:
                return f.read()[-500:].strip() or "no log output"
        except OSError:
            return "no log"


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

    def client(self, timeout_ms: int = 1000) -> redis.Redis:
        return redis.Redis(
            host=self.host,
            port=self.port,
            socket_timeout=timeout_ms / 1000,
            socket_connect_timeout=timeout_ms / 1000,
            decode_responses=True,
        )


@dataclass
class ServerSet:
    """The servers one run uses, by name (``redis-1``, ``storage``)."""

    servers: dict[str, Any]
    workdir: str | None = None
    release: Callable[[], None] = field(default=lambda: None)

    def __getitem__(self, name: str) -> Any:
        return self.servers[name]

    def addresses(self) -> dict[str, str]:
        return {name: server.address for name, server in self.servers.items()}

    def close(self) -> None:
        try:
            for server in self.servers.values():
                if isinstance(server, RedisServer):
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

    def check(self) -> None:
        absent = missing()
        if absent:
            names = ", ".join(req.what for req in absent)
            packages = " ".join(sorted({req.debian_package for req in absent}))
            raise LabError(f"missing {names}: install with `sudo apt-get install {packages}`")

    @contextlib.contextmanager
    def servers(self, names: list[str], on_wait: Callable[[int], None] | None = None) -> Iterator[
        ServerSet
    ]:
        self.check()
        workdir = tempfile.mkdtemp(prefix="lockviz-run-", dir=self.base_dir)
        nodes = {name: RedisServer(name, os.path.join(workdir, name)) for name in names}
        server_set = ServerSet(dict(nodes), workdir)
        try:
            for node in nodes.values():
                node.launch()
            registry.record(workdir, {n: s.proc.pid for n, s in nodes.items() if s.proc})
            for node in nodes.values():
                node.wait_ready()
            yield server_set
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

    def check(self) -> None:
        return None

    @contextlib.contextmanager
    def servers(self, names: list[str], on_wait: Callable[[int], None] | None = None) -> Iterator[
        ServerSet
    ]:
        absent = [name for name in names if name not in self.servers_by_name]
        if absent:
            raise LabError(f"LOCKVIZ_SERVERS has no {', '.join(absent)}")
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
                server.client().flushall()
                server.client().config_set("notify-keyspace-events", "Eg$x")
            yield ServerSet(dict(chosen))
        finally:
            self._turn.release()


def make_lab(servers_spec: str | None, base_dir: str | None = None) -> LocalLab | ExternalLab:
    return ExternalLab(servers_spec) if servers_spec else LocalLab(base_dir)
