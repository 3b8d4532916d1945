"""A room's live stream: what the presenter shows, the current poll, and for the presenter the
tally and who is present.

Connect to ``/ws/rooms/<code>/``. The first message is the room as it is now
(``{"type": "room", "state": {...}, "poll": {...}|null, "presenter": bool}``), so a late joiner
lands on the current moment at once; then ``{"type": "state", ...}`` whenever the presenter
shows something else, ``{"type": "poll", ...}`` when a question is asked or revealed, and, to
the presenter only, ``{"type": "tally", ...}`` and ``{"type": "present", ...}``. A member's
page (lockviz.teaching.members: it joined) counts as present while it is connected. Nothing a
client sends is understood: answers are POSTed (lockviz.views.rooms), so they go through the
same checks as every form; a client that sends more than :data:`MAX_MESSAGE` bytes (closed with
1009) or more than :data:`MAX_MESSAGES` messages in :data:`LISTEN_S` (4429) is cut off.

A code that leads nowhere is answered as everywhere (lockviz.teaching.codes): one sentence,
closed with 4404; a stream past its address's share (lockviz.shares), or a look-up past its
address's misses, is closed with 4429 and the sentence that says which.
"""

from __future__ import annotations

import json
import time
from collections import deque

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from lockviz.audience import audience
from lockviz.broadcast import EventMessage, Message
from lockviz.errors import TooMany
from lockviz.models import Member, Room
from lockviz.ops import metrics
from lockviz.shares import SOCKET_REFUSED, address_in
from lockviz.shares.sockets import Counted
from lockviz.teaching import codes, members, rooms

MAX_MESSAGE = 1024  # bytes: nothing a client sends is read, so nothing needs more
MAX_MESSAGES, LISTEN_S = 10, 10.0  # more than this many messages in this long: cut off


class RoomConsumer(Counted, AsyncWebsocketConsumer):
    # No layer channel of its own (lockviz.audience): Channels checks for None.
    channel_layer_alias = None  # type: ignore[assignment]
    room: Room | None = None

    async def connect(self) -> None:
        self.browser, self.member = "", None
        self.heard: deque[float] = deque()  # when its last messages came (receive)
        if not await self.take_share():  # one of its address's streams (lockviz.shares)
            return
        code = str(self.scope["url_route"]["kwargs"]["code"])
        try:  # a code is looked up as everywhere (lockviz.teaching.codes): throttled
            self.room = await database_sync_to_async(codes.find)(code, address_in(self.scope))
        except TooMany as refused:
            await self.refuse(refused.message, SOCKET_REFUSED)
            return
        if self.room is None:
            await self.refuse(codes.no_room(code), 4404)
            return
        self.browser, self.member = await database_sync_to_async(self._who)()
        await self.accept()
        metrics.viewers("room", +1)  # and -1 in disconnect: every found room's stream counts
        self.presenter = bool(self.browser) and self.browser == self.room.presenter
        self.groups_joined = [rooms.group(self.room)]
        if self.presenter:
            self.groups_joined.append(rooms.presenter_group(self.room))
        for name in self.groups_joined:
            await audience().join(name, self)
        first = await database_sync_to_async(self._now)()
        await self.send(text_data=json.dumps(first))
        if not self.presenter and self.member is not None:  # present: a member who joined
            await database_sync_to_async(rooms.connected)(self.room, self.member.browser, +1)
            self.counted = True

    async def disconnect(self, code: int) -> None:
        await self.give_share()
        if self.room is None or not hasattr(self, "groups_joined"):
            return
        metrics.viewers("room", -1)
        for name in self.groups_joined:
            audience().leave(name, self)
        if getattr(self, "counted", False) and self.member is not None:
            await database_sync_to_async(rooms.connected)(self.room, self.member.browser, -1)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Nothing sent is understood; a client that sends big or often is cut off."""
        size = len(text_data or "") + len(bytes_data or b"")
        now = time.monotonic()
        self.heard.append(now)
        while self.heard and self.heard[0] < now - LISTEN_S:
            self.heard.popleft()
        if size > MAX_MESSAGE:
            await self.close(code=1009)  # "message too big"
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
        """A message to the room (see lockviz.audience.Audience), already serialised."""
        if message["type"] == "frame":
            await self.send(text_data=message["text"])

    async def deliver_events(self, messages: list[EventMessage], text: str) -> None:
        for message in messages:
            await self.deliver(message)

    async def resync(self) -> None:
        """Messages may have been lost (the layer's Redis was away): the room as it is now."""
        if self.room is not None:
            await self.send(text_data=json.dumps(await database_sync_to_async(self._now)()))

    def _who(self) -> tuple[str, Member | None]:
        """Which browser this is, and the member it joined as, if it did (its session says:
        lockviz.teaching.members; the database holds the session)."""
        session = self.scope.get("session")
        browser = str(session.get("browser") or "") if session is not None else ""
        assert self.room is not None
        return browser, members.member(self.room, session)

    def _now(self) -> dict[str, object]:
        assert self.room is not None
        self.room.refresh_from_db()
        poll = rooms.current(self.room)
        now: dict[str, object] = {
            "type": "room",
            "state": self.room.state,
            "poll": rooms.public(poll, self.browser) if poll else None,
            "presenter": self.presenter,
        }
        if self.presenter:
            now["present"] = rooms.present(self.room)
            now["tally"] = rooms.tally(poll) if poll else None
        return now
