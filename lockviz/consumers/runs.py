"""The live stream of one run's events over a WebSocket.

Connect to ``/ws/runs/<id>/?after=N`` to receive every event with ``seq > N``: first those
already stored, then live ones, each exactly once. A viewer that reconnects passes the last
``seq`` it has and resumes where it stopped. It may also send ``{"type": "resume", "after": N}``
at any time to be sent again what follows N. Anything else it sends gets an error message that
says what was wrong; the stream goes on.

Server messages: ``{"type": "event", "event": {...}}`` (live ones also carry ``published_ns``,
see lockviz.broadcast), ``{"type": "events", "frames": [<event message>, ...]}`` (consecutive
live events that arrived together, in order),
``{"type": "status", "status": "queued"|"running"|"finished"|"failed", "position": n|null}``,
``{"type": "error", "message": "..."}``.

Live messages come from this process's audience of the run (lockviz.broadcast), one call of
``deliver`` per message, not through a layer channel and a Channels dispatch of the viewer's own.
A live event arrives already serialised and is forwarded as it is. While the stream reads the
database (the catch-up, a resume) live messages are held, and sent after it unless it already
sent them. When a live seq skips one (a message lost on the way), the gap is read back from the
database before the stream goes on.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.db.models import F

from lockviz import broadcast
from lockviz.audience import audience
from lockviz.broadcast import EventMessage, Message
from lockviz.models import Run
from lockviz.narrator import Told
from lockviz.ops import metrics
from lockviz.runs.recorder import queue_position
from lockviz.shares.sockets import Counted

RESUME_EVERY_S = 0.5  # a viewer's resumes: at most one per this long
PAGE = 500  # events sent in one go before the stream lets others' messages through


class RunConsumer(Counted, AsyncWebsocketConsumer):
    # No layer channel of its own (lockviz.audience): Channels checks for None.
    channel_layer_alias = None  # type: ignore[assignment]

    async def connect(self) -> None:
        if not await self.take_share():  # one of its address's streams (lockviz.shares)
            return
        self.run_id: str = self.scope["url_route"]["kwargs"]["run_id"]
        self.sent = 0
        self.last_resume = 0.0
        self.holding = 0  # catch-ups reading the database; live messages wait in held
        self.held: list[Message] = []
        self.repair: asyncio.Future[None] | None = None
        self.group = broadcast.group_name(self.run_id)
        run = await database_sync_to_async(Run.objects.filter(pk=self.run_id).first)()
        await self.accept()
        if run is None:
            await self._error(f"there is no run {self.run_id!r}")
            await self.close(code=4404)
            return
        after = _read_after(parse_qs(self.scope.get("query_string", b"").decode()).get("after"))
        if isinstance(after, str):
            await self._error(after)
            after = 0
        self.sent = after  # the viewer has everything up to here
        # Join first, then catch up: anything published meanwhile is held for us and
        # dropped by seq if the catch-up already delivered it.
        self.holding += 1
        try:
            await audience().join(self.group, self)
            await self._watching(+1)  # a queued run with nobody watching is cancelled
            await self._send_status(run.status, queue_position(run.pk))
            await self._catch_up(after)
        finally:
            self.holding -= 1
        await self._release_held()

    async def disconnect(self, code: int) -> None:
        await self.give_share()
        if getattr(self, "counted", False):
            await self._watching(-1)
        if hasattr(self, "group"):
            audience().leave(self.group, self)

    async def _watching(self, change: int) -> None:
        self.counted = change > 0
        metrics.viewers("run", change)
        watchers = Run.objects.filter(pk=self.run_id)
        await database_sync_to_async(watchers.update)(watchers=F("watchers") + change)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        try:
            message = json.loads(text_data or "")
        except ValueError:
            await self._error('messages must be JSON, like {"type": "resume", "after": 12}')
            return
        if not isinstance(message, dict) or message.get("type") != "resume":
            await self._error(
                'unknown message; the only one understood is {"type": "resume", "after": N}'
            )
            return
        after = _read_after([message.get("after")])
        if isinstance(after, str):
            await self._error(after)
            return
        now = time.monotonic()
        if now - self.last_resume < RESUME_EVERY_S:  # a resume re-reads the run: bounded
            await self._error(
                f"resume at most once every {RESUME_EVERY_S:g} s; wait and send it again"
            )
            return
        self.last_resume = now
        self.sent = min(self.sent, after)
        await self._catch_up(after)

    async def deliver(self, message: Message) -> None:
        """A live message from the run's group (see lockviz.audience.Audience)."""
        if self.holding or self.held:
            self.held.append(message)
        elif message["type"] == "run.event" and message["seq"] > self.sent + 1:
            self.held.append(message)  # a message went missing: read the gap back first
            self.repair = asyncio.ensure_future(self._catch_up(self.sent))
        else:
            await self._forward(message)

    async def deliver_events(self, messages: list[EventMessage], text: str) -> None:
        """Consecutive live events, and ``text``: them as one ``events`` frame."""
        first, last = messages[0]["seq"], messages[-1]["seq"]
        in_order = first == self.sent + 1 and last - first + 1 == len(messages)
        if self.holding or self.held or not in_order:
            for message in messages:  # the careful way, one by one
                await self.deliver(message)
        else:
            self.sent = last
            await self.send(text_data=text)

    async def resync(self) -> None:
        """Live messages may have been lost (the layer's Redis was away): what the database
        holds beyond what this viewer has, and the run's status now."""
        run = await database_sync_to_async(Run.objects.filter(pk=self.run_id).first)()
        if run is not None:
            await self._send_status(run.status, queue_position(run.pk))
            await self._catch_up(self.sent)

    async def _forward(self, message: Message) -> None:
        if message["type"] == "run.status":
            await self._send_status(message["status"], message["position"])
        elif message["type"] == "run.event" and message["seq"] > self.sent:
            self.sent = message["seq"]
            await self.send(text_data=message["text"])

    async def _catch_up(self, after: int) -> None:
        self.holding += 1
        try:
            run = await database_sync_to_async(Run.objects.get)(pk=self.run_id)
            told = await database_sync_to_async(run.said_after)(after)
            for start in range(0, len(told), PAGE):  # a long run goes in pages: others' turn
                for event in told[start : start + PAGE]:
                    await self._send_event(event)
                await asyncio.sleep(0)
        finally:
            self.holding -= 1
        await self._release_held()

    async def _release_held(self) -> None:
        while self.held and not self.holding:
            await self._forward(self.held.pop(0))

    async def _send_event(self, event: Told) -> None:
        seq = event["seq"]
        if not isinstance(seq, int) or seq <= self.sent:
            return
        self.sent = seq
        await self.send(text_data=json.dumps({"type": "event", "event": event}))

    async def _send_status(self, status: str, position: int | None) -> None:
        await self.send(
            text_data=json.dumps({"type": "status", "status": status, "position": position})
        )

    async def _error(self, text: str) -> None:
        await self.send(text_data=json.dumps({"type": "error", "message": text}))


def _read_after(values: Sequence[object] | None) -> int | str:
    """The ``after`` sequence number, or a message saying why it is not one."""
    if not values or values[0] in (None, ""):
        return 0
    value = values[0]
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return f"after must be a whole number ≥ 0, not {value!r}"
    try:
        number = int(value)
    except (TypeError, ValueError):
        return f"after must be a whole number ≥ 0, not {value!r}"
    if number < 0 or str(number) != str(value).strip():
        return f"after must be a whole number ≥ 0, not {value!r}"
    return number
