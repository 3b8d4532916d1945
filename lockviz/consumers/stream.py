"""What every live stream does whatever it streams: it holds things, and it always gives them
back; it reads what a client sends within bounds; it answers a bad message with a sentence.

A stream holds, while it lives, one of its address's streams (lockviz.shares.sockets), and then
what its kind takes: a run's watcher count, a member's presence, a place in this process's
audience, the viewers gauge. Each is taken with :meth:`Stream.hold`, which also says how to give
it back; everything held is given back, in reverse, in one ``finally`` around the consumer's
whole life (:meth:`Stream.__call__`): a normal close, a refusal, a client that vanished, a
cancelled task and a bug alike. Giving back twice is impossible (what is given back is
forgotten), so ``disconnect`` may give back early.

A client's message is read by :meth:`Stream.read` (lockviz.jsontext: bounded size and depth,
finite numbers) and anything a handler raises is caught in :meth:`Stream.websocket_receive`,
logged and answered: a hostile message never kills the stream. The close codes a stream sends
are :data:`CODES`, each one a server may send (RFC 6455: 1000, or 3000-4999 for applications;
Daphne's autobahn refuses any other, and the consumer would die in ``close``).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from asgiref.sync import sync_to_async
from asgiref.typing import WebSocketReceiveEvent
from channels.generic.websocket import AsyncWebsocketConsumer

from lockviz import jsontext
from lockviz.errors import JsonRefused, TooMany
from lockviz.jsontypes import JsonValue
from lockviz.shares import SOCKET_REFUSED, address_in, sockets

log = logging.getLogger(__name__)

BEHIND: Final = 4008  # a viewer dropped for not reading what it was sent
TOO_BIG: Final = 4009  # a message larger than the stream reads (4000 + RFC 6455's 1009)
FORBIDDEN: Final = 4403  # a member the presenter removed
NOT_FOUND: Final = 4404  # no such run or room (or not one this browser may see)
GONE: Final = 4410  # the room closed
CODES: Final = frozenset({1000, BEHIND, TOO_BIG, FORBIDDEN, NOT_FOUND, GONE, SOCKET_REFUSED})
MAX_MESSAGE: Final = 4096  # bytes: the largest message any stream reads


class Stream(AsyncWebsocketConsumer):
    """A live stream that gives back what it holds (see the module's docstring)."""

    # No layer channel of its own (lockviz.live.audience): Channels checks for None.
    channel_layer_alias = None  # type: ignore[assignment]
    scope: Any  # ASGI's, with what the middleware added (session, user, a proxy's client)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self._held = contextlib.AsyncExitStack()
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self.give_back()

    async def hold(self, give_back: Callable[[], Awaitable[object]]) -> None:
        """Something was taken: ``give_back`` returns it when the stream ends, however."""
        self._held.push_async_callback(give_back)

    async def give_back(self) -> None:
        """Give back everything held, newest first (each once: a second call gives nothing)."""
        held, self._held = self._held, contextlib.AsyncExitStack()
        try:
            await held.aclose()
        except Exception:  # logged, not raised: the rest was given back before it raised
            log.exception("a stream could not give back all it held")

    async def disconnect(self, code: int) -> None:
        await self.give_back()

    async def take_share(self, accepted: bool = False) -> bool:
        """One of its address's streams (lockviz.shares.sockets); False: refused, told why and
        closed (``accepted``: the connection was accepted already, the handshake answered
        before the count)."""
        address = address_in(self.scope)
        try:
            # The shared cache, not the database: off the one thread the database work of a
            # class arriving at once queues on.
            await sync_to_async(sockets.take, thread_sensitive=False)(address)
        except TooMany as refused:
            await self.refuse(refused.message, SOCKET_REFUSED, accepted)
            return False
        await self.hold(lambda: sync_to_async(sockets.give_back, thread_sensitive=False)(address))
        return True

    async def websocket_receive(self, message: WebSocketReceiveEvent) -> None:
        """A client's message, to :meth:`receive`: whatever goes wrong there is answered with
        a sentence, and the stream goes on."""
        try:
            await super().websocket_receive(message)
        except Exception:
            log.exception("a stream's message could not be handled")
            await self.error("that message could not be handled; the stream goes on")

    async def read(self, text_data: str | None, bytes_data: bytes | None) -> JsonValue | None:
        """A client's message as JSON (at most :data:`MAX_MESSAGE` bytes), or None once the
        client has been told why it is not read."""
        try:
            return jsontext.loads(text_data or bytes_data or "", max_bytes=MAX_MESSAGE,
                                  where="message")  # fmt: skip
        except JsonRefused as refused:
            await self.error(refused.message)
            return None

    async def error(self, text: str) -> None:
        await self.send(text_data=json.dumps({"type": "error", "message": text}))

    async def close(self, code: int | bool | None = None, reason: str | None = None) -> None:
        assert code in CODES or code in (None, True), f"close code {code} is not one of CODES"
        await super().close(code, reason)

    async def refuse(self, message: str, code: int, accepted: bool = False) -> None:
        """Accept (so the page can read it) unless ``accepted``, say ``message``, close with
        ``code`` and the start of ``message`` as the reason."""
        if not accepted:
            await self.accept()
        await self.error(message)
        # The close frame says it too, as much as fits its 123 bytes.
        await self.close(code=code, reason=message.encode()[:120].decode(errors="ignore"))
