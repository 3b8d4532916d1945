"""The live stream of one run's events over a WebSocket.

Connect to ``/ws/runs/<id>/?after=N`` to receive every event with ``seq > N``: first those
already stored, then live ones, each exactly once. A viewer that reconnects passes the last
``seq`` it has and resumes where it stopped. It may also send ``{"type": "resume", "after": N}``
at any time to be sent again what follows N. Anything else it sends gets an error message that
says what was wrong; the stream goes on.

Server messages: ``{"type": "event", "event": {...}}``,
``{"type": "status", "status": "queued"|"running"|"finished"|"failed", "position": n|null}``,
``{"type": "error", "message": "..."}``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from lockviz import broadcast
from lockviz.models import Run
from lockviz.runs import queue_position


class RunConsumer(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        broadcast.bind_loop(asyncio.get_running_loop())
        self.run_id: str = self.scope["url_route"]["kwargs"]["run_id"]
        self.sent = 0
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
        # Join first, then catch up: anything published meanwhile is queued for us and
        # dropped by seq if the catch-up already delivered it.
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self._send_status(run.status, queue_position(run.pk))
        await self._catch_up(after)

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

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
        self.sent = min(self.sent, after)
        await self._catch_up(after)

    async def run_event(self, message: dict[str, Any]) -> None:
        await self._send_event(message["event"], message.get("published_ns"))

    async def run_status(self, message: dict[str, Any]) -> None:
        await self._send_status(message["status"], message.get("position"))

    async def _catch_up(self, after: int) -> None:
        run = await database_sync_to_async(Run.objects.get)(pk=self.run_id)
        for event in await database_sync_to_async(run.events_after)(after):
            await self._send_event(event)

    async def _send_event(self, event: dict[str, Any], published_ns: int | None = None) -> None:
        if event["seq"] <= self.sent:
            return
        self.sent = event["seq"]
        frame: dict[str, Any] = {"type": "event", "event": event}
        if published_ns is not None:
            frame["published_ns"] = published_ns
        await self.send(text_data=json.dumps(frame))

    async def _send_status(self, status: str, position: int | None) -> None:
        await self.send(
            text_data=json.dumps({"type": "status", "status": status, "position": position})
        )

    async def _error(self, text: str) -> None:
        await self.send(text_data=json.dumps({"type": "error", "message": text}))


def _read_after(values: list[Any] | None) -> int | str:
    """The ``after`` sequence number, or a message saying why it is not one."""
    if not values or values[0] in (None, ""):
        return 0
    value = values[0]
    if isinstance(value, bool):
        return f"after must be a whole number ≥ 0, not {value!r}"
    try:
        number = int(value)
    except (TypeError, ValueError):
        return f"after must be a whole number ≥ 0, not {value!r}"
    if number < 0 or str(number) != str(value).strip():
        return f"after must be a whole number ≥ 0, not {value!r}"
    return number
