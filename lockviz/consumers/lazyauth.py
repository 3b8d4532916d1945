"""Who is on the other end of a WebSocket, read when a consumer first asks, not before it runs.

Channels' ``AuthMiddlewareStack`` reads the user from the session before the consumer is even
called: one trip per connection to the one thread Channels runs database work on, queued behind
everything else there. A class that connects at once queued 300 of them ahead of its own
streams. Here ``scope["user"]`` is read from the session the first time sync code reads it,
which the consumers do only on their own trip to the database (lockviz.consumers.arrivals reads
a whole wave's in one), exactly as Channels would have read it.
"""

from __future__ import annotations

from asgiref.typing import ASGIApplication
from channels.auth import AuthMiddleware, get_user
from channels.sessions import CookieMiddleware, SessionMiddleware
from django.utils.functional import SimpleLazyObject


class LazyAuthMiddleware(AuthMiddleware):
    """``scope["user"]`` as Channels' ``get_user`` reads it, on first reading (sync code only:
    it reads the session and the user from the database)."""

    # Channels' stubs type the scope privately; it is a dict here as there.
    def populate_scope(self, scope: dict[str, object]) -> None:  # type: ignore[override]
        if "session" not in scope:
            raise ValueError("LazyAuthMiddleware needs SessionMiddleware above it")
        if "user" not in scope:
            read = getattr(get_user, "func")  # noqa: B009 (the sync function it wraps)
            scope["user"] = SimpleLazyObject(lambda: read(scope))

    async def resolve_scope(self, scope: dict[str, object]) -> None:  # type: ignore[override]
        return None  # on first reading, in the consumer's own trip to the database


def LazyAuthMiddlewareStack(inner: ASGIApplication) -> CookieMiddleware:
    return CookieMiddleware(SessionMiddleware(LazyAuthMiddleware(inner)))
