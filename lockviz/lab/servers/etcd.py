"""etcd members on loopback: one (``etcd-1``), or a cluster of three; Debian's ``etcd-server``.

What the lab relies on (etcd 3.4, measured here): the v3 API is served as JSON over plain HTTP
by the built-in gRPC gateway under ``/v3/...`` on the client port, so neither the lab nor the
lock needs a gRPC library; ``GET /health`` answers ``{"health":"true"}`` once the member has
elected itself leader: 0.25 to 0.95 s after exec (median 0.7 s over 10 starts on a loaded 2-core
machine; ``start_ms`` keeps each start's figure). etcd 3.4 has no ``--unsafe-no-fsync``: every
write is fsynced to the data dir in the run's temp dir, a few milliseconds per write.

The member keeps etcd's default election timeout (1 s), so the smallest lease etcd grants is
2 s (1.5 election timeouts, rounded up to whole seconds): scenarios see etcd's real limits.
A restart reuses the data dir and ports, so revisions (the fencing tokens) keep increasing.

A cluster (``etcd_nodes: 3``): every member's peer traffic goes through the lab's proxy, a
:class:`~lockviz.lab.links.Mesh`. A member dials each peer at the peer URL the cluster keeps in
its own membership (the same for every member: etcd derives the cluster's id from them, so no
member can be given a different address for a peer), so each member advertises one front and
each pair has its own link there (``etcd-1>etcd-3``): a partition can cut the leader from one
peer or from both. Once the members are up, the lab hands the leadership to ``etcd-3``
(``MoveLeader``), as ZooKeeper's highest id leads its ensemble, so a story can name the leader.
A new leader renews every lease it inherits: etcd 3.4 restarts a lease's countdown from its full
TTL (plus a grace of an election) on a leader change; it checkpoints what is left of a lease only
behind ``--experimental-enable-lease-checkpoint``, and then every five minutes, so in a run the
full TTL is what a learner sees. Measured here: a killed leader is replaced in about 1.2 s.

Before use the lab checks that the member answering on the client port is its own: the member
list names it (``etcd-1``) and Go's ``/debug/vars`` shows the command line it runs with, whose
``--data-dir`` is this server's. The member has no password (the lab's Redis and PostgreSQL
do): other local users can reach it, but it runs no code for them and holds only lock keys.

One module past the usual ~300 lines, on purpose: one member and a cluster (its mesh, its
leader) start from one command line, read side by side.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import shutil
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field

from lockviz.jsontypes import JsonObject, JsonValue
from lockviz.lab import procs
from lockviz.lab.backends.etcd import LAB_PREFIX
from lockviz.lab.errors import LabError
from lockviz.lab.links import Mesh
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


LEADER = "etcd-3"  # the member a cluster's leadership is handed to once it is up


def create(names: list[str], workdir: str, options: ServerOptions) -> list[EtcdServer]:
    if len(names) not in (1, 3):
        raise LabError(f"the lab runs one etcd member or three, not {len(names)}")
    members = [
        EtcdServer(name, os.path.join(workdir, name), port=free_port(), peer_port=free_port())
        for name in sorted(names)
    ]
    if len(members) > 1:
        mesh = Mesh({m.name: f"{m.host}:{m.peer_port}" for m in members})
        mesh.start()
        token = secrets.token_hex(8)  # no member of another set can join this cluster
        for member in members:
            member.mesh, member.members, member.token = mesh, [m.name for m in members], token
    return members


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
    mesh: Mesh | None = field(default=None, repr=False)  # a cluster's peer links
    members: list[str] = field(default_factory=list)  # a cluster's members, itself included
    token: str = "lockviz"  # a cluster's --initial-cluster-token

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
        cluster = f"{self.name}={peer_url}"
        advertised = peer_url
        if self.mesh is not None:  # peers dial its front, and it dials theirs
            advertised = f"http://{self.mesh.front(self.name)}"
            cluster = ",".join(f"{m}=http://{self.mesh.front(m)}" for m in self.members)
        args = [
            ETCD_BINARY,
            "--name", self.name,
            "--data-dir", self.data_dir,
            "--listen-client-urls", client_url,
            "--advertise-client-urls", client_url,
            "--listen-peer-urls", peer_url,
            "--initial-advertise-peer-urls", advertised,
            "--initial-cluster", cluster,
            "--initial-cluster-token", self.token,
            "--snapshot-count", "5000",  # keeps the in-memory raft log short
            "--logger", "zap",
            "--log-level", "warn",
            "--log-outputs", "stderr",
        ]  # fmt: skip
        self.launched_ns = time.monotonic_ns()
        with open(self.log_path, "ab") as log:
            self.proc = spawn(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        if self.mesh is not None:
            self.mesh.owner(self.name, self.proc.pid)

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Ready once it is healthy (its cluster has a leader) and proves it is ours; a cluster's
        ``etcd-3`` then takes the lead."""

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
        if self.name == LEADER and self.mesh is not None and self.role() != "leader":
            self._take_the_lead(timeout_s)
        self.start_ms = (time.monotonic_ns() - self.launched_ns) / 1e6

    def _take_the_lead(self, timeout_s: float) -> None:
        """Ask the cluster's leader to hand its leadership to this member (``MoveLeader``),
        again every half second until it leads (a busy member may not answer at once)."""
        asked = [0.0]

        def leads() -> bool:
            if self.role() == "leader":
                return True
            if time.monotonic() - asked[0] >= 0.5:
                asked[0] = time.monotonic()
                self._ask_the_leader()
            return False

        wait_until(leads, timeout_s, f"{self.name} (taking the lead)")

    def _ask_the_leader(self) -> None:
        me, leader = _member_id(self._status()), self._leader()
        try:
            for member in self._member_urls():
                host, _, port = member.removeprefix("http://").rpartition(":")
                if me is not None and _member_id(self._status(host, int(port))) == leader:
                    body: JsonObject = {"targetID": me}
                    post(host, int(port), "/v3/maintenance/transfer-leadership", body)
                    return
        except (OSError, ValueError):
            return  # asked again on the next round

    def _status(self, host: str | None = None, port: int | None = None) -> JsonObject:
        try:
            return post(host or self.host, port or self.port, "/v3/maintenance/status", {})
        except (OSError, ValueError):
            return {}

    def _leader(self) -> JsonValue:
        return self._status().get("leader")

    def _member_urls(self) -> list[str]:
        listed = post(self.host, self.port, "/v3/cluster/member/list", {}).get("members")
        members = [m for m in (listed if isinstance(listed, list) else []) if isinstance(m, dict)]
        urls = [m.get("clientURLs") for m in members]
        return [str(u[0]) for u in urls if isinstance(u, list) and u]

    def role(self) -> str | None:
        """``leader`` or ``follower`` in a cluster (None: a single member, or no answer)."""
        if self.mesh is None:
            return None
        status = self._status()
        me = _member_id(status)
        if me is None or not status.get("leader"):
            return None
        return "leader" if status.get("leader") == me else "follower"

    def helpers(self) -> list[subprocess.Popen[bytes]]:
        """The cluster's proxy, counted once (with the first member)."""
        mesh = self.mesh
        first = bool(self.members) and self.members[0] == self.name
        return [mesh.proc] if mesh is not None and first and mesh.proc else []  # type: ignore[list-item]

    def isolate(self, peers: list[str], mode: str) -> None:
        """Cut (``blackhole``/``reset``) or heal (``pass``) its peer links with ``peers``."""
        if self.mesh is None:
            raise LabError(f"{self.name} is a single member: it has no peers to cut")
        for peer in peers:
            self.mesh.set(self.name, peer, mode)
            self.mesh.set(peer, self.name, mode)

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


def _member_id(status: JsonObject) -> JsonValue:
    """The id of the member that answered with ``status`` (None: no answer)."""
    header = status.get("header")
    return header.get("member_id") if isinstance(header, dict) else None
