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

Fan-out. Each process joins a run's group once, on behalf of all its viewers of that run (the
``Audience``), and hands each message to each viewer in turn. A layer channel per viewer would
cost, per viewer and message, a queue, a task and a dispatch through Channels; at 300 viewers
of a run's bursts of events that was tens of milliseconds of delay per burst.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import threading
import time
import weakref
from typing import Any, Protocol

from channels.layers import get_channel_layer

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
        self._queue: asyncio.Queue[tuple[str, dict[str, Any]]] | None = None

    def put(self, group: str, message: dict[str, Any]) -> None:
        with self._lock:
            if self._loop is None:
                self._start()
        assert self._loop is not None and self._queue is not None
        self._loop.call_soon_threadsafe(self._queue.put_nowait, (group, message))

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
            group, message = await self._queue.get()
            if layer is None:
                continue
            try:
                await layer.group_send(group, message)
            except Exception:  # Redis away: the events are stored, viewers catch up on resume
                log.exception("could not publish %s to %s", message["type"], group)


_publisher = _Publisher()


class Viewer(Protocol):
    async def deliver(self, message: dict[str, Any]) -> None:
        """Take one layer message (``run.event`` or ``run.status``), in the order published."""

    async def deliver_events(self, messages: list[dict[str, Any]], text: str) -> None:
        """Take consecutive ``run.event`` messages; ``text`` is them as one ``events`` frame."""


class Audience:
    """This process's viewers, by group, fed from one layer channel per group.

    Messages that arrived while the last ones were being fanned out go out together: each
    viewer is sent a run of consecutive events as one ``{"type": "events", "frames": [...]}``
    frame. A burst (a release is five events within a few milliseconds) then costs one write
    per viewer instead of five, and a write to a socket is most of what a viewer costs.
    """

    def __init__(self) -> None:
        self._viewers: dict[str, set[Viewer]] = {}
        self._feeds: dict[str, asyncio.Task[None]] = {}
        self._joined: dict[str, asyncio.Event] = {}

    async def join(self, group: str, viewer: Viewer) -> None:
        """From now on, ``viewer`` is handed every message sent to ``group``."""
        _settle_heap_soon()
        if group not in self._viewers:
            self._viewers[group], self._joined[group] = set(), asyncio.Event()
            self._feeds[group] = asyncio.create_task(self._feed(group, self._joined[group]))
        await self._joined[group].wait()
        self._viewers[group].add(viewer)

    def leave(self, group: str, viewer: Viewer) -> None:
        viewers = self._viewers.get(group)
        if viewers is None:
            return
        viewers.discard(viewer)
        if not viewers and self._joined[group].is_set():
            del self._viewers[group], self._joined[group]
            self._feeds.pop(group).cancel()

    async def _feed(self, group: str, joined: asyncio.Event) -> None:
        layer = get_channel_layer()
        assert layer is not None, "CHANNEL_LAYERS has no default layer"
        channel = await layer.new_channel()
        await layer.group_add(group, channel)
        inbox: list[dict[str, Any]] = []
        arrived = asyncio.Event()

        async def receive() -> None:
            while True:
                inbox.append(await layer.receive(channel))
                arrived.set()

        receiver = asyncio.create_task(receive())
        joined.set()
        try:
            while True:
                await arrived.wait()
                await asyncio.sleep(0)  # messages already on their way join this batch
                arrived.clear()
                batch = inbox[:]
                inbox.clear()
                for part in _runs_of_events(batch):
                    await self._fan_out(group, part)
        finally:
            receiver.cancel()
            await layer.group_discard(group, channel)

    async def _fan_out(self, group: str, messages: list[dict[str, Any]]) -> None:
        text = events_frame(messages) if len(messages) > 1 else ""
        for viewer in list(self._viewers.get(group, ())):
            try:
                if text:
                    await viewer.deliver_events(messages, text)
                else:
                    await viewer.deliver(messages[0])
            except Exception:  # one viewer's failure must not stop the others' stream
                log.exception("could not deliver %s to a viewer", messages[0]["type"])


def events_frame(messages: list[dict[str, Any]]) -> str:
    """Several event frames as one, without serialising the events again."""
    return '{"type": "events", "frames": [' + ", ".join(m["text"] for m in messages) + "]}"


def _runs_of_events(batch: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The batch in order, consecutive ``run.event`` messages together, anything else alone."""
    parts: list[list[dict[str, Any]]] = []
    for message in batch:
        if message["type"] == "run.event" and parts and parts[-1][-1]["type"] == "run.event":
            parts[-1].append(message)
        else:
            parts.append([message])
    return parts


SETTLE_AFTER_S = 2.0
_settling: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.TimerHandle] = (
    weakref.WeakKeyDictionary()
)


def _settle_heap_soon() -> None:
    """Two seconds after a viewer joins (once per two seconds): collect, then freeze the rest.

    A full collection walks every object the collector tracks: at 1,000 viewers that was 50 ms
    during which no viewer was sent anything, every 3 s, with nothing to collect. Frozen objects
    are not walked (asgi.py froze start-up's already), so the viewers' connections are frozen
    once they have joined. Each settling unfreezes first, so whatever viewers that left held in
    reference cycles is collected then.
    """
    loop = asyncio.get_running_loop()
    if loop not in _settling:
        _settling[loop] = loop.call_later(SETTLE_AFTER_S, _settle_heap, loop)


def _settle_heap(loop: asyncio.AbstractEventLoop) -> None:
    _settling.pop(loop, None)
    gc.unfreeze()
    gc.collect()
    gc.freeze()


_audiences: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Audience] = (
    weakref.WeakKeyDictionary()
)


def audience() -> Audience:
    """The viewers of the running event loop (the server's; each test has its own)."""
    loop = asyncio.get_running_loop()
    if loop not in _audiences:
        _audiences[loop] = Audience()
    return _audiences[loop]
