"""etcd: the lease lock of algorithms.etcd_lock on ``etcd-1``, or (the ``election`` variant)
a candidate of algorithms.etcd_election; on one member, or on a cluster of three.

In a cluster (``etcd_nodes: 3``) the clients are spread in the scenario's order, as ZooKeeper's
are: alice -> etcd-1, bob -> etcd-2, carol -> etcd-3; each client's gateway knows the other
members too, and moves on to the next when its member stops answering.

The lab's keys live under ``lockviz/``: etcd's lock service queues lock keys under
``lockviz/lock/<lease>``, and holders record their name under ``lockviz/owners/<lease>`` with
the same lease (the watcher, :mod:`lockviz.lab.watchers.etcd`, reads both). An election named
``lockviz/lock`` keeps its candidates' keys in the very same place (etcd names both after the
lease), and its leader records its name there too: one watcher follows either, and the storage's
sequencer check asks about a leader's key as about a holder's.
"""

from __future__ import annotations

from algorithms.clock import Clock
from algorithms.etcd_election import EtcdElection
from algorithms.etcd_gateway import Gateway
from algorithms.etcd_lock import EtcdLock
from algorithms.events import EventSink, Reporter
from algorithms.sequencer import EtcdCheck
from lockviz.lab.backends.parts import lock_parts
from lockviz.lab.config import ClientConfig, StorageServiceConfig

LAB_PREFIX = "lockviz/"  # every key the lab's etcd locks write lives under this prefix
LOCK_NAME = LAB_PREFIX + "lock"  # etcd's lock service queues keys under "lockviz/lock/"
LOCK_PREFIX = LOCK_NAME + "/"
OWNERS = LAB_PREFIX + "owners/"
LOCK = LOCK_NAME  # the lock, as its sequencers name it


def gateway(config: ClientConfig | StorageServiceConfig, home: str) -> Gateway:
    """A gateway to ``home`` first, then to the other members in their order."""
    order = [home, *(node for node in config.nodes if node != home)]
    others = [(node, *config.address(node)) for node in order[1:]]
    host, port = config.address(home)
    return Gateway(host, port, node=home, timeout_ms=config.call_timeout_ms, others=others)


def home_node(config: ClientConfig) -> str:
    """The member this client talks to first: the clients are spread over the cluster."""
    nodes, clients = config.nodes, config.clients
    return nodes[clients.index(config.name) % len(nodes)] if config.name in clients else nodes[0]


def make_lock(config: ClientConfig, clock: Clock, emit: EventSink) -> EtcdLock:
    kind = EtcdElection if config.variant == "election" else EtcdLock
    return kind(
        gateway(config, home_node(config)),
        LOCK_NAME,
        **lock_parts(config, clock, emit),
        ttl_ms=config.ttl_ms,
        owner_prefix=OWNERS,
    )


def make_check(config: StorageServiceConfig, report: Reporter) -> EtcdCheck:
    return EtcdCheck(gateway(config, config.nodes[0]), report=report)
