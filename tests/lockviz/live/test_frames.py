"""A live event is framed once for all of a process's viewers (lockviz.live.frames)."""

from __future__ import annotations

import contextlib
import json
import socket
from typing import Any

from autobahn.websocket.protocol import PreparedMessage

from lockviz.live import frames
from lockviz.live.frames import Frame


class Viewer:
    def __init__(self, scope: dict[str, Any]) -> None:
        self.scope = scope
        self.texts: list[str] = []

    async def send(self, text_data: str | None = None) -> None:
        assert text_data is not None
        self.texts.append(text_data)


class Protocol:
    """As much of autobahn's server protocol as the writer touches."""

    STATE_OPEN = 3
    _perMessageCompress = None

    def __init__(self, state: int = STATE_OPEN, transport: Any = None) -> None:
        self.state = state
        self.transport = transport
        self.wrote: list[PreparedMessage] = []

    def sendPreparedMessage(self, prepared: PreparedMessage) -> None:
        self.wrote.append(prepared)
        if self.transport is not None:  # autobahn's sendData: the transport's write
            self.transport.write(prepared.payloadHybi)


async def test_every_viewer_under_daphne_gets_the_one_framing_and_others_the_text() -> None:
    frame = Frame('{"type": "event", "event": {"seq": 7, "said": "Alice asks for the lock ✓"}}')
    ones = [Protocol(), Protocol()]
    closed = Protocol(state=4)
    daphne = [Viewer({frames.PREPARED: frames.writer(p)}) for p in [*ones, closed]]
    plain = Viewer({})
    for viewer in [*daphne, plain]:
        await frames.send(viewer, frame)

    assert ones[0].wrote[0] is ones[1].wrote[0], "each viewer framed the event again"
    assert closed.wrote == [], "a frame was written to a connection that is not open"
    assert plain.texts == [frame.text]
    wire = ones[0].wrote[0].payloadHybi
    payload = frame.text.encode()
    assert wire[0] == 0x81, "not one final text frame"
    assert len(payload) < 126 and wire[1] == len(payload), "wrong length, or masked"
    assert wire[2:] == payload


class Transport:
    """As much of Twisted's TCP transport as the writer reads: its socket, and what it has
    buffered to write (here, the bytes handed to ``write``)."""

    connected, TLS, disconnecting, _writeDisconnected = True, False, False, False

    def __init__(self, sock: socket.socket) -> None:
        self.socket = sock
        self.dataBuffer = b""
        self._tempDataBuffer: list[bytes] = []

    def write(self, data: bytes) -> None:
        self._tempDataBuffer.append(data)


def test_an_idle_connection_is_written_to_at_once_and_a_full_one_keeps_the_order() -> None:
    """Nothing buffered: the frame goes to the socket at once, not through Twisted's buffer and
    a turn of the loop. What the kernel does not take, and every frame after it while anything
    is buffered, goes to the transport's buffer, in order."""
    ours, theirs = socket.socketpair()
    theirs.settimeout(5)  # a frame left in the buffer never arrives: fail, do not hang
    ours.setblocking(False)
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    transport = Transport(ours)
    write = frames.writer(Protocol(transport=transport))
    first = Frame('{"type": "event", "event": {"seq": 1}}')
    write(first.prepared)
    assert theirs.recv(1000) == first.prepared.payloadHybi
    assert transport._tempDataBuffer == []

    big = [Frame(json.dumps({"seq": n, "pad": "x" * 60_000})) for n in (2, 3)]
    for frame in big:
        write(frame.prepared)
    held = b"".join(transport._tempDataBuffer)
    assert held, "the kernel took 120 kB at once: nothing was left to keep in order"
    theirs.setblocking(False)
    wire = b""
    with contextlib.suppress(BlockingIOError):
        while chunk := theirs.recv(1 << 20):
            wire += chunk
    assert wire + held == b"".join(f.prepared.payloadHybi for f in big)
    ours.close()
    theirs.close()


def test_a_connection_found_plain_once_is_still_checked_for_what_it_holds_each_frame() -> None:
    """Whether a connection is plain TCP and uncompressed is read once; whether it holds
    anything, and whether it is still open, is read for every frame: a frame never overtakes
    bytes the transport holds, and nothing goes to a closed connection."""
    ours, theirs = socket.socketpair()
    theirs.settimeout(5)
    ours.setblocking(False)
    transport = Transport(ours)
    protocol = Protocol(transport=transport)
    write = frames.writer(protocol)
    one, two, three = (Frame(json.dumps({"seq": n})) for n in (1, 2, 3))
    assert write(one.prepared) is True
    assert theirs.recv(1000) == one.prepared.payloadHybi

    transport._tempDataBuffer.append(b"held")  # Twisted still holds bytes for this viewer
    assert write(two.prepared) is False
    assert protocol.wrote == [two.prepared], "the frame went past what the transport held"

    protocol.state = 4  # closed
    assert write(three.prepared) is True
    assert protocol.wrote == [two.prepared]
    theirs.setblocking(False)
    with contextlib.suppress(BlockingIOError):
        assert theirs.recv(1000) == b"", "a frame reached a closed connection"
    ours.close()
    theirs.close()


def test_a_compressed_connection_is_always_written_through_autobahn() -> None:
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    protocol = Protocol(transport=Transport(ours))
    protocol._perMessageCompress = object()  # permessage-deflate was negotiated
    write = frames.writer(protocol)
    frame = Frame('{"seq": 1}')
    assert write(frame.prepared) is False and write(frame.prepared) is False
    assert protocol.wrote == [frame.prepared, frame.prepared]
    ours.close()
    theirs.close()
