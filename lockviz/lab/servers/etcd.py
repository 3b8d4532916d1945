"""A single etcd member (``etcd-1``) on loopback: Debian's ``etcd-server``, one process.

What the lab relies on (etcd 3.4, measured here): the v3 API is served as JSON over plain HTTP
by the built-in gRPC gateway under ``/v3/...`` on the client port, so neither the lab nor the
lock needs a gRPC library; ``GET /health`` answers ``{"health":"true"}`` once the member has
elected itself leader: 0.25 to 0.95 s after exec (median 0.7 s over 10 starts on a loaded 2-core
machine; ``start_ms`` keeps each start's figure). etcd 3.4 has no ``--unsafe-no-fsync``: every
write is fsynced to the data dir in the run's temp dir, a few milliseconds per write.

The member keeps etcd's default election timeout (1 s), so the smallest lease etcd grants is
2 s (1.5 election timeouts, rounded up to whole seconds): scenarios see etcd's real limits.
A restart reuses the data dir and ports, so revisions (the fencing tokens) keep increasing.

Before use the lab checks that the member answering on the client port is its own: the member
list names it (``etcd-1``) and Go's ``/debug/vars`` shows the command line it runs with, whose
``--data-dir`` is this server's. The member has no password (the lab's Redis and PostgreSQL
do): other local users can reach it, but it runs no code for them and holds only lock keys.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field

from lockviz.jsontypes import JsonObject
from lockviz.lab import procs
from lockviz.lab.backends.etcd import LAB_PREFIX
from lockviz.lab.errors import LabError
from lockviz.lab.ports import free_port
from lockviz.lab.procs import wait_until
from lockviz.lab.servers.base import (
    ForeignServer,
    LocalServer,
    Requirement,
    ServerOptions,
    Spawn,
)

ETCD_BINARY = "etcd"
START_TIMEOUT_S = 20.0


def requirements() -> list[Requirement]:
    return [Requirement("etcd", shutil.which(ETCD_BINARY), "etcd-server")]


def create(names: list[str], workdir: str, options: ServerOptions) -> list[EtcdServer]:
    if len(names) != 1:
        raise LabError(f"the lab runs one etcd member, not {len(names)} ({', '.join(names)})")
    return [EtcdServer(name, os.path.join(workdir, name)) for name in names]


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def prefix_end(prefix: str) -> str:
    """The ``range_end`` that makes a range cover every key starting with ``prefix``."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


def post(host: str, port: int, path: str, body: JsonObject, timeout_s: float = 2.0) -> JsonObject:
    """One request to the JSON gateway; the decoded answer."""
    request = urllib.request.Request(
        f"http://{host}:{port}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=timeout_s) as response:
        answer = json.loads(response.read() or b"{}")
    return answer if isinstance(answer, dict) else {}


MARKER = "lockviz-marker"  # a server set aside for lockviz carries this key (see wipe)


def wipe(host: str, port: int) -> None:
    """Delete every key of the lab's prefix (a lock left by a previous run included), on a
    server marked as lockviz's only."""
    if not post(host, port, "/v3/kv/range", {"key": _b64(MARKER)}).get("kvs"):
        raise LabError(
            f"etcd at {host}:{port} is not marked as lockviz's (no key {MARKER}): lockviz "
            f"deletes what earlier runs left, so it only uses a server set aside for it: "
            f"etcdctl put {MARKER} 1"
        )
    body: JsonObject = {"key": _b64(LAB_PREFIX), "range_end": _b64(prefix_end(LAB_PREFIX))}
    post(host, port, "/v3/kv/deleterange", body)


def _flag(cmdline: list[str], name: str) -> str | None:
    """The value of ``--name value`` or ``--name=value`` in a command line."""
    for i, arg in enumerate(cmdline):
        if arg == name and i + 1 < len(cmdline):
            return str(cmdline[i + 1])
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _same_path(found: str, ours: str) -> bool:
    return os.path.realpath(found) == os.path.realpath(ours)


@dataclass
class EtcdServer(LocalServer):
    """One etcd child process with its own client port, peer port and data dir (no faked clock:
    lease expiry runs on etcd's monotonic timers)."""

    peer_port: int = 0
    start_ms: float | None = None  # how long the last start took, from exec to healthy
    launched_ns: int = field(default=0, repr=False)

    log_name = "etcd.log"

    @property
    def data_dir(self) -> str:
        return os.path.join(self.workdir, "data")

    def ports(self) -> list[int]:
        return [self.port, self.peer_port]

    def launch(self, spawn: Spawn = procs.spawn) -> None:
        """Start the process (without waiting for it to serve)."""
        os.makedirs(self.workdir, mode=0o700, exist_ok=True)
        self.port = self.port or free_port()
        self.peer_port = self.peer_port or free_port()
        client_url = f"http://{self.host}:{self.port}"
        peer_url = f"http://{self.host}:{self.peer_port}"
        args = [
            ETCD_BINARY,
            "--name", self.name,
            "--data-dir", self.data_dir,
            "--listen-client-urls", client_url,
            "--advertise-client-urls", client_url,
            "--listen-peer-urls", peer_url,
            "--initial-advertise-peer-urls", peer_url,
            "--initial-cluster", f"{self.name}={peer_url}",
            "--snapshot-count", "5000",  # keeps the in-memory raft log short
            "--logger", "zap",
            "--log-level", "warn",
            "--log-outputs", "stderr",
        ]  # fmt: skip
        self.launched_ns = time.monotonic_ns()
        with open(self.log_path, "ab") as log:
            self.proc = spawn(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log)

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Ready once it is healthy (it leads its one-member cluster) and proves it is ours."""

        def ready() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise self.exited_at_start(f"{self.name} (etcd)")
            if not self.healthy():
                return False
            try:
                self._compare(*self._identity())
            except (OSError, ValueError):
                return False  # no answer (yet)
            return True

        wait_until(ready, timeout_s, f"{self.name} (etcd on port {self.port})")
        self.start_ms = (time.monotonic_ns() - self.launched_ns) / 1e6

    def check_identity(self) -> None:
        try:
            found = self._identity()
        except (OSError, ValueError) as exc:
            raise ForeignServer(
                f"{self.name}: no answer as etcd from {self.address}: {exc}"
            ) from exc
        self._compare(*found)

    def _identity(self) -> tuple[list[str], str | None]:
        """The names of the member answering on our port, and its ``--data-dir``."""
        members = post(self.host, self.port, "/v3/cluster/member/list", {})
        url = f"http://{self.host}:{self.port}/debug/vars"
        with urllib.request.urlopen(url, timeout=2) as response:
            cmdline = [str(arg) for arg in json.loads(response.read()).get("cmdline", [])]
        header, listed = members.get("header"), members.get("members")
        me = header.get("member_id") if isinstance(header, dict) else None
        names = [
            str(m.get("name"))
            for m in (listed if isinstance(listed, list) else [])
            if isinstance(m, dict) and m.get("ID") == me
        ]
        return names, _flag(cmdline, "--data-dir")

    def _compare(self, names: list[str], data_dir: str | None) -> None:
        if names != [self.name] or data_dir is None or not _same_path(data_dir, self.data_dir):
            raise ForeignServer(
                f"{self.name}: the etcd on {self.address} is member {names} with data dir "
                f"{data_dir}, not {self.name} in {self.data_dir}"
            )

    def healthy(self) -> bool:
        try:
            url = f"http://{self.host}:{self.port}/health"
            with urllib.request.urlopen(url, timeout=0.5) as response:
                return bool(json.loads(response.read()).get("health") == "true")
        except (OSError, ValueError):
            return False
