"""Single-node Redis: the lock of algorithms.redis_lock on ``redis-1``, and the storage's
sequencer check of it (``GET`` on the lock key)."""

from __future__ import annotations

from algorithms.clock import Clock
from algorithms.events import EventSink, Reporter
from algorithms.redis_client import connect
from algorithms.redis_lock import RedisLock
from algorithms.resp import RespConnection
from algorithms.sequencer import RedisCheck
from lockviz.lab.backends.parts import lock_parts
from lockviz.lab.config import ClientConfig, StorageServiceConfig

LOCK_KEY = "lockviz:lock"
LOCK = LOCK_KEY  # the lock, as its sequencers name it


def make_lock(config: ClientConfig, clock: Clock, emit: EventSink) -> RedisLock:
    node = config.nodes[0]
    host, port = config.address(node)
    return RedisLock(
        connect(host, port, timeout_ms=config.call_timeout_ms, password=config.password(node)),
        LOCK_KEY,
        **lock_parts(config, clock, emit),
        ttl_ms=config.ttl_ms,
        node=node,
        unsafe_release=config.variant == "unsafe_release",
        expire=config.variant != "no_ttl",
    )


def make_check(config: StorageServiceConfig, report: Reporter) -> RedisCheck:
    node = config.nodes[0]
    host, port = config.address(node)
    connection = RespConnection(
        host, port, timeout_ms=config.call_timeout_ms, node=node, password=config.password(node)
    )
    return RedisCheck(connection, LOCK_KEY, node=node, report=report)
