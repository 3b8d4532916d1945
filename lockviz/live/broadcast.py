"""A run's live events: published to its Channels group, fanned out to this process's viewers.

Publishing. Runs execute in plain threads; the channel layer is asynchronous. One publisher
thread per process owns an event loop and sends the messages in the order they were recorded
(the consumer drops a seq it has already sent and reads a missing one from the database, but
order keeps that rare): whatever is queued when it is free goes out in one pipeline, one round
trip to Redis for a burst rather than one per event. The layer is Redis pub/sub
(lockviz.live.channel_layer): a message published here reaches the viewers of every app process on
that Redis, whether or not anyone watches from this one.

An event is serialised once, here, into the frame every viewer is sent as it is: the consumer
only compares its ``seq`` and forwards ``text``. The frame also carries ``published_ns``, the
host's CLOCK_MONOTONIC when the event was handed to the layer: bench/fanout.py measures each
viewer's latency from it.

Fan-out to this process's viewers: lockviz.live.audience.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import threading
import time
from collections.abc import Mapping
from typing import Literal

from channels.layers import BaseChannelLayer, get_channel_layer
from pydantic import TypeAdapter
from typing_extensions import TypedDict  # pydantic takes typing's only from Python 3.12

from lockviz.ops import counters

log = logging.getLogger(__name__)


# What travels on the channel layer: one of these, by its ``type`` (a consumer handler's name).
class EventMessage(TypedDict):
    """One live event: its seq, and the text frame viewers are sent (serialised once, here)."""

    type: Literal["run.event"]
    seq: int
    text: str


class StatusMessage(TypedDict):
    """A run's status changed (queued with its place, running, finished...)."""

    type: Literal["run.status"]
    status: str
    position: int | None


class FrameMessage(TypedDict):
    """A room's frame, serialised once, sent to its viewers as it is."""

    type: Literal["frame"]
    text: str


# A feed's own probe of its group (lockviz.live.audience): ``from`` is a Python keyword.
Probe = TypedDict("Probe", {"type": Literal["audience.probe"], "from": str, "n": int})
Message = EventMessage | StatusMessage | FrameMessage | Probe
MESSAGE: TypeAdapter[Message] = TypeAdapter(Message)  # what a layer delivers, checked as it comes


class ToTell(TypedDict):
    """What :func:`publish` is given for an event: the event as viewers get it (its words)."""

    type: Literal["run.event"]
    event: Mapping[str, object]


SWITCH_INTERVAL_S = 0.001  # how long a thread may hold the GIL while another waits for it


def prompt_threads() -> None:
    """Let a thread that was woken (the publisher, by a run's event or Redis' answer; the web
    loop, by a message to fan out) take the interpreter within a millisecond, not Python's
    default five, from a thread busy in Python (a run's engine narrating and storing the next
    event, the database thread catching up a viewer). A lab host has a dozen threads per run;
    with two threads busy in Python beside it, a burst of five events was published at a median
    of 45–70 ms at the default and 10–14 ms at one millisecond (bench/publish.py). Called once
    by the processes that publish and fan out: ``serve``'s web application and ``labhost``."""
    sys.setswitchinterval(SWITCH_INTERVAL_S)


def group_name(run_id: str) -> str:
    return f"run.{run_id}"


def event_message(event: Mapping[str, object]) -> EventMessage:
    """The layer message for one live event: its seq and the text frame viewers are sent."""
    frame = {"type": "event", "event": event, "published_ns": time.monotonic_ns()}
    seq = event["seq"]
    assert isinstance(seq, int), "a stored event has its seq"
    return {"type": "run.event", "seq": seq, "text": json.dumps(frame)}


def publish(run_id: str, message: ToTell | StatusMessage) -> None:
    """Send ``message`` (a consumer handler ``type`` and its payload) to the run's viewers.

    A ``run.event`` message is given as ``{"type": "run.event", "event": {...}}``.
    """
    if message["type"] == "run.event":
        _publisher.put(group_name(run_id), event_message(message["event"]))
    else:
        _publisher.put(group_name(run_id), message)


def publish_frame(group: str, frame: Mapping[str, object]) -> None:
    """Send ``frame`` to every viewer in ``group`` (a room's), serialised once, here."""
    _publisher.put(group, {"type": "frame", "text": json.dumps(frame)})


class _Publisher:
    """A daemon thread with an event loop that sends queued messages in order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[tuple[str, Message, float]] | None = None
        self.failures = 0  # messages that could not be published (Audience resyncs after)

    def put(self, group: str, message: Message) -> None:
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
        """Whatever is queued goes out together, in order, in one round trip (a burst would
        otherwise wait in line for one round trip per message), at most :data:`BATCH` at once."""
        assert self._queue is not None
        layer = get_channel_layer()
        while True:
            batch = [await self._queue.get()]
            while not self._queue.empty() and len(batch) < BATCH:
                batch.append(self._queue.get_nowait())
            if layer is None:
                continue
            try:
                await _send_all(layer, [(group, message) for group, message, _ in batch])
                for *_, queued_at in batch:
                    counters.published(queued_at)  # waiting in line included: what a viewer waits
            except Exception as exc:  # Redis away: the events are stored, viewers resync
                self.failures += len(batch)
                log.warning("could not publish %d messages: %s", len(batch), exc)


BATCH = 100  # messages sent in one round trip, at most


async def _send_all(layer: BaseChannelLayer, sends: list[tuple[str, Message]]) -> None:
    """Each message to its group, in order: in one round trip on the app's layer (RunLayer),
    one ``group_send`` at a time on any other."""
    many = getattr(layer, "group_send_all", None)
    if many is not None:
        await many(sends)
        return
    for group, message in sends:
        await layer.group_send(group, dict(message))


_publisher = _Publisher()


def publisher() -> _Publisher:
    """This process's publisher (its ``failures`` count tells listeners messages were lost)."""
    return _publisher
