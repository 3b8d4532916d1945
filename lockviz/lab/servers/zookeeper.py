"""ZooKeeper servers (``zk-1`` alone, or ``zk-1``..``zk-3`` as an ensemble) from Debian's jars.

Each server is one JVM running ``QuorumPeerMain`` with a config of its own in the run's temp
dir. ``tickTime`` is 100 ms (the default is 2 s) and ``minSessionTimeout`` 200 ms, so a scenario
can give a client a session of 1-2 s and watch it expire while the client is frozen. The txn
log is not fsynced (``forceSync=no``) unless the scenario asks for ``persistence: fsync``: a
kill -9 of the JVM still keeps what it wrote in the OS page cache, and a loaded disk no longer
stretches every write.

Measured on the 2-core dev machine (load average ~3): a standalone server serves 0.4-0.5 s
after spawn (~56 MiB resident); a 3-node ensemble on loopback elects a leader and serves in
1.0-1.9 s (~62 MiB per JVM). Stopping takes ~0.4 s per JVM (SIGTERM, shutdown hooks).
``ruok`` answers ``imok`` before the server serves requests, so readiness is a ``srvr`` reply
that names a ``Mode:`` (standalone, leader or follower; a node without quorum says it is "not
currently serving requests"). An ensemble is ready once its highest id (``zk-3``) leads, as an
ensemble started together elects it, so that a story can name its leader; on a busy machine
the first election sometimes goes to another (``zk-3`` started late), which is then restarted.

Fails by: a missing ``java`` or jar (see :func:`requirements`), a port taken between choosing it
and the JVM binding it (the server exits at start, and the lab starts the servers again on other
ports), or an ensemble that cannot form a quorum within the start timeout.

A spare (lockviz.lab.spares) is warmed before it is handed out (:meth:`ZooKeeperServer.
warm_up`): a fresh JVM serves its first sessions and requests in the interpreter, loading the
classes of its request path as it goes, and a ZooKeeper run's start waits for three sessions
(the watcher's and each client's): on a loaded 2-core machine a run's start on a never-used
server took 370 ms at the median, against 232 ms on one that had served a session before (load
~23, 5 runs each). The warm-up opens a session on each server and does what a run's clients do
(an ephemeral sequential node created, listed, watched, deleted) under a path of its own that it
removes again (``/lockviz/warm-up-<name>``); it also makes ``/lockviz/lock``, as every run's
watcher does first. The lock's sequence numbers start where a fresh server's do; the zxids (a
czxid is the fencing token) are a few transactions further on, as after any session.

Before use the lab checks that the server answering on the client port is its own: the ``conf``
four-letter word (whitelisted with ``srvr``, ``ruok``, ``stat`` and ``dump``) names its
``dataDir``, which must be this server's. The servers have no password (the lab's Redis and
PostgreSQL do): other local users can reach them, but they run no code for them and hold only
the lab's lock nodes.

One module past the usual ~300 lines, on purpose: a standalone server and an ensemble (its
mesh, its leader) start from one config, read side by side.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
from dataclasses import dataclass, field

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException, NoNodeError
from kazoo.retry import KazooRetry

from algorithms.zookeeper_lock import LOCK_PATH
from lockviz.lab import procs
from lockviz.lab.errors import LabError
from lockviz.lab.links import Links
from lockviz.lab.ports import free_port, split_address
from lockviz.lab.procs import wait_until
from lockviz.lab.servers.base import (
    ForeignServer,
    LocalServer,
    Requirement,
    ServerOptions,
    Spawn,
)

JAVA = "java"
ZK_JAR = "/usr/share/java/zookeeper.jar"
# zookeeper.jar's manifest lists its dependencies (netty, jute, slf4j-api...) by absolute path;
# slf4j needs a binding on top, or it drops every log line and warns about it.
LOG_BINDING_JARS = ("/usr/share/java/slf4j-simple.jar",)
MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
JVM_OPTIONS = [
    "-Xmx128m",
    "-XX:+UseSerialGC",  # no parallel GC threads: three JVMs share two cores with the rest
    # The quick compiler only: a lab server lives seconds to minutes under a few requests a
    # second, never long enough for C2's optimised code to pay for compiling it. A start and
    # stop cost 0.58-0.67 CPU-s against 0.43-0.48 with it (six each, alternately, load ~12).
    "-XX:TieredStopAtLevel=1",
    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
]
TICK_MS = 100
START_TIMEOUT_S = 30.0
# Handing the lead to the highest id is an election, then the followers' sync (up to initLimit,
# 10 s, each), which a loaded machine may have to do twice: a start's worth is too little
# (CI: "zk-3 leading did not become ready within 30 s", load 15-25).
HANDOVER_TIMEOUT_S = 60.0
# How long a readiness probe waits for `srvr`'s answer. A JVM electing or syncing on a loaded
# machine answers in well over 0.2 s, and a probe that gave up sooner read a leader as down.
PROBE_S = 2.0
PROBE_EVERY_S = 0.05  # not every 5 ms: each probe is a connection the electing JVM must serve
LAB_ROOT = "/lockviz"  # everything a run creates lives under this path
MARKER = "/lockviz-marker"  # a server set aside for lockviz carries this node (see wipe)
WARM_SESSION_S = 10.0  # closed at its end: long enough for a loaded machine


def requirements() -> list[Requirement]:
    return [
        Requirement("java", shutil.which(JAVA), "default-jre-headless"),
        Requirement("ZooKeeper's jar", ZK_JAR if os.path.exists(ZK_JAR) else None, "zookeeper"),
    ]


def classpath() -> str:
    return ":".join([ZK_JAR, *(jar for jar in LOG_BINDING_JARS if glob.glob(jar))])


def create(names: list[str], workdir: str, options: ServerOptions) -> list[ZooKeeperServer]:
    """One standalone server, or an ensemble of all ``names`` (each knows every peer)."""
    fsync = options.get("persistence", "none") == "fsync"
    servers = [
        ZooKeeperServer(
            name,
            os.path.join(workdir, name),
            myid=i,
            port=free_port(),
            peer_port=free_port(),
            election_port=free_port(),
            fsync=fsync,
        )
        for i, name in enumerate(sorted(names), start=1)
    ]
    if len(servers) > 1:
        mesh = _mesh(servers)
        for server in servers:
            server.mesh = mesh
            server.peers = [server.peer_entry(s) for s in servers]
            server.ensemble = servers
    return servers


def _mesh(servers: list[ZooKeeperServer]) -> Links:
    """A proxy on every server-to-server link, so a server can be cut off from its peers.

    Each server reaches each peer's quorum and election ports through its own link
    (``zk-3>zk-1:peer``); its own entry in zoo.cfg keeps its real ports, which it listens on.
    """
    targets = {}
    for s in servers:
        targets[f"{s.name}:peer"] = f"{s.host}:{s.peer_port}"
        targets[f"{s.name}:election"] = f"{s.host}:{s.election_port}"
    # Only the leader listens on the quorum ("peer") port, once elected: a follower's
    # connection there waits for it rather than being reset (lockviz.lab.children.proxy, "patient").
    mesh = Links([s.name for s in servers], targets, patient=[f"{s.name}:peer" for s in servers])
    mesh.start()
    return mesh


def wipe(host: str, port: int) -> None:
    """Delete what earlier runs left under ``/lockviz`` on a server the lab does not own."""
    client = KazooClient(
        hosts=f"{host}:{port}",
        timeout=5.0,
        connection_retry=KazooRetry(max_tries=3, delay=0.1, max_delay=0.5),
        command_retry=KazooRetry(max_tries=3, delay=0.1, max_delay=0.5),
    )
    try:
        client.start(timeout=5)
        if client.exists(MARKER) is None:
            raise LabError(
                f"ZooKeeper at {host}:{port} is not marked as lockviz's (no node {MARKER}): "
                f"lockviz deletes what earlier runs left, so it only uses a server set aside "
                f"for it: create {MARKER}"
            )
        client.retry(client.delete, LAB_ROOT, recursive=True)
    except NoNodeError:
        pass
    except (KazooException, client.handler.timeout_exception) as exc:
        raise LabError(f"cannot wipe ZooKeeper at {host}:{port}: {exc!r}") from exc
    finally:
        client.stop()
        client.close()


def four_letter(host: str, port: int, command: str, timeout_s: float = 0.5) -> str:
    """Send a four-letter-word command (``srvr``, ``dump``); ``""`` if the server is down."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as sock:
            sock.sendall(command.encode())
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
    except OSError:
        return ""
    return b"".join(chunks).decode(errors="replace")


