"""The Content-Security-Policy of every page: scripts only from the site itself.

The front end is native ES modules served by the site (``script-src 'self'``): no inline script
and no ``eval`` runs, so markup that slipped past the templates' escaping could run nothing. A
page's data is a ``<script type="application/json">`` block, which is data, not script. Styles
may be inline (the diagram's SVG sets them per element); images may be ``data:`` (the QR code,
the icon); the live streams are WebSockets to this same host. No page may be framed
(``frame-ancestors 'none'``, as ``X-Frame-Options: DENY`` says to older browsers) but the embed,
which sets its own ``frame-ancestors`` (lockviz.views.embeds): a directive a response already
sets is kept, the rest is filled in. A downloaded one-file replay carries its own policy in a
``<meta>`` (lockviz/runs/webpage.py).
"""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse

POLICY: dict[str, str] = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self' 'unsafe-inline'",
    "img-src": "'self' data:",
    "font-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}
HEADER = "Content-Security-Policy"


def policy(request: HttpRequest, given: str = "") -> str:
    """The policy for a response to ``request``: ``given`` (a response's own directives) kept,
    the rest :data:`POLICY`'s, and WebSockets to this host."""
    try:
        host = request.get_host()
    except DisallowedHost:  # answered 400 already: no stream to allow
        host = ""
    sockets = f" ws://{host} wss://{host}" if host else ""
    directives = {**POLICY, "connect-src": f"'self'{sockets}"}
    for part in given.split(";"):
        name, _, value = part.strip().partition(" ")
        if name:
            directives[name] = value.strip()
    return "; ".join(f"{name} {value}" for name, value in directives.items())


class Middleware:
    """Adds the policy to every response (Django's own pages and the admin's too)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response[HEADER] = policy(request, response.get(HEADER, ""))
        return response
