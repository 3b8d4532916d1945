"""Fair shares of the lab per client: no one client can take what a class needs.

A client is its address: the socket's, or the trusted proxy's word for it (lockviz.edge.proxies,
``LOCKVIZ_TRUSTED_PROXIES``), the same for HTTP (``REMOTE_ADDR``) and WebSockets (the scope's
``client``), as :func:`client_of` counts it: an IPv6 host is its /64 (one host is given a whole
/64, and could take a fresh address from it for every request), an IPv4 address written as
IPv6 (``::ffff:10.1.2.3``) is that IPv4 address. A session counts too
(``LOCKVIZ_MAX_PER_BROWSER``), but a fresh cookie jar is a new session, so the address is what a
script cannot shed.

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

import ipaddress
from collections.abc import Mapping

from django.http import HttpRequest

SOCKET_REFUSED = 4429  # a stream refused for its client's share: 4000 + HTTP's 429
UNKNOWN = "unknown"  # a connection without an address (a test's, a UNIX socket's) is one client


def client_of(address: str) -> str:
    """The client ``address`` is counted as: an IPv6 address's /64, an IPv4-mapped address's
    IPv4 address, any other address (or a name that is none: a test's) as it is."""
    try:
        found = ipaddress.ip_address(address.split("%", 1)[0])  # without an IPv6 zone
    except ValueError:
        return address
    if isinstance(found, ipaddress.IPv6Address):
        if found.ipv4_mapped is not None:
            return str(found.ipv4_mapped)
        return str(ipaddress.IPv6Network((found, 64), strict=False))
    return str(found)


def address_of(request: HttpRequest) -> str:
    """The client an HTTP request came from (lockviz.edge.proxies left its address), as counted."""
    return client_of(str(request.META.get("REMOTE_ADDR") or UNKNOWN))


def address_in(scope: Mapping[str, object]) -> str:
    """The client a WebSocket came from (lockviz.edge.proxies left its address), as counted."""
    client = scope.get("client")
    return client_of(str(client[0])) if isinstance(client, list | tuple) and client else UNKNOWN
