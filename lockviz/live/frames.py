"""One frame for every viewer: a live event is encoded and framed once, not once per viewer.

The audience (lockviz.live.audience) hands each message of a run to each of its viewers in this
process. Sent the ASGI way (``await consumer.send(text_data=...)``), every viewer's copy goes
through Channels and Daphne on its own: encoded to UTF-8, framed by autobahn, written. For a
class of 1,000 that is 1,000 encodings and framings of the same bytes per event, and it was most
of what a live event cost the app beyond what a bare WebSocket server pays (docs/reliability.md).

A :class:`Frame` is the text once, and the WebSocket frame built from it once (autobahn's
``PreparedMessage``, its own tool for broadcasts). Under Daphne, ``serve`` gives each WebSocket
scope a writer for prepared frames (lockviz.live.unsent.measure_daphne); :func:`send` writes the
prepared frame to the connection's transport when the scope has one, and sends the text the
ASGI way when it has not (the tests' ``WebsocketCommunicator``, another server). Either way the
bytes on the wire are the same, and the write happens before ``send`` returns, so frames sent
either way stay in the order they were sent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any, Protocol

from autobahn.websocket.protocol import PreparedMessage

PREPARED = "lockviz.prepared"  # the scope's key: (PreparedMessage) -> None, writes it


class Consumer(Protocol):
    @property
    def scope(self) -> Mapping[str, object]: ...

    async def send(self, text_data: str | None = None) -> None: ...


class Frame:
    """A text frame to send to many viewers: its text, and its WebSocket framing made once."""

    __slots__ = ("__dict__", "text")

    def __init__(self, text: str) -> None:
        self.text = text

    @cached_property
    def prepared(self) -> PreparedMessage:
        # Not masked (a server's frames never are); kept compressible, as autobahn would.
        return PreparedMessage(self.text.encode(), False, False, False)


async def send(consumer: Consumer, frame: Frame) -> None:
    """Send ``frame`` to ``consumer``'s viewer: prepared where the server allows it."""
    write = consumer.scope.get(PREPARED)
    if callable(write):
        write(frame.prepared)
    else:
        await consumer.send(text_data=frame.text)


# Daphne's protocol and Twisted's transport below stay untyped: neither library ships types, and
# what is read of them (autobahn's state, Twisted's private buffers) is no public interface.
def writer(protocol: Any) -> Callable[[PreparedMessage], bool]:
    """A writer of prepared frames to one of Daphne's WebSocket connections (autobahn's
    protocol), which drops a frame for a connection that is no longer open, as Daphne does.

    Twisted's transport never writes at once: it buffers, asks the loop to watch the socket for
    room, writes on the next turn, and stops watching (two ``epoll_ctl`` calls and a turn of the
    loop per write). For 1,000 viewers that was most of what a live event cost the app. When
    nothing is waiting to go out on the connection (plain TCP, not compressed, nothing
    buffered), the frame is sent to the socket at once, as asyncio's own transports do; what
    the kernel does not take goes to the transport's buffer, in order, and so does every frame
    while anything is buffered. It returns whether the frame went out whole at once (nothing is
    held for the viewer: it keeps up)."""

    def write(prepared: PreparedMessage) -> bool:
        if protocol.state != protocol.STATE_OPEN:
            return True  # nobody to send to, nothing held
        transport = protocol.transport
        if protocol._perMessageCompress is not None or not _idle(transport):
            protocol.sendPreparedMessage(prepared)
            return False
        data = prepared.payloadHybi
        try:
            sent = transport.socket.send(data)
        except BlockingIOError:
            sent = 0
        except OSError:  # the connection is going: Twisted's own write sees to it
            sent = 0
        if sent < len(data):
            transport.write(data[sent:])
            return False
        return True

    return write


def _idle(transport: Any) -> bool:
    """Whether a Twisted TCP transport is open, plain and has nothing buffered to write."""
    return bool(
        getattr(transport, "connected", False)
        and not getattr(transport, "TLS", True)
        and not getattr(transport, "disconnecting", True)
        and not getattr(transport, "_writeDisconnected", True)
        and not transport.dataBuffer
        and not transport._tempDataBuffer
        and getattr(transport, "socket", None) is not None
    )
