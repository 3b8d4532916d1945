"""Watching a lock server decide: when did *the server* end a lease?

A client only knows when it was granted; the truth about expiry lives on the server. The
watcher subscribes to the node's keyspace notifications (``set``, ``del``, ``expired`` on the
lock key) over its own connection, so the diagram can end a lease bar exactly where Redis
expired or deleted the key. Notifications arrive in the order the server produced them; after
each ``set`` the watcher reads the key's value (``alice:9f2c...``) to learn who holds it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import redis

NodeEventSink = Callable[[str, str, dict[str, Any], int], None]  # actor, kind, details, t_ns
CHANNEL_PREFIX = "__keyevent@0__:"


class KeyWatcher:
    def __init__(self, server: Any, node: str, key: str, on_event: NodeEventSink) -> None:
        self.server = server
        self.node = node
        self.key = key
        self.on_event = on_event
        self.holder: str | None = None
        self._stop = threading.Event()
        self._subscribed = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"watch-{node}", daemon=True)

    def start(self, timeout_s: float = 5.0) -> None:
        self._thread.start()
        self._subscribed.wait(timeout_s)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._listen()
            except (redis.ConnectionError, redis.TimeoutError, OSError):
                time.sleep(0.05)  # the node is down (crashed): try again until it is back

    def _listen(self) -> None:
        client = self.server.client(timeout_ms=500)
        pubsub = client.pubsub(ignore_subscribe_messages=True)
        try:
            pubsub.subscribe(*(CHANNEL_PREFIX + e for e in ("set", "del", "expired")))
            self._subscribed.set()
            while not self._stop.is_set():
                message = pubsub.get_message(timeout=0.1)
                if message is None or message.get("data") != self.key:
                    continue
                t_ns = time.monotonic_ns()
                event = message["channel"].removeprefix(CHANNEL_PREFIX)
                if event == "set":
                    value = client.get(self.key)
                    self.holder = value.split(":", 1)[0] if value else None
                    continue
                if self.holder is not None:  # None: set and undone at once, a failed attempt
                    kind = "expired" if event == "expired" else "deleted"
                    self.on_event(self.node, kind, {"key": self.key, "holder": self.holder}, t_ns)
                self.holder = None
        finally:
            pubsub.close()
            client.close()
