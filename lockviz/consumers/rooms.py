"""A room's live stream: what the presenter shows, the current poll, and for the presenter the
tally and who is present.

Connect to ``/ws/rooms/<code>/``. The first message is the room as it is now
(``{"type": "room", "state": {...}, "poll": {...}|null, "presenter": bool}``), so a late joiner
lands on the current moment at once; then ``{"type": "state", ...}`` whenever the presenter
shows something else, ``{"type": "poll", ...}`` when a question is asked or revealed, and, to
the presenter only, ``{"type": "tally", ...}`` and ``{"type": "present", ...}``. A student's
page counts as present while it is connected. Nothing a client sends is understood: answers are
POSTed (lockviz.views.rooms), so they go through the same checks as every form.
"""

from __future__ import annotations

import json

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from lockviz.audience import audience
from lockviz.broadcast import EventMessage, Message
from lockviz.models import Room
from lockviz.ops import metrics
from lockviz.teaching import rooms


class RoomConsumer(AsyncWebsocketConsumer):
    # No layer channel of its own (lockviz.audience): Channels checks for None.
    channel_layer_alias = None  # type: ignore[assignment]

    async def connect(self) -> None:
        code = str(self.scope["url_route"]["kwargs"]["code"])
        self.browser = await database_sync_to_async(self._browser)()
        self.room: Room | None = await database_sync_to_async(rooms.find)(code)
        await self.accept()
        if self.room is None:
            await self.send(text_data=json.dumps({"type": "error", "message": f"no room {code}"}))
            await self.close(code=4404)
            return
        metrics.viewers("room", +1)  # and -1 in disconnect: every found room's stream counts
        self.presenter = bool(self.browser) and self.browser == self.room.presenter
        self.groups_joined = [rooms.group(self.room)]
        if self.presenter:
            self.groups_joined.append(rooms.presenter_group(self.room))
        for name in self.groups_joined:
            await audience().join(name, self)
        first = await database_sync_to_async(self._now)()
        await self.send(text_data=json.dumps(first))
        if not self.presenter and self.browser:
            await database_sync_to_async(rooms.connected)(self.room, self.browser, +1)
            self.counted = True

    async def disconnect(self, code: int) -> None:
        if self.room is None:
            return
        metrics.viewers("room", -1)
        for name in getattr(self, "groups_joined", []):
            audience().leave(name, self)
        if getattr(self, "counted", False):
            await database_sync_to_async(rooms.connected)(self.room, self.browser, -1)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
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

    def _browser(self) -> str:
        """Which browser this is (its session names it; the database holds the session)."""
        session = self.scope.get("session")
        return str(session.get("browser") or "") if session is not None else ""

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
