"""ZooKeeper: the recipe lock of algorithms.zookeeper_lock, and a watcher of the lock nodes.

Clients. With one server (the default) every client connects to ``zk-1``. With an ensemble
(``zk_nodes: 3``) clients are spread in the scenario's order: alice -> zk-1, bob -> zk-2,
carol -> zk-3, a fourth client -> zk-1 again. Each connection string lists the client's home
server first and the others after it (not shuffled), so a client whose server dies fails over
to the next; the events' ``to``/``from`` name the server it is talking to at that moment.

The watcher of the lock nodes is in :mod:`lockviz.lab.watchers.zookeeper`.
"""

from __future__ import annotations

from algorithms.clock import Clock
from algorithms.events import EventSink
from algorithms.zookeeper_lock import LOCK_PATH, ZooKeeperLock, connect
from lockviz.lab.config import ClientConfig

CONNECT_TIMEOUT_MS = 5_000  # a JVM on a busy machine can take a while to answer a new session


def home_node(config: ClientConfig) -> str:
    """The server this client talks to first: the clients are spread over the ensemble."""
    nodes, clients = config.nodes, config.clients
    return nodes[clients.index(config.name) % len(nodes)] if config.name in clients else nodes[0]


def make_lock(config: ClientConfig, clock: Clock, emit: EventSink) -> ZooKeeperLock:
    home = home_node(config)
    order = [home, *(node for node in config.nodes if node != home)]
    client = connect(
        ",".join(config.servers[node] for node in order),
        session_ms=config.ttl_ms,
        timeout_ms=CONNECT_TIMEOUT_MS,
    )
    return ZooKeeperLock(
        client,
        LOCK_PATH,
        owner=config.name,
        ttl_ms=config.ttl_ms,
        node=home,
        addresses={config.servers[node]: node for node in config.nodes},
        clock=clock,
        on_event=emit,
        herd=config.variant == "herd",
        call_timeout_ms=config.call_timeout_ms,
    )
