"""Single-node Redis: the lock of algorithms.redis_lock on ``redis-1``, and its watcher."""

from __future__ import annotations

from typing import Any

from algorithms.events import EventSink
from algorithms.redis_client import connect
from algorithms.redis_lock import RedisLock
from lockviz.lab.watcher import KeyWatcher

LOCK_KEY = "lockviz:lock"


def address(config: dict[str, Any], node: str) -> tuple[str, int]:
    host, port = config["servers"][node].rsplit(":", 1)
    return host, int(port)


def make_lock(config: dict[str, Any], owner: str, emit: EventSink) -> RedisLock:
    node = config["nodes"][0]
    host, port = address(config, node)
    variant = config.get("variant") or "safe"
    return RedisLock(
        connect(host, port, timeout_ms=config["timeout_ms"]),
        LOCK_KEY,
        owner=owner,
        ttl_ms=int(config["ttl_ms"]),
        node=node,
        clock=config.get("clock"),
        on_event=emit,
        unsafe_release=variant == "unsafe_release",
        expire=variant != "no_ttl",
    )


def watchers(servers: Any, scenario: Any, record: Any) -> list[KeyWatcher]:
    return [KeyWatcher(servers[node], node, LOCK_KEY, record) for node in scenario.nodes]
