"""Who is on the other end, behind a reverse proxy: believed only from the proxies we were told of.

A school puts lockviz behind nginx or Caddy, often over HTTPS. The app then sees the proxy's
address as its peer and plain HTTP, while the browser speaks HTTPS to a public name: the proxy
says what it saw in ``X-Forwarded-For``, ``X-Forwarded-Proto`` and ``X-Forwarded-Host``. Anyone
can send those headers, so they are believed only when the connection comes straight from an
address in ``LOCKVIZ_TRUSTED_PROXIES``; from anyone else they are dropped before Django or
Channels sees them, and a client cannot forge its address or its scheme.

From a trusted peer, ASGI's ``scope`` is rewritten the way Django and Channels read it:
``client`` becomes the nearest address in ``X-Forwarded-For`` that is not itself a trusted proxy
(walking from the right: the left end is whatever the client wrote), ``scheme`` the proxy's
``X-Forwarded-Proto`` (``https`` → ``wss`` for a WebSocket), and the ``host`` header the proxy's
``X-Forwarded-Host`` when it sent one. So ``request.is_secure()``, the CSRF origin check, the
join link and ``REMOTE_ADDR`` all say what the browser saw.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, Iterable, MutableMapping

from lockviz.edge.bodylimit import Receive, Send, headers

Scope = MutableMapping[str, object]  # ASGI's scope (see lockviz.edge.bodylimit)
ASGIApp = Callable[..., Awaitable[None]]  # Channels' router spells its arguments its own way
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

FORWARDED = (b"x-forwarded-for", b"x-forwarded-proto", b"x-forwarded-host")
# In every scope: whether the request carried any of those, believed or dropped. Something
# only for callers on the host itself (/metrics: lockviz.ops.access) must not answer one that
# came through a proxy, trusted or not.
VIA_PROXY = "lockviz.via_proxy"


def networks(spec: Iterable[str], setting: str = "LOCKVIZ_TRUSTED_PROXIES") -> tuple[Network, ...]:
    """``["10.0.0.2", "172.28.0.0/16", "::1"]`` as networks; ValueError names a bad entry."""
    found = []
    for entry in spec:
        entry = entry.strip()
        if not entry:
            continue
        try:
            found.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ValueError(
                f"{setting}: {entry!r} is not an IP address or network "
                "(e.g. 127.0.0.1, 172.28.0.0/16)"
            ) from None
    return tuple(found)


def trusted(address: str, among: tuple[Network, ...]) -> bool:
    try:
        ip = ipaddress.ip_address(address.strip().strip("[]"))
    except ValueError:
        return False
    return any(ip in network for network in among)


def client_address(forwarded_for: str, among: tuple[Network, ...]) -> str | None:
    """The client that reached the first trusted proxy: the rightmost untrusted address."""
    hops = [hop.strip() for hop in forwarded_for.split(",") if hop.strip()]
    for hop in reversed(hops):
        if not trusted(hop, among):
            try:
                return str(ipaddress.ip_address(hop.strip("[]")))
            except ValueError:
                return None  # not an address: believe nothing further left
    return hops[0] if hops else None


class ForwardedBy:
    """ASGI middleware: the proxy's word about the client, from trusted proxies only."""

    def __init__(self, app: ASGIApp, proxies: tuple[Network, ...]) -> None:
        self.app = app
        self.proxies = proxies

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            scope = self.rewrite(scope)
        await self.app(scope, receive, send)

    def rewrite(self, scope: Scope) -> Scope:
        sent = headers(scope)
        said = {n.decode(): v.decode("latin-1") for n, v in sent if n in FORWARDED}
        kept = [(name, value) for name, value in sent if name not in FORWARDED]
        client = scope.get("client")
        peer = str(client[0]) if isinstance(client, list | tuple) and client else ""
        scope = dict(scope)
        scope[VIA_PROXY] = bool(said)
        if not (self.proxies and trusted(peer, self.proxies)):
            scope["headers"] = kept  # nobody we know said it: as if unsaid
            return scope
        scope["headers"] = sent
        if said.get("x-forwarded-for"):
            address = client_address(said["x-forwarded-for"], self.proxies)
            if address:
                scope["client"] = (address, 0)
        proto = said.get("x-forwarded-proto", "").rsplit(",", 1)[-1].strip().lower()
        if proto in ("http", "https"):
            secure = proto == "https"
            if scope["type"] == "websocket":
                scope["scheme"] = "wss" if secure else "ws"
            else:
                scope["scheme"] = proto
        host = said.get("x-forwarded-host", "").rsplit(",", 1)[-1].strip()
        if host:
            scope["headers"] = [(n, v) for n, v in sent if n != b"host"] + [
                (b"host", host.encode("latin-1"))
            ]
        return scope
