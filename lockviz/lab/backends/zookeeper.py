"""ZooKeeper: the recipe lock of algorithms.zookeeper_lock, and a watcher of the lock nodes.

Clients. With one server (the default) every client connects to ``zk-1``. With an ensemble
(``zk_nodes: 3``) clients are spread in the scenario's order: alice -> zk-1, bob -> zk-2,
carol -> zk-3, a fourth client -> zk-1 again. Each connection string lists the client's home
server first and the others after it (not shuffled: kazoo's ``randomize_hosts=False``), so a
client whose server dies fails over to the next; the events' ``to``/``from`` name the server it
is talking to at that moment. A lesson's story needs each session on its home: the run says
where that is (``run_started``'s ``homes``), and a session that opened elsewhere all the same
(its home did not answer in time on a busy machine) makes the run inconclusive
(algorithms.checker.premise_lost), never another story told as this one.

The ``election`` variant is a candidate of algorithms.zookeeper_election (kazoo's recipe) on the
same path: its nodes are named as kazoo's, the watcher reads them as lock nodes.

The watcher of the lock nodes is in :mod:`lockviz.lab.watchers.zookeeper`. The storage's
sequencer check has a session of its own, on the servers in their order (zk-1 first).
"""

from __future__ import annotations

from collections.abc import Sequence

from algorithms.clock import Clock
from algorithms.events import EventSink, Reporter
from algorithms.sequencer import ZooKeeperCheck
from algorithms.zookeeper_calls import connect
from algorithms.zookeeper_election import ZooKeeperElection
from algorithms.zookeeper_lock import LOCK_PATH, ZooKeeperLock
from lockviz.lab.backends.parts import lock_parts
from lockviz.lab.config import ClientConfig, StorageServiceConfig

CONNECT_TIMEOUT_MS = 5_000  # a JVM on a busy machine can take a while to answer a new session
CHECK_SESSION_MS = 10_000  # the storage's own session: it is not what the scenario tests
LOCK = LOCK_PATH  # the lock, as its sequencers name it


def homes(clients: Sequence[str], nodes: Sequence[str]) -> dict[str, str]:
    """Each client's home: the server its session opens on, the clients spread in order."""
    return {name: nodes[i % len(nodes)] for i, name in enumerate(clients)}


def home_node(config: ClientConfig) -> str:
    """The server this client talks to first: the clients are spread over the ensemble."""
    return homes(config.clients, config.nodes).get(config.name, config.nodes[0])


def make_lock(config: ClientConfig, clock: Clock, emit: EventSink) -> ZooKeeperLock:
    home = home_node(config)
    order = [home, *(node for node in config.nodes if node != home)]
    client = connect(
        ",".join(config.servers[node] for node in order),
        session_ms=config.ttl_ms,
        timeout_ms=CONNECT_TIMEOUT_MS,
    )
    kind = ZooKeeperElection if config.variant == "election" else ZooKeeperLock
    return kind(
        client,
        LOCK_PATH,
        **lock_parts(config, clock, emit),
        ttl_ms=config.ttl_ms,
        node=home,
        addresses={config.servers[node]: node for node in config.nodes},
        herd=config.variant == "herd",
        keep_suspended=config.variant == "session",
        call_timeout_ms=config.call_timeout_ms,
    )


def make_check(config: StorageServiceConfig, report: Reporter) -> ZooKeeperCheck:
    client = connect(
        ",".join(config.servers[node] for node in config.nodes),
        session_ms=CHECK_SESSION_MS,
        timeout_ms=CONNECT_TIMEOUT_MS,
    )
    return ZooKeeperCheck(
        client, node=config.nodes[0], report=report, timeout_ms=config.call_timeout_ms
    )
