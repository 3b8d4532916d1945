"""Redis with replicas and Sentinel: the lock of algorithms.sentinel_lock, on the primary that
``sentinel-1``..``sentinel-3`` name.

Every client asks the Sentinels in their order (sentinel-1 first) and talks to each server over
its own proxied link: what a Sentinel answers (the address the set knows the primary by, see
:mod:`lockviz.lab.servers.replicated`) is mapped to the server's name, then to the client's own
link to it. The variant ``wait`` waits for one replica after each grant (``WAIT 1``); the
variant ``min_replicas`` changes the servers (``min-replicas-to-write 1``), not the client.
"""

from __future__ import annotations

from algorithms.clock import Clock
from algorithms.events import EventSink
from algorithms.redis_client import connect
from algorithms.resp import RespConnection
from algorithms.sentinel_lock import SentinelLock
from lockviz.catalogue import SENTINEL, server_kind
from lockviz.lab.backends.parts import lock_parts
from lockviz.lab.backends.redis import LOCK_KEY
from lockviz.lab.config import ClientConfig

SERVICE = "lockviz"  # the name the Sentinels monitor the primary as
WAIT_TIMEOUT_MS = 500


def make_lock(config: ClientConfig, clock: Clock, emit: EventSink) -> SentinelLock:
    sentinels = {
        node: connect(
            *config.address(node), timeout_ms=config.call_timeout_ms, password=config.password(node)
        )
        for node in config.nodes
        if server_kind(node) is SENTINEL
    }
    nodes = {
        node: RespConnection(
            *config.address(node),
            timeout_ms=config.call_timeout_ms,
            node=node,
            password=config.password(node),
        )
        for node in config.nodes
        if server_kind(node) is not SENTINEL
    }
    return SentinelLock(
        sentinels,
        nodes,
        LOCK_KEY,
        **lock_parts(config, clock, emit),
        ttl_ms=config.ttl_ms,
        service=SERVICE,
        announced=config.announced,
        wait_replicas=1 if config.variant == "wait" else 0,
        wait_timeout_ms=min(WAIT_TIMEOUT_MS, config.ttl_ms // 4),
    )
