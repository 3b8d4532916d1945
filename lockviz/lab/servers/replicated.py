"""Redis-kind servers: plain nodes, or a primary, its replicas and the Sentinels that watch them.

The one module that starts both kinds (``redis-*`` and ``sentinel-*``), because a replicated
set is made whole: each server must know the others' addresses before it starts. Without a
Sentinel among the names a run asks for, its Redis servers are plain, independent nodes
(:mod:`lockviz.lab.servers.redis`: single Redis, Redlock, the storage).

With Sentinels (the backend ``redis-sentinel``): ``redis-1`` starts as the primary and the other
``redis-*`` as its replicas; ``sentinel-1``..``sentinel-3`` (``redis-server --sentinel``) monitor
them as the service ``lockviz`` with a quorum of 2. Every link between them goes through the
lab's proxy, a :class:`~lockviz.lab.links.Mesh`: each server has one *front* that the others
dial (a replica its primary, a Sentinel every node and every other Sentinel), and each pair its
own link (``redis-2>redis-1``, ``sentinel-1>redis-1``), so a partition can cut the primary from
the Sentinels only, or one replica's replication only, one way or both. The servers learn each
other's addresses from each other (a replica announces its own, Sentinels gossip theirs), so
each announces its front (``replica-announce-port``, ``sentinel announce-port``), never its
real port, and a Sentinel names the primary by its front: what a client asks Sentinel for and
gets back, mapped to the server's name (:func:`announced`).

Settings for a teaching lab, every one a real Redis setting: ``sentinel-1`` thinks a node is
down after 2 s without an answer (``down-after-milliseconds 2000``; the default is 30 s),
``sentinel-2`` after 2.5 s and ``sentinel-3`` after 3 s, and a failover has 2 s
(``failover-timeout 2000``). Staggered, because Sentinels that all see the primary down at the
same moment all ask for votes at once and each votes for itself: nobody wins, and the vote is
tried again only after twice the failover timeout (measured: 2 runs in 20 promoted 4 s late). A
Sentinel votes for the first that asks, so with one Sentinel ahead of the others a vote elects.
Not shorter: when a failover changes a node's role, Sentinel closes that node's client
connections (``CLIENT KILL TYPE normal``, the other Sentinels' too), and a Sentinel whose
reconnection, through the lab's proxy on a loaded machine, took longer than 1 s thought the new
primary down; the other Sentinels' votes that the old one was down still counted (for 5 s), so
it failed over a second time (measured: 1 run in 20 with 1 s). Replicas sync without a disk and
at once (``repl-diskless-sync-delay 0``). ``redis-2`` has ``replica-priority 50`` and the others
the default 100: when both can be promoted, Sentinel picks ``redis-2``, whichever holds more
data, so a story can say which replica wins. Each Sentinel starts knowing the replicas and the
other Sentinels (``known-replica``, ``known-sentinel``, as Sentinel writes them into its own
config), and with an id of its own (``myid``), which the lab's watcher maps back to its name.
The variant ``min_replicas`` sets ``min-replicas-to-write 1`` with ``min-replicas-max-lag 2`` on
every node.

All of them share one password (a replica authenticates to its primary, a Sentinel to every
server and to the other Sentinels), written only to their configs (0600, in the run's dir).

Measured on the 2-core dev machine: the set (3 nodes, 3 Sentinels, the proxy) is ready about
0.9 s after launch; a primary killed is replaced about 3 s later (2 s to notice, a vote,
``REPLICAOF NO ONE``, and a second for Sentinel to see the new role).

One module past the usual ~300 lines, on purpose: the nodes and the Sentinels are configured
from one set of facts (their fronts, the Sentinels' ids, one password), read side by side.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from dataclasses import dataclass, field

import redis as redis_py

from algorithms.redis_client import connect
from lockviz.catalogue import SENTINEL, server_kind
from lockviz.lab import procs
from lockviz.lab.backends.redis_sentinel import SERVICE
from lockviz.lab.links import Mesh
from lockviz.lab.ports import free_port
from lockviz.lab.procs import wait_until
from lockviz.lab.servers import redis
from lockviz.lab.servers.base import (
    ForeignServer,
    PrivateServer,
    Requirement,
    Server,
    ServerOptions,
    Spawn,
    new_password,
    write_private,
)
from lockviz.lab.servers.redis import REDIS_BINARY, RedisServer, _quoted

QUORUM = 2
DOWN_AFTER_MS = 2000  # sentinel-1; sentinel-2 and sentinel-3 wait STAGGER_MS and twice it more
STAGGER_MS = 500
FAILOVER_TIMEOUT_MS = 2000
PREFERRED = "redis-2"  # its replica-priority is 50, the others' 100
MIN_REPLICAS_MAX_LAG_S = 2
PROBE = "lockviz:probe"  # the channel the primary publishes on until its replicas are in step
START_TIMEOUT_S = 15.0


def requirements() -> list[Requirement]:
    return redis.requirements()  # Sentinel is redis-server --sentinel


def wipe(host: str, port: int) -> None:
    """An external Redis node, as :mod:`lockviz.lab.servers.redis` wipes it (a replicated set
    is the embedded lab's only: its links and faults need servers it started)."""
    redis.wipe(host, port)


def sentinel_id(name: str, password: str) -> str:
    """A Sentinel's run id (40 hex digits): fixed by its name within its set, unique across
    sets (each set has its own password), so the watcher can map ids back to names."""
    return hashlib.sha1(f"{password}:{name}".encode()).hexdigest()


def create(names: list[str], workdir: str, options: ServerOptions) -> list[Server]:
    sentinels = sorted(n for n in names if server_kind(n) is SENTINEL)
    if not sentinels:
        return list(redis.create(names, workdir, options))
    nodes = sorted(n for n in names if n.startswith("redis-"))
    plain = redis.create(
        [n for n in names if n not in nodes and n not in sentinels], workdir, options
    )
    password = new_password()
    members = [
        ReplicaSetNode(name, os.path.join(workdir, name), port=free_port(), password=password)
        for name in nodes
    ] + [
        SentinelServer(name, os.path.join(workdir, name), port=free_port(), password=password)
        for name in sentinels
    ]  # fmt: skip
    mesh = Mesh({m.name: m.address for m in members})
    mesh.start()
    group = Group(nodes, sentinels, mesh, options.get("min_replicas_to_write", 0))
    for member in members:
        member.group = group
    return [*plain, *members]


@dataclass(frozen=True)
class Group:
    """What the servers of one set know of each other."""

    nodes: list[str]  # redis-1 first: the primary at the start
    sentinels: list[str]
    mesh: Mesh
    min_replicas: int = 0

    def front(self, name: str) -> tuple[str, int]:
        host, _, port = self.mesh.front(name).rpartition(":")
        return host, int(port)


class _Member:
    """What a node and a Sentinel of a set share: the set, and the mesh told of each start."""

    name: str
    group: Group | None

    def _told(self, proc: object) -> None:
        pid = getattr(proc, "pid", None)
        if self.group is not None and isinstance(pid, int):
            self.group.mesh.owner(self.name, pid)

    def group_names(self) -> list[str] | None:
        return None if self.group is None else [*self.group.nodes, *self.group.sentinels]

    def known_as(self) -> str | None:
        return None if self.group is None else self.group.mesh.front(self.name)

    def isolate(self, peers: list[str], mode: str) -> None:
        """Cut (``blackhole``/``reset``) or heal (``pass``) its links with ``peers``, both ways."""
        assert self.group is not None
        for peer in peers:
            self.group.mesh.set(self.name, peer, mode)
            self.group.mesh.set(peer, self.name, mode)

    def set_helpers(self) -> list[subprocess.Popen[bytes]]:
        """The set's proxy, counted once (with the first node)."""
        group = self.group
        if group is None or group.nodes[0] != self.name or group.mesh.proc is None:
            return []
        return [group.mesh.proc]  # type: ignore[list-item]  # a forked child: pid, poll, kill


@dataclass
class ReplicaSetNode(_Member, RedisServer):
    """A Redis node of a replicated set: ``redis-1`` the primary at first, the others its
    replicas (Sentinel moves the role later)."""

    group: Group | None = field(default=None, repr=False)

    def config(self) -> str:
        if os.path.exists(self.config_file):  # a restart: as Redis left it (Sentinel rewrites a
            with open(self.config_file) as f:  # node's config when it moves its role)
                return f.read()
        assert self.group is not None
        host, front = self.group.front(self.name)
        lines = [
            ("masterauth", self.password or ""),
            ("replica-announce-ip", host),
            ("replica-announce-port", str(front)),
            ("replica-priority", "50" if self.name == PREFERRED else "100"),
            ("repl-diskless-sync-delay", "0"),
        ]
        if self.group.min_replicas:
            lines += [
                ("min-replicas-to-write", str(self.group.min_replicas)),
                ("min-replicas-max-lag", str(MIN_REPLICAS_MAX_LAG_S)),
            ]
        if self.name != self.group.nodes[0]:
            host, port = self.group.front(self.group.nodes[0])
            lines.append(("replicaof", f"{host} {port}"))
        return super().config() + "".join(f"{k} {v}\n" for k, v in lines)

    def launch(self, spawn: Spawn = procs.spawn) -> None:
        super().launch(spawn)
        self._told(self.proc)

    def helpers(self) -> list[subprocess.Popen[bytes]]:
        return self.set_helpers()

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Ready once it answers, and, the primary, once every replica receives its writes.

        After a diskless sync a primary streams nothing to a replica until that replica's first
        acknowledgement, which it sends once a second: for up to a second a replica that says
        its link is up, and that the primary lists online, gets no write (measured: 1 write in
        6 missed a replica for 0.6 s). So the primary publishes on a channel of its own (a
        PUBLISH is replicated, and touches no key) until ``WAIT`` says every replica has it."""
        super().wait_ready(timeout_s)
        if self.role() == "primary" and self.group is not None:
            wait_until(self._all_streaming, timeout_s, f"{self.name} (its replicas in step)")

    def _all_streaming(self) -> bool:
        assert self.group is not None
        client = self.client(timeout_ms=1500)
        client.publish(PROBE, "1")
        replicas = len(self.group.nodes) - 1
        return bool(client.execute_command("WAIT", replicas, 200) == replicas)  # type: ignore[no-untyped-call]

    def role(self) -> str | None:
        """``primary`` or ``replica``, as the node says now (None: no answer)."""
        try:
            found = self.client(timeout_ms=500).info("replication").get("role")
        except redis_py.RedisError:
            return None
        return {"master": "primary", "slave": "replica"}.get(str(found))


@dataclass
class SentinelServer(_Member, PrivateServer):
    """One Sentinel (``redis-server <its config> --sentinel``) of a replicated set."""

    group: Group | None = field(default=None, repr=False)

    log_name = "sentinel.log"

    @property
    def config_file(self) -> str:
        return os.path.join(self.workdir, "sentinel.conf")

    def config(self) -> str:
        """sentinel.conf (Sentinel rewrites it as it learns: a restart keeps what it knew)."""
        if os.path.exists(self.config_file):
            with open(self.config_file) as f:
                return f.read()
        assert self.group is not None and self.password is not None
        group, pw = self.group, self.password
        host, front = group.front(self.name)
        primary_host, primary_port = group.front(group.nodes[0])
        lines = [
            f"port {self.port}",
            f"bind {self.host}",
            f"dir {_quoted(self.workdir)}",
            f"logfile {_quoted(self.log_path)}",
            "loglevel warning",
            f"requirepass {pw}",  # clients' and the other Sentinels' password alike
            f"sentinel myid {sentinel_id(self.name, pw)}",
            f"sentinel announce-ip {host}",
            f"sentinel announce-port {front}",
            "sentinel resolve-hostnames no",
            f"sentinel monitor {SERVICE} {primary_host} {primary_port} {QUORUM}",
            f"sentinel auth-pass {SERVICE} {pw}",
            f"sentinel down-after-milliseconds {SERVICE} {self.down_after_ms()}",
            f"sentinel failover-timeout {SERVICE} {FAILOVER_TIMEOUT_MS}",
        ]
        lines += [f"sentinel known-replica {SERVICE} {_at(group, n)}" for n in group.nodes[1:]]
        lines += [
            f"sentinel known-sentinel {SERVICE} {_at(group, other)} {sentinel_id(other, pw)}"
            for other in group.sentinels
            if other != self.name
        ]
        return "\n".join(lines) + "\n"

    def down_after_ms(self) -> int:
        """How long it waits for an answer before it thinks a node down (staggered: see the
        module docstring)."""
        assert self.group is not None
        return DOWN_AFTER_MS + STAGGER_MS * self.group.sentinels.index(self.name)

    def launch(self, spawn: Spawn = procs.spawn) -> None:
        os.makedirs(self.workdir, mode=0o700, exist_ok=True)
        write_private(self.config_file, self.config())
        with open(self.log_path, "ab") as log:
            self.proc = spawn(
                [REDIS_BINARY, self.config_file, "--sentinel"],
                env=procs.environment(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        self._told(self.proc)

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Ready once it answers with our password, proves it is our child, and watches the
        primary with every replica and every other Sentinel known."""
        assert self.group is not None
        replicas, others = len(self.group.nodes) - 1, len(self.group.sentinels) - 1

        def ready() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise self.exited_at_start(f"{self.name} (redis-server --sentinel)")
            try:
                self._check_pid()
                state = self.client().sentinel_master(SERVICE)
            except (redis_py.ConnectionError, redis_py.TimeoutError):
                return False
            return isinstance(state, dict) and bool(
                state.get("flags") == "master"
                and int(state.get("num-slaves", 0)) == replicas
                and int(state.get("num-other-sentinels", 0)) == others
            )

        wait_until(ready, timeout_s, f"{self.name} (Sentinel on port {self.port})")

    def check_identity(self) -> None:
        try:
            self._check_pid()
        except redis_py.RedisError as exc:
            raise ForeignServer(f"{self.name}: no answer from {self.address}: {exc}") from exc

    def role(self) -> str | None:
        return "sentinel"

    def _check_pid(self) -> None:
        try:
            pid = int(self.client().info("server")["process_id"])
        except redis_py.AuthenticationError as exc:
            raise ForeignServer(f"{self.name}: {self.address} refused its password") from exc
        except redis_py.ResponseError as exc:
            raise ForeignServer(f"{self.name}: {self.address} answered {exc}") from exc
        ours = self.proc.pid if self.proc is not None else None
        if pid != ours:
            raise ForeignServer(
                f"{self.name}: the Sentinel on {self.address} is process {pid}, not ours ({ours})"
            )

    def client(self, timeout_ms: int = 500) -> redis_py.Redis:
        return connect(self.host, self.port, timeout_ms=timeout_ms, password=self.password)

    def helpers(self) -> list[subprocess.Popen[bytes]]:
        return self.set_helpers()


def _at(group: Group, name: str) -> str:
    """``host port`` of ``name``'s front, as Sentinel's config writes an address."""
    host, port = group.front(name)
    return f"{host} {port}"
