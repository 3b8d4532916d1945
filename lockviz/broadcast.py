"""A run's live events: published to its Channels group, fanned out to this process's viewers.

Publishing. Runs execute in plain threads; the channel layer is asynchronous. One publisher
thread per process owns an event loop and sends each message with the layer's ``group_send``,
one after another, so a run's messages leave in the order they were recorded (the consumer
drops a seq it has already sent and reads a missing one from the database, but order keeps
that rare). The
layer is Redis pub/sub (lockviz.channel_layer): a message published here reaches the viewers of
every app process on that Redis, whether or not anyone watches from this one.

An event is serialised once, here, into the frame every viewer is sent as it is: the consumer
only compares its ``seq`` and forwards ``text``. The frame also carries ``published_ns``, the
host's CLOCK_MONOTONIC when the event was handed to the layer: bench/fanout.py measures each
viewer's latency from it.

Fan-out to this process's viewers: lockviz.audience.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from typing import Any

from channels.layers import get_channel_layer

from lockviz.ops import metrics

log = logging.getLogger(__name__)


def group_name(run_id: str) -> str:
    return f"run.{run_id}"


def event_message(event: dict[str, Any]) -> dict[str, Any]:
    """The layer message for one live event: its seq and the text frame viewers are sent."""
    frame = {"type": "event", "event": event, "published_ns": time.monotonic_ns()}
    return {"type": "run.event", "seq": event["seq"], "text": json.dumps(frame)}


def publish(run_id: str, message: dict[str, Any]) -> None:
    """Send ``message`` (a consumer handler ``type`` and its payload) to the run's viewers.

    A ``run.event`` message is given as ``{"type": "run.event", "event": {...}}``.
    """
    if message["type"] == "run.event":
        message = event_message(message["event"])
    _publisher.put(group_name(run_id), message)


def publish_frame(group: str, frame: dict[str, Any]) -> None:
    """Send ``frame`` to every viewer in ``group`` (a room's), serialised once, here."""
    _publisher.put(group, {"type": "frame", "text": json.dumps(frame)})


class _Publisher:
    """A daemon thread with an event loop that sends queued messages one at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[tuple[str, dict[str, Any], float]] | None = None
        self.failures = 0  # messages that could not be published (Audience resyncs after)

    def put(self, group: str, message: dict[str, Any]) -> None:
        with self._lock:
            if self._loop is None:
                self._start()
        assert self._loop is not None and self._queue is not None
        queued = (group, message, time.monotonic())
        self._loop.call_soon_threadsafe(self._queue.put_nowait, queued)

    def _start(self) -> None:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self._queue = asyncio.Queue()
            self._loop = loop
            ready.set()
            loop.run_until_complete(self._send_forever())

        threading.Thread(target=run, name="broadcast", daemon=True).start()
        ready.wait()

    async def _send_forever(self) -> None:
        assert self._queue is not None
        layer = get_channel_layer()
        while True:
            group, message, queued_at = await self._queue.get()
            if layer is None:
                continue
            try:
                await layer.group_send(group, message)
                metrics.published(queued_at)  # waiting in line included: what a viewer waits
            except Exception as exc:  # Redis away: the events are stored, viewers resync
                self.failures += 1
                log.warning("could not publish %s to %s: %s", message["type"], group, exc)


_publisher = _Publisher()


def publisher() -> _Publisher:
    """This process's publisher (its ``failures`` count tells listeners messages were lost)."""
    return _publisher
