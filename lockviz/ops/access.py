"""Who may read ``/metrics``: a scraper on an allowed address, straight, or one with the token.

The metrics say how busy the lab is and how many people watch: not for the class, and the
app is often reachable by the class only through a reverse proxy. So ``/metrics`` answers when

* the connection comes straight from an address in ``LOCKVIZ_METRICS_FROM`` (default: this
  host's loopback, ``127.0.0.0/8`` and ``::1``) **and** the request carries no forwarding
  header — a request through the proxy has one (``X-Forwarded-For``), and it arrives from the
  proxy's address, which may well be loopback; lockviz.edge.proxies notes such headers even when it
  drops them from an untrusted peer (:data:`lockviz.edge.proxies.VIA_PROXY`);
* or it carries ``Authorization: Bearer <LOCKVIZ_METRICS_TOKEN>`` (when that is set): a
  Prometheus elsewhere, through the proxy or not, compared in constant time.

Anything else gets the 404 any unknown path gets, so the endpoint does not say it exists.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping

from django.conf import settings
from django.http import HttpRequest

from lockviz.edge.proxies import VIA_PROXY, trusted

# Headers only a proxy adds; Django's META names for them.
FORWARDING_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_FORWARDED", "HTTP_X_REAL_IP")


def may_read_metrics(request: HttpRequest) -> bool:
    return has_token(request) or (straight_from_allowed(request) and not via_proxy(request))


def has_token(request: HttpRequest) -> bool:
    expected: str = settings.LOCKVIZ_METRICS_TOKEN
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if not expected or scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), expected.encode())


def straight_from_allowed(request: HttpRequest) -> bool:
    return trusted(request.META.get("REMOTE_ADDR") or "", settings.LOCKVIZ_METRICS_FROM)


def via_proxy(request: HttpRequest) -> bool:
    """Whether the request came through a proxy: it carries (or carried) a forwarding header."""
    scope = getattr(request, "scope", None)  # ASGI: the headers as they arrived, noted
    noted = bool(scope.get(VIA_PROXY)) if isinstance(scope, Mapping) else False
    return noted or any(header in request.META for header in FORWARDING_HEADERS)
