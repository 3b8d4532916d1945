"""Redlock over redis-1 .. redis-N: the lock of algorithms.redlock, and a watcher per node."""

from __future__ import annotations

from typing import Any

from algorithms.events import EventSink
from algorithms.redlock import Redlock, connect_node
from lockviz.lab.backends.redis import LOCK_KEY, address
from lockviz.lab.watcher import KeyWatcher

# antirez suggests a per-node timeout of 5-50 ms for a 10 s lease. The lab's machine is shared
# and often loaded, so it allows at least 100 ms (5% of a 2 s lease): a hiccup should look like
# what it is, a slow node, not like a node that is down.
MIN_NODE_TIMEOUT_MS = 100


def node_timeout_ms(ttl_ms: int, call_timeout_ms: int) -> int:
    return min(call_timeout_ms, max(MIN_NODE_TIMEOUT_MS, ttl_ms // 20))


def make_lock(config: dict[str, Any], owner: str, emit: EventSink) -> Redlock:
    ttl_ms = int(config["ttl_ms"])
    timeout = config.get("node_timeout_ms") or node_timeout_ms(ttl_ms, int(config["timeout_ms"]))
    nodes = {
        node: connect_node(*address(config, node), timeout_ms=timeout) for node in config["nodes"]
    }
    return Redlock(
        nodes,
        LOCK_KEY,
        owner=owner,
        ttl_ms=ttl_ms,
        clock=config.get("clock"),
        on_event=emit,
        node_timeout_ms=timeout,
    )


def watchers(servers: Any, scenario: Any, record: Any) -> list[KeyWatcher]:
    return [KeyWatcher(servers[node], node, LOCK_KEY, record) for node in scenario.nodes]
