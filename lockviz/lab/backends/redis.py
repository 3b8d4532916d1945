"""Single-node Redis: the lock of algorithms.redis_lock on ``redis-1``."""

from __future__ import annotations

from algorithms.clock import Clock
from algorithms.events import EventSink
from algorithms.redis_client import connect
from algorithms.redis_lock import RedisLock
from lockviz.lab.config import ClientConfig

LOCK_KEY = "lockviz:lock"


def make_lock(config: ClientConfig, clock: Clock, emit: EventSink) -> RedisLock:
    node = config.nodes[0]
    host, port = config.address(node)
    return RedisLock(
        connect(host, port, timeout_ms=config.call_timeout_ms, password=config.password(node)),
        LOCK_KEY,
        owner=config.name,
        ttl_ms=config.ttl_ms,
        node=node,
        clock=clock,
        on_event=emit,
        unsafe_release=config.variant == "unsafe_release",
        expire=config.variant != "no_ttl",
    )
