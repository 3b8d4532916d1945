"""This process's viewers of live streams: one subscription per group, fanned out to each.

Fan-out. Each process joins a run's group once, on behalf of all its viewers of that run (the
``Audience``), and hands each message to each viewer in turn. A layer channel per viewer would
cost, per viewer and message, a queue, a task and a dispatch through Channels; at 300 viewers
of a run's bursts of events that was tens of milliseconds of delay per burst.

The layer's Redis can go away and come back; see :class:`Audience` for how viewers are kept
whole across that.

One module past the usual ~300 lines, on purpose: the fan-out, the feed that keeps it whole and
the heap settling under a large audience are one process-wide concern, tuned together.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import secrets
import time
import weakref
from typing import Final, Literal, Protocol

from channels.layers import BaseChannelLayer, get_channel_layer
from pydantic import ValidationError

from lockviz.live.broadcast import MESSAGE, EventMessage, Message, Probe, publisher
from lockviz.live.frames import Frame

log = logging.getLogger(__name__)


Now = Literal["sent", "check", "careful"]  # what a viewer did with a frame at once (deliver_now)


class Viewer(Protocol):
    def deliver_now(self, first: int, last: int, frame: Frame) -> Now:
        """The common case, without a coroutine: events ``first``..``last`` (consecutive), as
        ``frame``, written at once where the server allows it. ``"sent"``: done; ``"check"``:
        sent, but some of it is held for the viewer (see :meth:`keep_up`); ``"careful"``:
        nothing was sent: hand the messages to :meth:`deliver_events`."""

    async def keep_up(self) -> None:
        """Something is held for the viewer, not yet sent: drop it if it is too far behind."""

    async def deliver(self, message: Message) -> None:
        """Take one layer message (``run.event`` or ``run.status``), in the order published."""

    async def deliver_events(self, messages: list[EventMessage], frame: Frame) -> None:
        """Take consecutive ``run.event`` messages; ``frame`` is them as one frame (an
        ``events`` frame, or the one event's own), made once for every viewer."""

    async def resync(self) -> None:
        """Messages may have been lost (the layer's Redis was away): send what the database
        holds that the viewer has not been sent, and the state as it is now."""


PROBE: Final = "audience.probe"
PROBE_EVERY_S = 1.0  # each process, each group it listens to: one probe a second
LOST_AFTER_S = 3.0  # nothing heard on the group this long: the subscription is gone
JOIN_WAIT_S = 3.0  # a viewer waits this long for the group's subscription, then catches up
RETRY_S = (0.2, 2.0)  # the first and the longest wait before subscribing again


class Audience:
    """This process's viewers, by group, fed from one layer channel per group.

    Messages that arrived while the last ones were being fanned out go out together: each
    viewer is sent a run of consecutive events as one ``{"type": "events", "frames": [...]}``
    frame. A burst (a release is five events within a few milliseconds) then costs one write
    per viewer instead of five, and a write to a socket is most of what a viewer costs.

    The layer's Redis can go away (restarted, a network blip). A group that cannot be
    subscribed is tried again until it can, and meanwhile its viewers are served from the
    database; each feed probes its own group once a second, so it knows when messages stop
    reaching it and when they reach it again (redis-py subscribes again as it reconnects). Then
    every viewer of the group is resynced: what was published while nobody could hear it is
    read back from the database, where every event was stored before it was published.
    """

    def __init__(self, layer: BaseChannelLayer | None = None) -> None:
        self._layer = layer  # the default channel layer unless given one (tests)
        self._viewers: dict[str, set[Viewer]] = {}
        self._feeds: dict[str, asyncio.Task[None]] = {}
        self._joined: dict[str, asyncio.Event] = {}

    async def join(self, group: str, viewer: Viewer) -> None:
        """From now on, ``viewer`` is handed every message sent to ``group``.

        Returns once the group is subscribed, or after :data:`JOIN_WAIT_S` if the layer cannot
        be reached: the viewer is resynced when it can.
        """
        _settle_heap_soon()
        if group not in self._viewers:
            self._viewers[group], self._joined[group] = set(), asyncio.Event()
            self._feeds[group] = asyncio.create_task(self._feed(group, self._joined[group]))
        self._viewers[group].add(viewer)  # nothing is fanned out before the group is joined
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._joined[group].wait(), JOIN_WAIT_S)

    def leave(self, group: str, viewer: Viewer) -> None:
        viewers = self._viewers.get(group)
        if viewers is None:
            return
        viewers.discard(viewer)
        _left(sum(len(here) for here in self._viewers.values()))
        if not viewers:
            del self._viewers[group], self._joined[group]
            self._feeds.pop(group).cancel()

    def listening(self) -> bool:
        """Whether every group of this process is subscribed (for /readyz)."""
        return all(joined.is_set() for joined in self._joined.values())

    async def _feed(self, group: str, joined: asyncio.Event) -> None:
        layer = self._layer or get_channel_layer()
        assert layer is not None, "CHANNEL_LAYERS has no default layer"
        channel, waited = await self._subscribe(layer, group)
        feed = _Feed(layer, group, channel, waited)
        tasks = [asyncio.create_task(feed.receive()), asyncio.create_task(feed.probe())]
        joined.set()
        try:
            while True:
                await feed.arrived.wait()
                await asyncio.sleep(0)  # messages already on their way join this batch
                feed.arrived.clear()
                batch = feed.inbox[:]
                feed.inbox.clear()
                for part in _runs_of_events(batch):
                    await self._fan_out(group, part)
                if feed.back:
                    feed.back, feed.lost = False, None
                    log.warning("the live stream of %s is back: resyncing its viewers", group)
                    await self._resync(group)
        finally:
            for task in tasks:
                task.cancel()
            with contextlib.suppress(Exception):
                await layer.group_discard(group, channel)

    async def _subscribe(self, layer: BaseChannelLayer, group: str) -> tuple[str, bool]:
        """A layer channel in ``group``, tried until Redis takes it; whether it had to wait."""
        delay, waited = RETRY_S[0], False
        channel = ""
        while True:
            try:
                channel = channel or await layer.new_channel()
                await layer.group_add(group, channel)
                return channel, waited
            except Exception as exc:  # the layer's Redis is away: its viewers read the database
                log.warning("could not listen to %s (%s): again in %.1f s", group, exc, delay)
                waited = True
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_S[1])

    async def _resync(self, group: str) -> None:
        for viewer in list(self._viewers.get(group, ())):
            try:
                await viewer.resync()
            except Exception:  # one viewer's failure must not stop the others'
                log.exception("could not resync a viewer of %s", group)

    async def _fan_out(self, group: str, messages: list[Message]) -> None:
        """Each viewer is handed the messages; consecutive events go out as one frame, made
        once, written at once to every viewer that is simply following (no coroutine per
        viewer: at 1,000 viewers of a burst that was a fifth of what a live event cost)."""
        events = [m for m in messages if m["type"] == "run.event"]
        frame = None
        if events and len(events) == len(messages):
            frame = Frame(events_frame(events) if len(events) > 1 else events[0]["text"])
        first, last = (events[0]["seq"], events[-1]["seq"]) if events else (0, 0)
        now_ok = frame is not None and last - first + 1 == len(events)
        for viewer in list(self._viewers.get(group, ())):
            try:
                if frame is None:
                    await viewer.deliver(messages[0])
                    continue
                now: Now = viewer.deliver_now(first, last, frame) if now_ok else "careful"
                if now == "check":
                    await viewer.keep_up()
                elif now == "careful":
                    await viewer.deliver_events(events, frame)
            except Exception:  # one viewer's failure must not stop the others' stream
                log.exception("could not deliver %s to a viewer", messages[0]["type"])


