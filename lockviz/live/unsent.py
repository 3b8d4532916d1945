"""How far behind a WebSocket viewer is: the bytes its server holds for it, not yet sent.

ASGI has no back-pressure: ``send`` returns once the server has taken a frame, whether or not
the viewer reads. A viewer that never reads (a script, a laptop asleep) would have every frame
of every run it watches held for it in the server's memory, for as long as it stays connected.
The consumer (lockviz.consumers.runs) drops such a viewer once what it has not been sent passes
``LOCKVIZ_MAX_UNSENT``; this module tells it how much that is.

Under Daphne (``serve`` calls :func:`measure_daphne` once) each WebSocket's scope carries, under
:data:`UNSENT`, a function that returns the bytes its Twisted transport still holds (and, under
``lockviz.live.frames.PREPARED``, a writer of frames framed once for all viewers); and a close
the application sends with a ``reason`` is sent with that reason (Daphne's own close drops it),
and autobahn's debug line of each connection's settings is formatted only if it is written.
Under another server (the tests' ``WebsocketCommunicator``) the scope has none, and
:func:`unsent` answers 0: nothing is held that the app could know of.
"""

from __future__ import annotations

import pprint
from collections.abc import Callable, Mapping
from typing import Any

from lockviz.live import frames

UNSENT = "lockviz.live.unsent"  # the scope's key: () -> bytes held for the viewer, not yet sent


def unsent(scope: Mapping[str, object]) -> int:
    """The bytes the server holds for this connection, not yet sent (0 when it cannot say)."""
    measure = scope.get(UNSENT)
    return int(measure()) if callable(measure) else 0


# Twisted's transport and Daphne's server and protocol objects stay untyped here: neither library
# ships types, and what is read of them is their private state, by getattr.
def held(transport: object) -> int:
    """What a Twisted TCP transport has buffered to write (abstract.FileDescriptor keeps it in
    ``dataBuffer`` past ``offset``, and ``_tempDataLen`` bytes not joined to it yet)."""
    buffered = getattr(transport, "dataBuffer", b"")
    return (
        len(buffered) - int(getattr(transport, "offset", 0)) + getattr(transport, "_tempDataLen", 0)
    )


def measure_daphne() -> None:
    """Give each of Daphne's WebSocket scopes its :data:`UNSENT` measure, and let a close carry
    its reason (once per process)."""
    from daphne import server, ws_protocol

    if getattr(server.Server.create_application, "lockviz_unsent", False):
        return
    create = server.Server.create_application

    def create_application(self: Any, protocol: Any, scope: dict[str, object]) -> Any:
        if scope.get("type") == "websocket":
            measure: Callable[[], int] = lambda: held(getattr(protocol, "transport", None))  # noqa: E731
            scope[UNSENT] = measure
            scope[frames.PREPARED] = frames.writer(protocol)  # one framing for every viewer
        return create(self, protocol, scope)

    create_application.lockviz_unsent = True  # type: ignore[attr-defined]
    server.Server.create_application = create_application

    reply = ws_protocol.WebSocketProtocol.handle_reply

    def handle_reply(self: Any, message: Mapping[str, object]) -> None:
        reason = message.get("reason")
        if message.get("type") == "websocket.close" and reason and self.state == self.STATE_OPEN:
            self.sendClose(code=message.get("code") or 1000, reason=str(reason)[:120])
            return
        reply(self, message)

    ws_protocol.WebSocketProtocol.handle_reply = handle_reply

    # autobahn formats every connection's settings for a debug line, written or not: a tenth of
    # what a class connecting at once cost the app (bench/fanout.py's at-once row, profiled).
    from autobahn.websocket import protocol as autobahn

    setattr(autobahn, "pformat", _pformat_if_logged)  # noqa: B010 (an untyped module's name)


def _pformat_if_logged(value: object, *args: Any, **kwargs: Any) -> str:
    """``pprint.pformat`` for autobahn's debug lines, only while they are written at all."""
    import txaio

    if getattr(txaio, "get_global_log_level")() not in ("debug", "trace"):  # noqa: B009
        return ""
    return pprint.pformat(value, *args, **kwargs)
