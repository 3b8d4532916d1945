"""etcd: the lease lock of algorithms.etcd_lock on ``etcd-1``, or (the ``election`` variant)
a candidate of algorithms.etcd_election.

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
from lockviz.lab.backends import lock_parts
from lockviz.lab.config import ClientConfig, StorageServiceConfig

LAB_PREFIX = "lockviz/"  # every key the lab's etcd locks write lives under this prefix
LOCK_NAME = LAB_PREFIX + "lock"  # etcd's lock service queues keys under "lockviz/lock/"
LOCK_PREFIX = LOCK_NAME + "/"
OWNERS = LAB_PREFIX + "owners/"
LOCK = LOCK_NAME  # the lock, as its sequencers name it


def make_lock(config: ClientConfig, clock: Clock, emit: EventSink) -> EtcdLock:
    node = config.nodes[0]
    host, port = config.address(node)
    kind = EtcdElection if config.variant == "election" else EtcdLock
    return kind(
        Gateway(host, port, node=node, timeout_ms=config.call_timeout_ms),
        LOCK_NAME,
        **lock_parts(config, clock, emit),
        ttl_ms=config.ttl_ms,
        owner_prefix=OWNERS,
    )


def make_check(config: StorageServiceConfig, report: Reporter) -> EtcdCheck:
    node = config.nodes[0]
    host, port = config.address(node)
    return EtcdCheck(
        Gateway(host, port, node=node, timeout_ms=config.call_timeout_ms), report=report
    )
