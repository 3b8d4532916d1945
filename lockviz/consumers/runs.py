"""The live stream of one run's events over a WebSocket.

One module past the usual ~300 lines, on purpose: the stream's catch-up, live frames, gap
repair and dropping of a viewer too far behind share one viewer's state and its order.

Connect to ``/ws/runs/<id>/?after=N`` to receive every event with ``seq > N``: first those
already stored, then live ones, each exactly once. A viewer that reconnects passes the last
``seq`` it has and resumes where it stopped. It may also send ``{"type": "resume", "after": N}``
at any time to be sent again what follows N (at most once every :data:`RESUME_EVERY_S`, and
:data:`RESUMES` times per connection). Anything else it sends gets an error message that says
what was wrong; the stream goes on.

What a viewer costs is bounded. A catch-up reads the stored events it sends, with their stored
words (``Run.said_after``), :data:`PAGE` at a time: never the run from its start. A viewer whose
frames not yet sent pass ``LOCKVIZ_MAX_UNSENT`` (it does not read, or reads too slowly: see
lockviz.live.unsent) is dropped, closed with :data:`BEHIND` and a reason; the page reconnects from
the last event it has.

Server messages: ``{"type": "event", "event": {...}}`` (live ones also carry ``published_ns``,
see lockviz.live.broadcast), ``{"type": "events", "frames": [<event message>, ...]}`` (consecutive
events sent together, in order: live ones that arrived together, or a page of a catch-up),
``{"type": "status", "status": "queued"|"running"|"finished"|"failed", "position": n|null}``,
``{"type": "error", "message": "..."}``.

Live messages come from this process's audience of the run (lockviz.live.broadcast), one call of
``deliver`` per message, not through a layer channel and a Channels dispatch of the viewer's own.
A live event arrives already serialised and is forwarded as it is. While the stream reads the
database (the catch-up, a resume) live messages are held, and sent after it unless it already
sent them. When a live seq skips one (a message lost on the way), the gap is read back from the
database before the stream goes on.

A lesson's run streams to anyone but its owner without the answers of the checkpoints not yet
revealed (lockviz.teaching.reveals): those step events come without their narration.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Sequence
from urllib.parse import parse_qs

from autobahn.websocket.protocol import PreparedMessage
from channels.db import database_sync_to_async
from django.conf import settings

from lockviz import accounts, jsontext
from lockviz.consumers import arrivals
from lockviz.consumers.stream import BEHIND, NOT_FOUND, Stream
from lockviz.jsontypes import JsonObject
from lockviz.live import broadcast, frames
from lockviz.live.audience import Now, audience
from lockviz.live.broadcast import EventMessage, Message
from lockviz.live.frames import Frame
from lockviz.live.unsent import unsent
from lockviz.models import Run
from lockviz.narrator import Told
from lockviz.ops import counters
from lockviz.runs.recorder import queue_position
from lockviz.teaching import reveals

log = logging.getLogger(__name__)

RESUME_EVERY_S = 0.5  # a viewer's resumes: at most one per this long
RESUMES = 20  # and at most this many per connection (the page resumes only on a gap)
PAGE = arrivals.PAGE  # events read and sent in one go before others' messages go through
FRAME_BYTES = 1024 * 1024  # a live event's frame, from the channel layer (lockviz.live.broadcast)


class RunConsumer(Stream):
    """One viewer of one run. What it holds (its address's stream, its place in the audience,
    the run's watcher count, the viewers gauge) is given back however it ends
    (lockviz.consumers.stream)."""

    async def connect(self) -> None:
        # Answered at once (the page's first event waits for the handshake), then counted: one
        # of its address's streams (lockviz.shares), or told why not and closed.
        await self.accept()
        if not await self.take_share(accepted=True):
            return
        self.run_id: str = self.scope["url_route"]["kwargs"]["run_id"]
        self.sent = 0
        self.last_resume = 0.0
        self.resumes = 0
        self.dropped = False
        self.holding = 0  # catch-ups reading the database; live messages wait in held
        self.held: list[Message] = []
        self.repair: asyncio.Future[None] | None = None
        self.group = broadcast.group_name(self.run_id)
        self.scenario: JsonObject = {}
        self.hidden: frozenset[int] = frozenset()  # checkpoints not revealed to this viewer
        write = self.scope.get(frames.PREPARED)  # under Daphne: one framing for every viewer
        self.write: Callable[[PreparedMessage], bool] | None = write if callable(write) else None
        after = _read_after(parse_qs(self.scope.get("query_string", b"").decode()).get("after"))
        if isinstance(after, str):
            await self.error(after)
            after = 0
        self.sent = after  # the viewer has everything up to here
        # Join first, then catch up: anything published meanwhile is held for us and
        # dropped by seq if the catch-up already delivered it.
        self.holding += 1
        try:
            await self.hold(self._leave_audience)
            await audience().join(self.group, self)
            # Read with the others of its wave: a class that arrives at once shares a few
            # trips to the database (lockviz.consumers.arrivals). Who it is reads the session,
            # which may touch the database: on that trip too.
            arrived = await arrivals.arrive(
                self.run_id, after, lambda: accounts.in_scope(self.scope)
            )
            if arrived is None:
                await self.error(f"there is no run {self.run_id!r}")
                await self.close(code=NOT_FOUND)
                return
            arrivals.watch(self.run_id)  # a queued run with nobody watching is cancelled
            await self.hold(self._unwatch)
            counters.viewers("run", +1)
            await self.hold(self._ungauge)
            run, self.hidden = arrived.run, arrived.hidden
            self.scenario = run.scenario
            await self._send_status(run.status, arrived.position)
            await self._catch_up(after, run, arrived.told, arrived.more, arrived.frame)
        finally:
            self.holding -= 1
        await self._release_held()

    async def _leave_audience(self) -> None:
        audience().leave(self.group, self)

    async def _unwatch(self) -> None:
        arrivals.unwatch(self.run_id)  # counted in memory, written off this path

    async def _ungauge(self) -> None:
        counters.viewers("run", -1)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        message = await self.read(text_data, bytes_data)  # bounded (lockviz.jsontext)
        if message is None:
            return
        if not isinstance(message, dict) or message.get("type") != "resume":
            await self.error(
                'unknown message; the only one understood is {"type": "resume", "after": N}'
            )
            return
        after = _read_after([message.get("after")])
        if isinstance(after, str):
            await self.error(after)
            return
        now = time.monotonic()
        if self.resumes >= RESUMES:  # a resume re-reads the run: bounded per connection
            await self.error(
                f"this connection has resumed {RESUMES} times, the most it may; reconnect "
                "with ?after=N to go on"
            )
            return
        if now - self.last_resume < RESUME_EVERY_S:
            await self.error(
                f"resume at most once every {RESUME_EVERY_S:g} s; wait and send it again"
            )
            return
        self.last_resume = now
        self.resumes += 1
        self.sent = min(self.sent, after)
        await self._catch_up(after)

    async def deliver(self, message: Message) -> None:
        """A live message from the run's group (see lockviz.live.audience.Audience)."""
        if self.dropped:
            return
        if self.holding or self.held:
            self.held.append(message)
        elif message["type"] == "run.event" and message["seq"] > self.sent + 1:
            self.held.append(message)  # a message went missing: read the gap back first
            self.repair = asyncio.ensure_future(self._catch_up(self.sent))
        else:
            await self._forward(message)

    def deliver_now(self, first: int, last: int, frame: Frame) -> Now:
        """A viewer simply following, under Daphne: the frame written at once (Audience)."""
        if self.dropped:
            return "sent"  # nothing more is sent to it
        if self.holding or self.held or self.hidden or first != self.sent + 1 or not self.write:
            return "careful"
        self.sent = last
        return "sent" if self.write(frame.prepared) else "check"

    async def keep_up(self) -> None:
        await self._keeping_up()

    async def deliver_events(self, messages: list[EventMessage], frame: Frame) -> None:
        """Consecutive live events, and ``frame``: them as one frame, made once for every
        viewer (lockviz.live.frames)."""
        first, last = messages[0]["seq"], messages[-1]["seq"]
        in_order = first == self.sent + 1 and last - first + 1 == len(messages)
        if self.dropped:
            return
        if self.holding or self.held or not in_order or self.hidden:
            for message in messages:  # the careful way, one by one
                await self.deliver(message)
        else:
            self.sent = last
            await frames.send(self, frame)
            await self._keeping_up()

    async def resync(self) -> None:
        """Live messages may have been lost (the layer's Redis was away): what the database
        holds beyond what this viewer has, and the run's status now."""
        run = await database_sync_to_async(Run.objects.filter(pk=self.run_id).first)()
        if run is not None:
            await self._send_status(run.status, await position(run))
            await self._catch_up(self.sent)

    async def _forward(self, message: Message) -> None:
        if message["type"] == "run.status":
            await self._send_status(message["status"], message["position"])
        elif message["type"] == "run.event" and message["seq"] > self.sent:
            self.sent = message["seq"]
            await self.send(text_data=self._withheld(message["text"]))
            await self._keeping_up()

    async def _catch_up(
        self,
        after: int,
        run: Run | None = None,
        told: list[Told] | None = None,
        more: bool = False,
        frame: Frame | None = None,
    ) -> None:
        """Send the stored events after ``after``, read :data:`PAGE` at a time with their
        words (``told``: the first page, already read, and ``more`` if it was full; ``frame``:
        that page as one message, made once for every viewer of its wave), until there are no
        more or the viewer falls :func:`_keeping_up` behind."""
        self.holding += 1
        try:
            if run is None:
                run = await database_sync_to_async(Run.objects.get)(pk=self.run_id)
            while not self.dropped:
                if told is None:
                    told = await database_sync_to_async(reveals.told)(run, self.hidden, after, PAGE)
                    more = len(told) == PAGE
                if frame is not None and self.sent == after and told:
                    self.sent = int(str(told[-1]["seq"]))
                    await frames.send(self, frame)
                else:
                    await self._send_events(told)
                frame = None
                if not more or not told or not await self._keeping_up():
                    break
                after, told = int(str(told[-1]["seq"])), None
                await asyncio.sleep(0)  # a long run goes in pages: others' turn between them
        finally:
            self.holding -= 1
        await self._release_held()

    async def _keeping_up(self) -> bool:
        """Whether the viewer reads what it is sent; if it is ``LOCKVIZ_MAX_UNSENT`` behind, it
        is dropped (closed with :data:`BEHIND`) and nothing more is read or sent for it."""
        if self.dropped:
            return False
        behind = unsent(self.scope)
        if behind <= settings.LOCKVIZ_MAX_UNSENT:
            return True
        self.dropped = True
        self.held.clear()
        counters.dropped("run")
        log.warning("dropped a viewer of run %s: %d bytes sent to it unread", self.run_id, behind)
        mb = settings.LOCKVIZ_MAX_UNSENT / 1024 / 1024
        await self.close(code=BEHIND, reason=f"too far behind: over {mb:g} MB unread; reconnect")
        return False

    async def _release_held(self) -> None:
        while self.held and not self.holding and not self.dropped:
            await self._forward(self.held.pop(0))

    async def _send_events(self, told: list[Told]) -> None:
        """Stored events the viewer has not been sent: one frame (a page is one write, not
        hundreds: a class arriving at once is that many catch-ups)."""
        fresh = [e for e in told if isinstance(e["seq"], int) and e["seq"] > self.sent]
        if not fresh:
            return
        self.sent = int(str(fresh[-1]["seq"]))
        frames = [{"type": "event", "event": event} for event in fresh]
        message = frames[0] if len(frames) == 1 else {"type": "events", "frames": frames}
        await self.send(text_data=json.dumps(message))

    def _withheld(self, text: str) -> str:
        """A live event's frame, without a withheld checkpoint's narration."""
        if not self.hidden or '"step"' not in text:
            return text
        frame = jsontext.loads(text, max_bytes=FRAME_BYTES, where="a live event")
        event = frame.get("event") if isinstance(frame, dict) else None
        if not isinstance(frame, dict) or not isinstance(event, dict):
            return text
        return json.dumps({**frame, "event": reveals.event(event, self.hidden, self.scenario)})

    async def _send_status(self, status: str, position: int | None) -> None:
        await self.send(
            text_data=json.dumps({"type": "status", "status": status, "position": position})
        )


def _read_after(values: Sequence[object] | None) -> int | str:
    """The ``after`` sequence number, or a message saying why it is not one."""
    if not values or values[0] in (None, ""):
        return 0
    value = values[0]
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return f"after must be a whole number ≥ 0, not {value!r}"
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):  # Infinity: refused by the decoder, too
        return f"after must be a whole number ≥ 0, not {value!r}"
    if number < 0 or str(number) != str(value).strip():
        return f"after must be a whole number ≥ 0, not {value!r}"
    return number


async def position(run: Run) -> int | None:
    """A queued run's place in line (with lab hosts, counted in the database: off the loop)."""
    if run.status != Run.Status.QUEUED:
        return None
    return await database_sync_to_async(queue_position)(run.pk)
