"""A room's live stream: what the presenter shows, the current poll, and for the presenter the
tally and who is present.

Connect to ``/ws/rooms/<code>/``. The first message is the room as it is now (``{"type": "room",
"state": {...}, "order": n, "poll": {...}|null, "presenter": bool}``), so a late joiner lands on
the current moment at once; then ``{"type": "state", "state": {...}, "order": n}`` whenever the
presenter shows something else (never one older than a state this stream sent:
lockviz.teaching.shown), ``{"type": "poll", ...}`` when a question is asked or revealed, and, to
the presenter only, ``{"type": "tally", ...}`` and ``{"type": "present", ...}``. A member's page
(lockviz.teaching.members: it joined) counts as present while it is connected. Nothing a client
sends is understood: answers are POSTed (lockviz.views.rooms), so they go through the same
checks as every form; a client that sends more than :data:`MAX_MESSAGE` bytes (closed with 4009)
or more than :data:`MAX_MESSAGES` messages in :data:`LISTEN_S` (4429) is cut off. Whatever ends
a stream, what it held (its address's stream, its member's presence, its place in the audience,
the gauge) is given back (lockviz.consumers.stream).

A follower never runs ahead of the presenter: the events of a lesson or a replay the presenter
walks through come on this stream, ``{"type": "events", "run": id, "upto": seq, "events":
[...], "end_ms": t}``, only up to the presenter's position (:func:`lockviz.teaching.rooms.reach`),
with their stored words (``Run.said_after``) and without the answers not yet revealed
(lockviz.teaching.reveals); ``end_ms``, once the run is over, is its last event's time, so the
follower's time axis reaches as far as the presenter's, who holds them all (``null`` before).
When the presenter steps back, ``upto`` is lower than what the
follower holds: it drops the rest, and gets it again when the presenter passes it. A live run
page (``at`` null) is followed on the run's own stream, as it plays.

A code that leads nowhere is answered as everywhere (lockviz.teaching.codes): one sentence,
closed with 4404; that includes a room its presenter closed, one that removed this browser and
one that stopped joins to a browser that never joined. A follower already in a room when it is
closed gets ``{"type": "closed"}`` (closed with 4410); a member removed, ``{"type": "removed"}``
(4403). A stream past its address's share (lockviz.shares), or a look-up past its address's
misses, is closed with 4429 and the sentence that says which.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections import deque
from collections.abc import Mapping

from channels.db import database_sync_to_async
from django.db.models import Max

from lockviz import accounts, jsontext
from lockviz.consumers.stream import FORBIDDEN, GONE, NOT_FOUND, TOO_BIG, Stream
from lockviz.errors import TooMany
from lockviz.library import access
from lockviz.live.audience import Now, audience
from lockviz.live.broadcast import EventMessage, Message
from lockviz.live.frames import Frame
from lockviz.models import Member, Room, Run
from lockviz.narrator import Told
from lockviz.ops import counters
from lockviz.shares import SOCKET_REFUSED, address_in
from lockviz.teaching import codes, control, members, reveals, rooms

MAX_MESSAGE = 1024  # bytes: nothing a client sends is read, so nothing needs more
FRAME_BYTES = 1024 * 1024  # a room's frame, from the channel layer (lockviz.live.broadcast)
MAX_MESSAGES, LISTEN_S = 10, 10.0  # more than this many messages in this long: cut off


class RoomConsumer(Stream):
    room: Room | None = None

    async def connect(self) -> None:
        self.browser, self.member = "", None
        self.heard: deque[float] = deque()  # when its last messages came (receive)
        self.shown_run: str | None = None  # the run whose events this follower has
        self.upto = 0  # ... up to this seq
        self.run_end: float | None = None  # ... and where that run ends, once it is over
        self.order = -1  # the order of the last state sent (lockviz.teaching.shown), and it
        self.state: object = None
        self.sending = asyncio.Lock()  # one catch-up at a time, in the order states came
        self.tasks: set[asyncio.Future[None]] = set()
        if not await self.take_share():  # one of its address's streams (lockviz.shares)
            return
        code = str(self.scope["url_route"]["kwargs"]["code"])
        browser = await database_sync_to_async(self._browser)()
        try:  # a code is looked up as everywhere (lockviz.teaching.codes): throttled
            self.room = await database_sync_to_async(codes.find)(
                code, address_in(self.scope), browser
            )
        except TooMany as refused:
            await self.refuse(refused.message, SOCKET_REFUSED)
            return
        if self.room is None:  # no such room, or not this browser's (closed, removed, stopped)
            await self.refuse(codes.no_room(code), NOT_FOUND)
            return
        self.browser, self.member = browser, await database_sync_to_async(self._member)()
        await self.accept()
        counters.viewers("room", +1)  # every found room's stream counts
        await self.hold(self._ungauge)
        self.presenter = bool(self.browser) and self.browser == self.room.presenter
        if self.presenter:
            await database_sync_to_async(control.seen)(self.room)
        groups = [rooms.group(self.room)]
        if self.presenter:
            groups.append(rooms.presenter_group(self.room))
        for name in groups:
            await self.hold(functools.partial(self._leave, name))
            await audience().join(name, self)
        first = self._latest(await database_sync_to_async(self._now)())
        await self.send(text_data=json.dumps(first))
        if not self.presenter:
            await self._events_to(first["state"])
        if not self.presenter and self.member is not None:  # present: a member who joined
            await self.hold(database_sync_to_async(self._absent))
            await database_sync_to_async(self._present)()

    async def _ungauge(self) -> None:
        counters.viewers("room", -1)

    async def _leave(self, group: str) -> None:
        audience().leave(group, self)

    def _present(self) -> None:
        """This page's live connection: its member is present while it lasts."""
        assert self.room is not None and self.member is not None
        self.presence = rooms.arrived(self.room, self.member)

    def _absent(self) -> None:
        """On the database's thread, after :meth:`_present` however the stream ended."""
        presence, self.presence = getattr(self, "presence", ""), ""
        if presence and self.room is not None:
            rooms.left(self.room, presence)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Nothing sent is understood; a client that sends big or often is cut off."""
        size = len(text_data or "") + len(bytes_data or b"")
        now = time.monotonic()
        self.heard.append(now)
        while self.heard and self.heard[0] < now - LISTEN_S:
            self.heard.popleft()
        if size > MAX_MESSAGE:
            await self.close(code=TOO_BIG)
        elif len(self.heard) > MAX_MESSAGES:
            await self.refuse(
                f"more than {MAX_MESSAGES} messages in {LISTEN_S:g} s: this stream only speaks",
                SOCKET_REFUSED,
                accepted=True,
            )
        else:
            await self.send(
                text_data=json.dumps(
                    {"type": "error", "message": "this stream only speaks: answers are POSTed"}
                )
            )

    async def deliver(self, message: Message) -> None:
        """A message to the room (see lockviz.live.audience.Audience), already serialised."""
        if message["type"] == "frame":
            frame = jsontext.loads(message["text"], max_bytes=FRAME_BYTES, where="a room's frame")
            if not isinstance(frame, dict):
                return
            if frame.get("type") == "removed":  # for that member's pages alone
                if self.member is not None and frame.get("member") == self.member.pk:
                    await self.send(text_data=message["text"])
                    await self.close(code=FORBIDDEN)
                return
            if frame.get("type") == "state" and not self._newer(frame.get("order"), frame):
                return  # two requests' broadcasts crossed: this one is older than one sent
            await self.send(text_data=message["text"])
            if frame.get("type") == "closed" and not self.presenter:
                await self.close(code=GONE)
            elif frame.get("type") == "state" and not self.presenter:  # a task of its own:
                task = asyncio.ensure_future(self._events_to(frame["state"]))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)

    def _newer(self, order: object, frame: Mapping[str, object]) -> bool:
        """``frame``'s state, of this order, is newer than the last sent (and is now the last)."""
        if not isinstance(order, int) or order <= self.order:
            return False
        self.order, self.state = order, frame.get("state")
        return True

    def _latest(self, now: dict[str, object]) -> dict[str, object]:
        """The room as read, with a state no older than one this stream has sent already (a
        newer state's frame may have come while the database was read)."""
        if not self._newer(now["order"], now) and self.state is not None:
            now.update(state=self.state, order=self.order)
        return now

    async def _events_to(self, state: object) -> None:
        """Send this follower the events of the presenter's run up to their position."""
        async with self.sending:
            run_id, reach = rooms.reach(state)
            if run_id != self.shown_run:
                self.shown_run, self.upto, self.run_end = run_id, 0, None
            if run_id is None or reach is None:
                return  # nothing on screen, or a live run page: followed on the run's stream
            if reach <= self.upto:
                if reach < self.upto:  # the presenter stepped back: so does the follower
                    self.upto = reach
                    await self._send_events(run_id, [])
                return
            told = await database_sync_to_async(self._told)(run_id, self.upto, reach)
            if told:
                self.upto = max(s for e in told if isinstance(s := e["seq"], int))
                await self._send_events(run_id, told)

    async def _send_events(self, run_id: str, told: list[Told]) -> None:
        frame = {
            "type": "events",
            "run": run_id,
            "upto": self.upto,
            "events": told,
            "end_ms": self.run_end,
        }
        await self.send(text_data=json.dumps(frame))

    def _told(self, run_id: str, after: int, reach: int) -> list[Told]:
        run = Run.objects.filter(pk=run_id).first()
        if run is None or not access.may_see(self.browser, run):  # private: its class only
            return []
        if self.run_end is None and not run.live:  # over: its events are all stored
            self.run_end = run.events.aggregate(end=Max("t_ms"))["end"]
        return reveals.told_between(run, reveals.hidden(run, self.browser), after, reach)

    def deliver_now(self, first: int, last: int, frame: Frame) -> Now:
        return "careful"  # a follower's events stop at the presenter's position: one by one

    async def keep_up(self) -> None:
        return None

    async def deliver_events(self, messages: list[EventMessage], frame: Frame) -> None:
        for message in messages:
            await self.deliver(message)

    async def resync(self) -> None:
        """Messages may have been lost (the layer's Redis was away): the room as it is now."""
        if self.room is not None:
            now = self._latest(await database_sync_to_async(self._now)())
            await self.send(text_data=json.dumps(now))
            if not self.presenter:
                await self._events_to(now["state"])

    def _browser(self) -> str:
        """Which browser this is (its session names it, or the teacher logged in on it:
        lockviz.accounts; the database holds the session)."""
        return accounts.in_scope(self.scope)

    def _member(self) -> Member | None:
        """The member it joined as, if it did (its session's token says:
        lockviz.teaching.members)."""
        assert self.room is not None
        return members.member(self.room, self.scope.get("session"))

    def _now(self) -> dict[str, object]:
        assert self.room is not None
        self.room.refresh_from_db()
        poll = rooms.current(self.room)
        now: dict[str, object] = {
            "type": "room",
            "state": self.room.state,
            "order": self.room.state_order,
            "poll": rooms.public(poll, self.browser) if poll else None,
            "presenter": self.presenter,
        }
        if self.presenter:
            now["present"] = rooms.present(self.room)
            now["tally"] = rooms.tally(poll) if poll else None
        return now
