"""How many live streams (runs' and rooms') one address holds open at once.

Not a rate: a connection is held, and what matters is how many are open now. So this is a count
in the shared cache, one up on connect and one down on disconnect, not a limiter's window
(django-ratelimit only ever counts up). A process killed with streams open never counts them
down; so the count expires :data:`FORGET_S` after its address last opened a stream it was let
open, and a leaked count cannot outlive that (a refused stream does not renew it: a script that
keeps knocking cannot keep a leak alive). The price: an address whose streams all stay open
longer than that without a new one is undercounted from then on, never refused wrongly. The
streams themselves give back what they take however they end (lockviz.consumers.stream).
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.cache import cache

from lockviz.errors import TooMany

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
        if held <= most:  # only a stream let through renews the count's life: a refused
            cache.touch(key, FORGET_S)  # one must not keep a leaked count alive for ever
    except Exception:  # the shared cache is away: a share is fairness, not authorization
        log.warning("could not count a stream of %s: let through", address, exc_info=True)
        return
    if held > most:
        _down(key)
        raise TooMany(
            f"This address has {most} live streams open, as many as one address may "
            "(LOCKVIZ_SOCKETS_PER_ADDRESS): close a tab, then reload this page.",
            retry_after_s=30,
        )


def give_back(address: str) -> None:
    """A stream of ``address`` closed (one that :func:`take` let through)."""
    if settings.LOCKVIZ_SOCKETS_PER_ADDRESS > 0:
        _down(_key(address))


def _down(key: str) -> None:
    """One less in the count at ``key``, its lifetime untouched (Redis' DECR keeps a TTL)."""
    try:
        if cache.decr(key) < 0:
            cache.delete(key)
    except ValueError:
        pass  # forgotten already (see the module's docstring)
    except Exception:
        log.warning("could not count down %s", key, exc_info=True)


def held(address: str) -> int:
    """How many streams ``address`` holds open now, as counted."""
    return int(cache.get(_key(address), 0))
