"""The Content-Security-Policy of every page: scripts only from the site itself.

The front end is native ES modules served by the site (``script-src 'self'``): no inline script
and no ``eval`` runs, so markup that slipped past the templates' escaping could run nothing. A
page's data is a ``<script type="application/json">`` block, which is data, not script. Styles
may be inline (the diagram's SVG sets them per element); images may be ``data:`` (the QR code,
the icon) or ``blob:`` (a PNG export draws the diagram through one); the live streams are
WebSockets to this same host. No page may be framed (``frame-ancestors 'none'``, as
``X-Frame-Options: DENY`` says to older browsers) but the embed, which sets its own
``frame-ancestors`` (lockviz.views.embeds): a directive a response already sets is kept, the
rest is filled in. A downloaded one-file replay carries its own policy in a ``<meta>``
(lockviz/runs/webpage.py).

Two pages are written by a library, not by our templates: LTI's OIDC login (its cookie check)
and deep linking's answer (a form that posts the signed answer back to the LMS), each with an
inline script that submits or redirects. :func:`allow_inline` lets exactly those scripts run
(their SHA-256 hashes) and those forms post to where they name, on that response alone.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Callable
from urllib.parse import urlsplit

from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse

POLICY: dict[str, str] = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self' 'unsafe-inline'",
    "img-src": "'self' data: blob:",
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


_INLINE = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.DOTALL | re.IGNORECASE)
_ACTION = re.compile(r"<form[^>]*\baction=[\"']([^\"']+)[\"']", re.IGNORECASE)


def allow_inline(response: HttpResponse) -> HttpResponse:
    """``response`` (a page a library wrote) with a policy that lets its own inline scripts run
    and its forms post where they say, and nothing more."""
    text = response.content.decode(errors="replace")
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(code.encode()).digest()).decode() + "'"
        for code in _INLINE.findall(text)
    )
    targets = {
        f"{parts.scheme}://{parts.netloc}"
        for action in _ACTION.findall(text)
        if (parts := urlsplit(html.unescape(action))).scheme in ("http", "https")
    }
    response[HEADER] = (
        f"script-src 'self' {hashes}".rstrip()
        + "; "
        + f"form-action 'self' {' '.join(sorted(targets))}".rstrip()
    )
    return response


class Middleware:
    """Adds the policy to every response (Django's own pages and the admin's too)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response[HEADER] = policy(request, response.get(HEADER, ""))
        return response
