"""How many live streams (runs' and rooms') one address holds open at once.

Not a rate: a connection is held, and what matters is how many are open now. So this is a count
in the shared cache, one up on connect and one down on disconnect, not a limiter's window
(django-ratelimit only ever counts up). A process killed with streams open never counts them
down; so the count expires :data:`FORGET_S` after its address last connected, and a leaked count
cannot outlive that. The price: an address whose streams all stay open longer than that without
a new one is undercounted from then on, never refused wrongly.
"""

from __future__ import annotations

import json
import logging
from typing import Any, cast

from asgiref.sync import sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.core.cache import cache

from lockviz.errors import TooMany
from lockviz.shares import SOCKET_REFUSED, address_in

log = logging.getLogger(__name__)
FORGET_S = 3 * 3600  # a lesson's length, and then some


def _key(address: str) -> str:
    return f"shares:sockets:{address}"


def take(address: str) -> None:
    """One more stream open from ``address``; :class:`TooMany` (and not counted) past its share
    (``LOCKVIZ_SOCKETS_PER_ADDRESS``; 0: no limit)."""
    most = settings.LOCKVIZ_SOCKETS_PER_ADDRESS
    if most <= 0:
        return
    key = _key(address)
    try:
        cache.add(key, 0, FORGET_S)
        held = cache.incr(key)
        cache.touch(key, FORGET_S)
    except Exception:  # the shared cache is away: a share is fairness, not authorization
        log.warning("could not count a stream of %s: let through", address, exc_info=True)
        return
    if held > most:
        give_back(address)
        raise TooMany(
            f"This address has {most} live streams open, as many as one address may "
            "(LOCKVIZ_SOCKETS_PER_ADDRESS): close a tab, then reload this page.",
            retry_after_s=30,
        )


def give_back(address: str) -> None:
    """A stream of ``address`` closed (one that :func:`take` let through)."""
    if settings.LOCKVIZ_SOCKETS_PER_ADDRESS <= 0:
        return
    try:
        if cache.decr(_key(address)) < 0:
            cache.set(_key(address), 0, FORGET_S)
    except ValueError:
        pass  # forgotten already (see the module's docstring)
    except Exception:
        log.warning("could not count down a stream of %s", address, exc_info=True)


def held(address: str) -> int:
    """How many streams ``address`` holds open now, as counted."""
    return int(cache.get(_key(address), 0))


class Counted:
    """For a consumer (a live stream): takes one of its address's streams on connect, gives it
    back on disconnect; refused, it says why and closes with :data:`SOCKET_REFUSED`."""

    scope: Any
    _share: str | None = None  # the address whose stream this holds, once taken

    async def take_share(self, accepted: bool = False) -> bool:
        """Whether this stream may open (False: it has been told why and closed); ``accepted``:
        the connection was accepted already (the handshake answered before the count)."""
        address = address_in(self.scope)
        try:
            # The shared cache, not the database: off the one thread the database work of a
            # class arriving at once queues on.
            await sync_to_async(take, thread_sensitive=False)(address)
        except TooMany as refused:
            await self.refuse(refused.message, SOCKET_REFUSED, accepted)
            return False
        self._share = address
        return True

    async def give_share(self) -> None:
        if self._share is not None:
            address, self._share = self._share, None
            await sync_to_async(give_back, thread_sensitive=False)(address)

    async def refuse(self, message: str, code: int, accepted: bool = False) -> None:
        """Accept (so the page can read it) unless ``accepted``, say ``message``, close with
        ``code`` and the start of ``message`` as the reason."""
        consumer = cast(AsyncWebsocketConsumer, self)
        if not accepted:
            await consumer.accept()
        await consumer.send(text_data=json.dumps({"type": "error", "message": message}))
        # The close frame says it too, as much as fits its 123 bytes.
        await consumer.close(code=code, reason=message.encode()[:120].decode(errors="ignore"))