@dataclass
class ZooKeeperServer(LocalServer):
    """One ZooKeeper JVM with its own config, data dir and ports."""

    myid: int = 1
    peer_port: int = 0
    election_port: int = 0
    fsync: bool = False
    peers: list[tuple[int, int, int]] = field(default_factory=list)  # empty: standalone
    mesh: Links | None = None  # the proxies between the servers of an ensemble
    ensemble: list[ZooKeeperServer] = field(default_factory=list, repr=False)  # itself included

    def peer_entry(self, other: ZooKeeperServer) -> tuple[int, int, int]:
        """How this server reaches ``other``: its real ports for itself, else through the mesh."""
        if other is self or self.mesh is None:
            return (other.myid, other.peer_port, other.election_port)
        routes = self.mesh.addresses_for(self.name)
        _, peer = split_address(routes[f"{other.name}:peer"])
        _, election = split_address(routes[f"{other.name}:election"])
        return (other.myid, peer, election)

    def isolate(self, peers: list[str], mode: str) -> None:
        """Cut (``blackhole``/``reset``) or heal (``pass``) this server's links to ``peers``."""
        if self.mesh is None:
            raise LabError(f"{self.name} is a standalone server: it has no peers to cut")
        for peer in peers:
            for kind in ("peer", "election"):
                self.mesh.set(self.name, f"{peer}:{kind}", mode)
                self.mesh.set(peer, f"{self.name}:{kind}", mode)

    log_name = "zookeeper.log"

    @property
    def data_dir(self) -> str:
        return os.path.join(self.workdir, "data")

    def ports(self) -> list[int]:
        return [self.port, self.peer_port, self.election_port] if self.peers else [self.port]

    def helpers(self) -> list[subprocess.Popen[bytes]]:
        """The ensemble's proxy mesh, counted once (with the first server)."""
        mesh = self.mesh.proc if self.mesh is not None and self.myid == 1 else None
        return [mesh] if mesh is not None else []  # type: ignore[list-item]

    def config(self) -> str:
        lines = [
            f"tickTime={TICK_MS}",
            "minSessionTimeout=200",
            "maxSessionTimeout=60000",
            "initLimit=100",  # ticks: 10 s for a follower to sync with a leader on a busy box
            "syncLimit=30",  # ticks: a follower 3 s behind is dropped
            f"dataDir={self.data_dir}",
            f"clientPort={self.port}",
            f"clientPortAddress={self.host}",
            f"forceSync={'yes' if self.fsync else 'no'}",
            "preAllocSize=4096",  # KiB; the default 64 MiB per txn log file is a waste here
            "admin.enableServer=false",
            # dump lets the lab's watcher tell a session expiry from an owner's delete
            # conf names the dataDir: how the lab knows the server on a port is its own
            "4lw.commands.whitelist=srvr,ruok,stat,dump,conf",
        ]
        lines += [f"server.{i}={self.host}:{peer}:{election}" for i, peer, election in self.peers]
        return "\n".join(lines) + "\n"

    def launch(self, spawn: Spawn = procs.spawn) -> None:
        """Start the JVM (without waiting for it to serve). Data survives a relaunch."""
        data = self.data_dir
        os.makedirs(self.workdir, mode=0o700, exist_ok=True)
        os.makedirs(data, mode=0o700, exist_ok=True)
        cfg = os.path.join(self.workdir, "zoo.cfg")
        with open(cfg, "w") as f:
            f.write(self.config())
        with open(os.path.join(data, "myid"), "w") as f:
            f.write(f"{self.myid}\n")
        with open(self.log_path, "ab") as log:
            self.proc = spawn(
                [JAVA, *JVM_OPTIONS, "-cp", classpath(), MAIN_CLASS, cfg],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.workdir,
            )

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """Ready once it serves (standalone, or in an ensemble with a quorum) and proves it is
        ours."""

        def ready() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise self.exited_at_start(f"{self.name} (ZooKeeper)")
            if self.mode(PROBE_S) is None:
                return False
            found = self._reported_data_dir()
            if found is not None:
                self._compare_data_dir(found)
            return found is not None

        wait_until(ready, timeout_s, f"{self.name} (ZooKeeper on port {self.port})", PROBE_EVERY_S)
        if self.ensemble and self is self.ensemble[-1]:
            self._take_the_lead(timeout_s)

    def _take_the_lead(self, timeout_s: float) -> None:
        """Make the highest id the leader, as an ensemble started together elects it: when
        another server won the first election (the highest started late on a busy machine),
        that leader is restarted; the others elect the highest, and it rejoins as a follower."""
        leaders: list[ZooKeeperServer] = []

        def found() -> bool:  # a busy server may not answer at once: ask until one leads
            leaders[:] = [s for s in self.ensemble if s.mode(PROBE_S) == "leader"]
            return bool(leaders)

        names = ", ".join(s.name for s in self.ensemble)
        wait_until(found, timeout_s, f"a leader of {names}", PROBE_EVERY_S)
        other = leaders[0]
        if other is self:
            return
        other.kill()
        handover = max(timeout_s, HANDOVER_TIMEOUT_S)

        def leads() -> bool:
            return self.mode(PROBE_S) == "leader"

        wait_until(leads, handover, f"{self.name} leading", PROBE_EVERY_S)
        other.launch()
        other.wait_ready(timeout_s)

    def warm_up(self, timeout_s: float = START_TIMEOUT_S) -> None:
        """A session on this server alone, and the requests a run's clients make (see the
        module's doc): created, listed with a watch, fired, deleted; each tried again after a
        lost connection (a loaded machine's just-elected ensemble drops one at times).
        LabError if it still fails."""
        retry = KazooRetry(max_tries=5, delay=0.1, max_delay=1.0)
        client = KazooClient(
            hosts=self.address,
            timeout=WARM_SESSION_S,
            connection_retry=KazooRetry(max_tries=5, delay=0.1, max_delay=1.0),
            command_retry=retry,
        )
        place = f"{LAB_ROOT}/warm-up-{self.name}"  # never under the lock's path: its own

        def requests() -> None:
            client.ensure_path(LOCK_PATH)
            client.ensure_path(place)
            node = client.create(f"{place}/n-", ephemeral=True, sequence=True)
            client.exists(node, watch=lambda event: None)
            client.get_children(place, watch=lambda event: None)
            client.get_children(LOCK_PATH)
            client.delete(place, recursive=True)  # its node (and one a lost try left)

        try:
            client.start(timeout=timeout_s)
            client.retry(requests)
        except (KazooException, client.handler.timeout_exception) as exc:
            raise LabError(f"{self.name} did not serve its warm-up session: {exc!r}") from exc
        finally:
            client.stop()
            client.close()

    def check_identity(self) -> None:
        found = self._reported_data_dir(timeout_s=2.0)
        if found is None:
            raise ForeignServer(f"{self.name}: no answer to `conf` from {self.address}")
        self._compare_data_dir(found)

    def _reported_data_dir(self, timeout_s: float = 0.5) -> str | None:
        """The ``dataDir`` the server on our port reports (``None``: no answer)."""
        for line in four_letter(self.host, self.port, "conf", timeout_s).splitlines():
            if line.startswith("dataDir="):
                return line.split("=", 1)[1]
        return None

    def _compare_data_dir(self, found: str) -> None:
        # It reports where it keeps its snapshots: <dataDir>/version-2.
        if os.path.dirname(os.path.realpath(found)) != os.path.realpath(self.data_dir):
            raise ForeignServer(
                f"{self.name}: the ZooKeeper on {self.address} keeps its data in {found}, "
                f"not in {self.data_dir}"
            )

    def role(self) -> str | None:
        """``leader`` or ``follower`` in an ensemble (None: standalone, or not serving)."""
        found = self.mode()
        return found if found in ("leader", "follower") else None

    def mode(self, timeout_s: float = 0.2) -> str | None:
        """``standalone``, ``leader`` or ``follower`` while serving; ``None`` otherwise (or
        with no answer within ``timeout_s``)."""
        for line in four_letter(self.host, self.port, "srvr", timeout_s).splitlines():
            if line.startswith("Mode:"):
                return line.split(":", 1)[1].strip()
        return None
