"""Connecting to Redis the way a lock client must: explicit timeouts, no hidden retries.

redis-py 8's default retry policy silently stretches a 1 s socket timeout to ~15 s. A lock
client that does not know how long a call can take cannot reason about its lease, and the
diagram would show a fiction; so every connection here has a stated timeout and zero retries.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from algorithms.errors import BackendUnavailable


def connect(
    host: str, port: int, *, timeout_ms: int = 1000, password: str | None = None
) -> redis.Redis:
    """A client whose every call answers or fails within ``timeout_ms`` (``password``: AUTH)."""
    return redis.Redis(
        host=host,
        port=port,
        password=password,
        socket_timeout=timeout_ms / 1000,
        socket_connect_timeout=timeout_ms / 1000,
        retry=Retry(NoBackoff(), 0),
        decode_responses=True,
        # No CLIENT SETINFO handshake: every extra round trip on connect is time the lock
        # client spends without knowing it, and the diagram would not show it.
        driver_info=None,
    )


@contextmanager
def boundary(node: str) -> Iterator[None]:
    """Convert redis-py's connection errors into :class:`BackendUnavailable`."""
    try:
        yield
    except redis.TimeoutError as exc:
        raise BackendUnavailable(node, "no reply before the timeout") from exc
    except redis.ConnectionError as exc:
        raise BackendUnavailable(node, f"connection failed ({exc})") from exc