class _Feed:
    """One group's subscription in this process: its inbox, and whether it can still hear.

    Once a second it publishes a probe of its own to the group. Nothing heard for
    :data:`LOST_AFTER_S`, a probe that cannot be sent, or a publish of this process that failed
    means messages may have been lost since probe number :attr:`lost`; when a later probe of its
    own comes back, the subscription works again and :attr:`back` says so.
    """

    def __init__(self, layer: BaseChannelLayer, group: str, channel: str, waited: bool) -> None:
        self.layer, self.group, self.channel = layer, group, channel
        self.inbox: list[Message] = []
        self.arrived = asyncio.Event()
        self.me, self.sent, self.heard = secrets.token_hex(4), 0, time.monotonic()
        self.lost: int | None = 0 if waited else None  # a viewer joined before we listened
        self.back = False

    async def receive(self) -> None:
        while True:
            raw = await self.layer.receive(self.channel)
            self.heard = time.monotonic()
            try:
                message = MESSAGE.validate_python(raw)
            except ValidationError:  # not one of lockviz's messages: nobody here could use it
                log.warning("dropped a message of type %r on %s", raw.get("type"), self.group)
                continue
            if message["type"] != PROBE:
                self.inbox.append(message)
                self.arrived.set()
            elif self._came_back(message):
                self.back = True
                self.arrived.set()

    def _came_back(self, probe: Probe) -> bool:
        """Whether ``probe`` is one of ours sent after messages may have been lost."""
        return probe.get("from") == self.me and self.lost is not None and probe["n"] > self.lost

    async def probe(self) -> None:
        failures = publisher().failures
        while True:
            await asyncio.sleep(PROBE_EVERY_S)
            self.sent += 1
            try:
                await self.layer.group_send(
                    self.group, {"type": PROBE, "from": self.me, "n": self.sent}
                )
                cut = time.monotonic() - self.heard > LOST_AFTER_S
            except Exception:  # Redis is away: what is published now is lost
                cut = True
            cut = cut or publisher().failures != failures  # this process lost a publish
            failures = publisher().failures
            if cut and self.lost is None:
                log.warning("the live stream of %s is cut off: waiting for Redis", self.group)
                self.lost = self.sent


