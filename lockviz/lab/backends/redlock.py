"""Redlock over redis-1 .. redis-N: the lock of algorithms.redlock.

Each node asks for its password: a new connection sends AUTH in the same write as its first
command (algorithms.resp), so a round is still one round trip per node. The connections are
opened here, before the run's clock starts; one that Redlock drops (a node that did not answer
in time) is opened again on the next round.
"""

from __future__ import annotations

import contextlib

from algorithms.clock import Clock
from algorithms.errors import BackendUnavailable
from algorithms.events import EventSink, Reporter
from algorithms.redlock import Redlock, connect_node
from algorithms.sequencer import RedlockCheck
from lockviz.lab.backends.parts import lock_parts
from lockviz.lab.backends.redis import LOCK_KEY
from lockviz.lab.config import ClientConfig, StorageServiceConfig

LOCK = LOCK_KEY  # the lock, as its sequencers name it

# antirez suggests a per-node timeout of 5-50 ms for a 10 s lease. The lab's machine is shared
# and often loaded, so it allows at least 100 ms (5% of a 2 s lease): a hiccup should look like
# what it is, a slow node, not like a node that is down.
MIN_NODE_TIMEOUT_MS = 100


def node_timeout_ms(ttl_ms: int, call_timeout_ms: int) -> int:
    return min(call_timeout_ms, max(MIN_NODE_TIMEOUT_MS, ttl_ms // 20))


def make_lock(config: ClientConfig, clock: Clock, emit: EventSink) -> Redlock:
    timeout = config.node_timeout_ms or node_timeout_ms(config.ttl_ms, config.call_timeout_ms)
    nodes = {
        node: connect_node(
            *config.address(node), timeout_ms=timeout, password=config.password(node)
        )
        for node in config.nodes
    }
    for connection in nodes.values():
        with contextlib.suppress(BackendUnavailable):  # a node that is down: on first use, then
            connection.connect()
    return Redlock(
        nodes,
        LOCK_KEY,
        **lock_parts(config, clock, emit),
        ttl_ms=config.ttl_ms,
        node_timeout_ms=timeout,
    )


def make_check(config: StorageServiceConfig, report: Reporter) -> RedlockCheck:
    """A GET on every node at once, each with Redlock's own per-node timeout."""
    timeout = node_timeout_ms(config.ttl_ms, config.call_timeout_ms)
    nodes = {
        node: connect_node(
            *config.address(node), timeout_ms=timeout, node=node, password=config.password(node)
        )
        for node in config.nodes
    }
    return RedlockCheck(nodes, LOCK_KEY, report=report)
