"""Redlock over redis-1 .. redis-N: the lock of algorithms.redlock."""

from __future__ import annotations

from algorithms.clock import Clock
from algorithms.events import EventSink
from algorithms.redlock import Redlock, connect_node
from lockviz.lab.backends.redis import LOCK_KEY
from lockviz.lab.config import ClientConfig

# antirez suggests a per-node timeout of 5-50 ms for a 10 s lease. The lab's machine is shared
# and often loaded, so it allows at least 100 ms (5% of a 2 s lease): a hiccup should look like
# what it is, a slow node, not like a node that is down.
MIN_NODE_TIMEOUT_MS = 100


def node_timeout_ms(ttl_ms: int, call_timeout_ms: int) -> int:
    return min(call_timeout_ms, max(MIN_NODE_TIMEOUT_MS, ttl_ms // 20))


def make_lock(config: ClientConfig, clock: Clock, emit: EventSink) -> Redlock:
    timeout = config.node_timeout_ms or node_timeout_ms(config.ttl_ms, config.call_timeout_ms)
    nodes = {node: connect_node(*config.address(node), timeout_ms=timeout) for node in config.nodes}
    return Redlock(
        nodes,
        LOCK_KEY,
        owner=config.name,
        ttl_ms=config.ttl_ms,
        clock=clock,
        on_event=emit,
        node_timeout_ms=timeout,
    )