def events_frame(messages: list[EventMessage]) -> str:
    """Several event frames as one, without serialising the events again."""
    return '{"type": "events", "frames": [' + ", ".join(m["text"] for m in messages) + "]}"


def _runs_of_events(batch: list[Message]) -> list[list[Message]]:
    """The batch in order, consecutive ``run.event`` messages together, anything else alone."""
    parts: list[list[Message]] = []
    for message in batch:
        if message["type"] == "run.event" and parts and parts[-1][-1]["type"] == "run.event":
            parts[-1].append(message)
        else:
            parts.append([message])
    return parts


SETTLE_AFTER_S = 2.0
DEEP_AFTER_LEFT = 200  # this many viewers left (and more than are here): collect them
_settling: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.TimerHandle] = (
    weakref.WeakKeyDictionary()
)


class _Heap:
    """How many viewers left since the collector last walked everything, and whether enough
    did that the next settling walks it all."""

    left = 0
    deep = False


def _settle_heap_soon() -> None:
    """Two seconds after a viewer joins (once per two seconds): freeze what is there.

    A full collection walks every object the collector tracks: at 1,000 viewers that was 50 ms
    during which no viewer was sent anything, every 3 s, with nothing to collect. Frozen objects
    are not walked (asgi.py froze start-up's already), so the viewers' connections are frozen
    once they have joined: a collection of the young generations first (what joining left
    behind), then ``gc.freeze()``, both a fraction of a millisecond. Thawing everything to
    collect it is a walk of the whole heap (200–400 ms on this machine at 1,000 viewers, with
    every viewer's next event waiting behind it), so it is done only once many viewers have
    left (:data:`DEEP_AFTER_LEFT`, and more than are still here): what they held in reference
    cycles is collected then, and memory stays bounded by about twice the largest audience.
    """
    loop = asyncio.get_running_loop()
    if loop not in _settling:
        _settling[loop] = loop.call_later(SETTLE_AFTER_S, _settle_heap, loop)


def _left(viewers_here: int) -> None:
    """A viewer left: once enough have, settle the heap whole (see :func:`_settle_heap_soon`)."""
    _Heap.left += 1
    if _Heap.left >= max(DEEP_AFTER_LEFT, viewers_here):
        _Heap.deep = True
        _settle_heap_soon()


def _settle_heap(loop: asyncio.AbstractEventLoop) -> None:
    _settling.pop(loop, None)
    if _Heap.deep:
        _Heap.left, _Heap.deep = 0, False
        gc.unfreeze()
        gc.collect()
    else:
        gc.collect(1)
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
