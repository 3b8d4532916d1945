"""Fair shares of the lab per client: no one client can take what a class needs.

A client is its address: the socket's, or the trusted proxy's word for it (lockviz.proxies,
``LOCKVIZ_TRUSTED_PROXIES``), the same for HTTP (``REMOTE_ADDR``) and WebSockets (the scope's
``client``). A session counts too (``LOCKVIZ_MAX_PER_BROWSER``), but a fresh cookie jar is a
new session, so the address is what a script cannot shed.

- :mod:`lockviz.shares.rates`: how often one address may do something (import, open a room,
  join, guess a code, answer), counted by django-ratelimit on the shared cache (``CACHES``: the
  channel layer's Redis when several app processes share one), so every replica counts one
  share.
- :mod:`lockviz.shares.runs`: how many runs one client may have live at once, counted in the
  database, where every replica's runs are; a room's members count against the room's
  allowance, which its presenter sets, not against their address (a class behind one NAT).
- :mod:`lockviz.shares.sockets`: how many live streams one address holds open at once.

Past a share: :class:`lockviz.errors.TooMany` (429) with a sentence naming the share and
``Retry-After``; a stream closes with code :data:`SOCKET_REFUSED` and that sentence.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.http import HttpRequest

SOCKET_REFUSED = 4429  # a stream refused for its client's share: 4000 + HTTP's 429
UNKNOWN = "unknown"  # a connection without an address (a test's, a UNIX socket's) is one client


def address_of(request: HttpRequest) -> str:
    """The address an HTTP request came from, as lockviz.proxies left it."""
    return str(request.META.get("REMOTE_ADDR") or UNKNOWN)


def address_in(scope: Mapping[str, object]) -> str:
    """The address a WebSocket came from, as lockviz.proxies left it."""
    client = scope.get("client")
    return str(client[0]) if isinstance(client, list | tuple) and client else UNKNOWN
