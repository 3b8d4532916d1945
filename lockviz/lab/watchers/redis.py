"""A Redis lock node deciding: when did *the server* expire or delete the lock key?

The watcher subscribes to the node's keyspace notifications (``set``, ``del``, ``expired`` on
the lock key) over its own connection, so the diagram can end a lease bar exactly where Redis
expired or deleted the key. Notifications arrive in the order the server produced them; after
each ``set`` the watcher reads the key's value (``alice:9f2c...``) to learn who holds it. One
watcher per node: single Redis and Redlock alike.
"""

from __future__ import annotations

import time

import redis

from algorithms.redis_client import connect
from lockviz.lab.backends.redis import LOCK_KEY
from lockviz.lab.watchers.base import ServerWatcher

CHANNEL_PREFIX = "__keyevent@0__:"


class KeyWatcher(ServerWatcher):
    transient = (redis.ConnectionError, redis.TimeoutError, OSError)  # the node crashed
    key = LOCK_KEY
    holder: str | None = None  # who holds the key, as the last ``set`` said

    def watch(self) -> None:
        client = connect(self.host, self.port, timeout_ms=500, password=self.password)
        pubsub = client.pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call]
        try:
            pubsub.subscribe(*(CHANNEL_PREFIX + e for e in ("set", "del", "expired")))
            self.ready()
            while not self.stopping:
                message = pubsub.get_message(timeout=0.1)
                if message is None or message.get("data") != self.key:
                    continue
                t_ns = time.monotonic_ns()
                self.seen(client, message["channel"].removeprefix(CHANNEL_PREFIX), t_ns)
        finally:
            pubsub.close()
            client.close()

    def seen(self, client: redis.Redis, event: str, t_ns: int) -> None:
        """The node told us ``event`` (``set``, ``del``, ``expired``) on the lock key."""
        if event == "set":
            self.holder = self.whose(client)
            return
        if self.holder is not None:  # None: set and undone at once, a failed attempt
            kind = "expired" if event == "expired" else "deleted"
            self.record(self.name, kind, {"key": self.key, "holder": self.holder}, t_ns)
        self.holder = None

    def whose(self, client: redis.Redis) -> str | None:
        """Who holds the key now: its value is ``alice:9f2c...`` (decoded: the lab's clients
        are)."""
        value = client.get(self.key)
        return str(value).split(":", 1)[0] if value else None
