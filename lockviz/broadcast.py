"""Publishing a run's events to its Channels group from the run's own threads.

Runs execute in plain threads, but the in-memory channel layer's queues belong to the server's
event loop and are not thread-safe. So the first consumer that connects binds that loop here,
and events are handed to it with ``run_coroutine_threadsafe`` (FIFO, so order is kept). With no
loop bound nobody is watching live, and the events are still stored: a viewer that connects
later reads them from the database.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from channels.layers import get_channel_layer

_loop: asyncio.AbstractEventLoop | None = None


def group_name(run_id: str) -> str:
    return f"run.{run_id}"


def bind_loop(loop: asyncio.AbstractEventLoop) -> None:
    global _loop
    _loop = loop


def publish(run_id: str, message: dict[str, Any]) -> None:
    """Send ``message`` (a consumer handler ``type`` and its payload) to the run's viewers."""
    loop = _loop
    layer = get_channel_layer()
    if loop is None or loop.is_closed() or layer is None:
        return
    message = {**message, "published_ns": time.monotonic_ns()}  # bench/fanout.py's stamp
    asyncio.run_coroutine_threadsafe(layer.group_send(group_name(run_id), message), loop)
