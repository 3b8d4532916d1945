"""redis-server nodes, each under libfaketime with a clock file of its own.

Five nodes start in well under a second. What libfaketime takes on Debian (measured):
preloading ``libfaketime.so.1`` alone deadlocks redis-server at start (its jemalloc calls
clock_gettime during libfaketime's init); preloading glibc's ``libc_malloc_debug.so.0`` with it
works. ``FAKETIME_NO_CACHE=1`` applies a change at once; ``FAKETIME_DONT_FAKE_MONOTONIC=1``
keeps a backward jump from stalling Redis's expiry timer. Key expiry then follows the faked
wall clock: +20 s on a node makes a 30 s lease expire 20 s early.

Each node is private to its run: a password of its own (``requirepass``) and protected mode on,
all in ``redis.conf`` (mode 0600, in the node's dir), so the command line is only
``redis-server <that file>``. A node without a password would let any local user write files
as the app's user (``CONFIG SET dir``, ``SAVE``). Before use, the lab checks that the node
answering on the port is its own child: ``INFO server``'s ``process_id`` is the pid it spawned.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from dataclasses import dataclass

import redis

from algorithms.redis_client import connect
from lockviz.lab import procs
from lockviz.lab.errors import LabError
from lockviz.lab.ports import free_port
from lockviz.lab.procs import wait_until
from lockviz.lab.servers.base import (
    ForeignServer,
    PrivateServer,
    Requirement,
    ServerOptions,
    Spawn,
    write_private,
)

REDIS_BINARY = "redis-server"
START_TIMEOUT_S = 10.0
KEYSPACE_EVENTS = "Eg$x"  # keyevent notifications for set, del and expired


def _faketime_libs() -> list[str]:
    found = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1"))
    malloc_debug = sorted(glob.glob("/usr/lib/*/libc_malloc_debug.so.0"))
    return found[:1] + malloc_debug[:1]


def requirements() -> list[Requirement]:
    libs = _faketime_libs()
    faketime = next((lib for lib in libs if "faketime" in lib), None)
    malloc_debug = next((lib for lib in libs if "malloc_debug" in lib), None)
    return [
        Requirement("redis-server", shutil.which(REDIS_BINARY), "redis-server"),
        Requirement("libfaketime", faketime, "faketime"),
        Requirement("glibc's libc_malloc_debug", malloc_debug, "libc6"),
    ]


def create(names: list[str], workdir: str, options: ServerOptions) -> list[RedisServer]:
    persistence = options.get("persistence", "none")
    return [
        RedisServer(name, os.path.join(workdir, name), persistence=persistence) for name in names
    ]


MARKER = "lockviz:marker"  # a server set aside for lockviz carries this key (see wipe)


def wipe(host: str, port: int, password: str | None = None) -> None:
    """Empty a server someone else runs, before a run on it: only one that says it is lockviz's
    (the key ``lockviz:marker``), never whatever LOCKVIZ_SERVERS happens to point at."""
    client = redis.Redis(
        host=host, port=port, password=password, socket_timeout=2, decode_responses=True
    )
    if not client.exists(MARKER):
        raise LabError(
            f"{host}:{port} is not marked as lockviz's (no key {MARKER}): lockviz empties a "
            f"server before each run, so it only uses one set aside for it: SET {MARKER} 1"
        )
    client.flushall()
    client.set(MARKER, "1")
    client.config_set("notify-keyspace-events", KEYSPACE_EVENTS)


def _quoted(path: str) -> str:
    """A path as a redis.conf string."""
    if any(c in path for c in '"\\\n'):
        raise LabError(f"redis.conf cannot hold the path {path!r}")
    return f'"{path}"'


@dataclass
class RedisServer(PrivateServer):
    """One redis-server child process with its own port, directory and clock file."""

    persistence: str = "none"  # "none" | "fsync"

    log_name = "redis.log"
    hz = 100  # sweep expired keys often: the diagram shows when the server expires a lease
    clock = True  # under libfaketime, its wall clock movable (jump_clock)

    @property
    def clock_file(self) -> str:
        return os.path.join(self.workdir, "clock")

    @property
    def config_file(self) -> str:
        return os.path.join(self.workdir, "redis.conf")

    def config(self) -> str:
        """redis.conf: everything the node runs with, its password included."""
        settings = [
            ("port", str(self.port)),
            ("bind", self.host),
            ("dir", _quoted(self.workdir)),
            ("save", '""'),
            ("appendonly", "yes" if self.persistence == "fsync" else "no"),
            ("appendfsync", "always"),
            ("protected-mode", "yes"),
            ("requirepass", self.password),
            ("daemonize", "no"),
            ("hz", str(self.hz)),
            ("notify-keyspace-events", KEYSPACE_EVENTS),
            ("loglevel", "warning"),
            ("logfile", _quoted(self.log_path)),
        ]
        return "".join(f"{name} {value}\n" for name, value in settings)

    def launch(self, spawn: Spawn = procs.spawn) -> None:
        """Start the process (without waiting for it to serve)."""
        os.makedirs(self.workdir, mode=0o700, exist_ok=True)
        if not self.port:
            self.port = free_port()
        self._write_clock()
        write_private(self.config_file, self.config())
        args = [REDIS_BINARY, self.config_file]
        env = procs.environment(
            LD_PRELOAD=":".join(_faketime_libs()),
            FAKETIME_TIMESTAMP_FILE=self.clock_file,
            FAKETIME_NO_CACHE="1",
            FAKETIME_DONT_FAKE_MONOTONIC="1",
        ) if self.clock else procs.environment()  # fmt: skip
        with open(self.log_path, "ab") as log:  # what it says before its log is open, too
            self.proc = spawn(args, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Ready once the node answers with our password and proves it is our child."""

        def ready() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise self.exited_at_start(f"{self.name} (redis-server)")
            try:
                self._check_pid(timeout_ms=200)
            except (redis.ConnectionError, redis.TimeoutError):
                return False  # not listening yet
            return True

        wait_until(ready, timeout_s, f"{self.name} (redis-server on port {self.port})")

    def check_identity(self) -> None:
        try:
            self._check_pid(timeout_ms=1000)
        except redis.RedisError as exc:
            raise ForeignServer(f"{self.name}: no answer from {self.address}: {exc}") from exc

    def _check_pid(self, timeout_ms: int) -> None:
        """ForeignServer unless the node on our port takes our password and has our child's pid;
        redis-py's connection errors when nothing (or nothing yet) answers."""
        try:
            pid = int(self.client(timeout_ms=timeout_ms).info("server")["process_id"])
        except redis.AuthenticationError as exc:
            raise ForeignServer(f"{self.name}: {self.address} refused its password") from exc
        except redis.ResponseError as exc:  # an AUTH it cannot take: another server
            raise ForeignServer(f"{self.name}: {self.address} answered {exc}") from exc
        ours = self.proc.pid if self.proc is not None else None
        if pid != ours:
            raise ForeignServer(
                f"{self.name}: the Redis on {self.address} is process {pid}, not ours ({ours})"
            )

    def ping(self) -> bool:
        try:
            return bool(self.client(timeout_ms=200).ping())
        except redis.RedisError:
            return False

    def client(self, timeout_ms: int = 1000) -> redis.Redis:
        """The lab's own connection (no retries: a crashed node must fail fast, not back off)."""
        return connect(self.host, self.port, timeout_ms=timeout_ms, password=self.password)

    def jump_clock(self, ms: float) -> float:
        """Move this node's wall clock by ``ms`` (cumulative); returns the total offset."""
        if not self.clock:
            raise LabError(f"{self.name} carries messages: it has no clock to move")
        self.offset_ms += ms
        self._write_clock()
        return self.offset_ms

    def reset_clock(self) -> None:
        self.offset_ms = 0.0
        self._write_clock()

    def _write_clock(self) -> None:
        # Written whole, then renamed: libfaketime reads a half-written file as +0.
        tmp = self.clock_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{self.offset_ms / 1000:+.3f}\n")
        os.replace(tmp, self.clock_file)


@dataclass
class LayerServer(RedisServer):
    """A redis-server that carries messages, not locks: a channel layer's (``serve``'s own, the
    tests' and the benches' shared one). No lease of a run lives on it and nobody moves its
    clock, so it runs without libfaketime (whose ``FAKETIME_NO_CACHE`` reads the clock file at
    every time call) and at Redis's default ``hz`` of 10. Idle, such a server costs about 0.1%
    of a core against a lock node's 0.8% (measured: 3–4 against 24 clock ticks in 30 s), and
    an app's layer idles for as long as the app lives."""

    hz = 10
    clock = False
