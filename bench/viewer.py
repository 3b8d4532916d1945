"""A run page's WebSocket (``/ws/runs/<id>/``), as the benchmarks open it: the one they share.

A minimal WebSocket client on asyncio's protocol layer (RFC 6455: the handshake, unmasked frames
from the server, masked ones to it, fragments joined): the ``websockets`` library costs tens of
µs a frame, which at 1,000 viewers fills a core and measures the instrument instead of the
server. What a message means is the subclass's (:meth:`Viewer.received`): fan-out records every
arrival and asks for gaps again as the page does, capacity follows a run to its end, chaos keeps
what it was sent.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import time
import urllib.parse
from typing import Any

TEXT, CONTINUATION, CLOSE, PING, PONG = 0x1, 0x0, 0x8, 0x9, 0xA


def frames(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The frames of one message: a batch (``{"type": "events", "frames": [...]}``) or itself."""
    found: list[dict[str, Any]] = (
        message["frames"] if message.get("type") == "events" else [message]
    )
    return found


def handshake(url: str, cookie: str = "") -> bytes:
    """The opening request of a WebSocket to ``url`` (``ws://host:port/path?query``), with a
    fresh key and the page's own origin."""
    parts = urllib.parse.urlsplit(url)
    key = base64.b64encode(os.urandom(16)).decode()
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    return (
        f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        f"Origin: http://{parts.netloc}\r\n" + (f"Cookie: {cookie}\r\n" if cookie else "") + "\r\n"
    ).encode()


def never_reading(url: str) -> socket.socket:
    """A blocking connection to the WebSocket at ``url`` that has read its handshake's answer and
    will read nothing more (a small receive buffer: what the server sends piles up on its side);
    ConnectionError when the server closes it or does not answer 101."""
    parts = urllib.parse.urlsplit(url)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    try:
        sock.connect((parts.hostname or "", parts.port or 80))
        sock.sendall(handshake(url))
        head = b""
        while b"\r\n\r\n" not in head:  # the handshake's answer, and never a byte more
            got = sock.recv(1)
            if not got:
                raise ConnectionError("closed during the handshake")
            head += got
        status = head.split(b"\r\n")[0]
        if b" 101 " not in status:
            raise ConnectionError(f"the handshake was answered {status.decode(errors='replace')}")
    except BaseException:
        sock.close()
        raise
    return sock


class Viewer(asyncio.Protocol):
    """One connection to a run's stream; :meth:`received` is called with each message."""

    def __init__(self) -> None:
        self.error = ""  # why it could not connect, or how the connection failed
        self.transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._fragments = bytearray()
        self._opened: asyncio.Future[None] | None = None
        self._closed: asyncio.Future[None] | None = None

    async def watch(
        self,
        url: str,
        *,
        cookie: str = "",
        timeout_s: float = 120,
        connected: asyncio.Event | None = None,
    ) -> None:
        """Connect to ``url`` (``ws://host:port/path?query``) and take messages until the
        connection ends (:meth:`close`, the server's close, the server gone). A failure to
        connect is kept in :attr:`error`; ``connected`` is set once the attempt is over."""
        loop = asyncio.get_running_loop()
        self._opened, self._closed = loop.create_future(), loop.create_future()
        parts = urllib.parse.urlsplit(url)
        try:
            await loop.create_connection(lambda: self, parts.hostname or "", parts.port or 80)
            assert self.transport is not None
            self.transport.write(handshake(url, cookie))
            await asyncio.wait_for(self._opened, timeout_s)
        except Exception as exc:
            self.error = repr(exc)
            self.close()
            return
        finally:
            if connected is not None:
                connected.set()
        try:
            await self._closed
        finally:  # cancelled (a caller's timeout): the connection goes with it
            self.close()

    def text(self, now_ns: int, message: bytes) -> None:
        """One text message from the server, as it came, read at ``now_ns``: parsed, for
        :meth:`received` (a viewer that only keeps what it was sent may read it later)."""
        self.received(now_ns, json.loads(message))

    def received(self, now_ns: int, message: dict[str, Any]) -> None:
        """One message from the server, read at ``now_ns`` (the host's monotonic clock)."""

    def send(self, message: dict[str, Any]) -> None:
        self._send(TEXT, json.dumps(message).encode())

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    # -- asyncio.Protocol --

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        if self._opened is not None and not self._opened.done():
            self._opened.set_exception(exc or ConnectionError("closed during the handshake"))
        elif exc is not None and not self.error:
            self.error = repr(exc)
        if self._closed is not None and not self._closed.done():
            self._closed.set_result(None)

    def data_received(self, data: bytes) -> None:
        now = time.monotonic_ns()
        self._buffer += data
        if self._opened is not None and not self._opened.done() and not self._handshake():
            return
        while self.transport is not None and not self.transport.is_closing():
            frame = self._frame()
            if frame is None:
                return
            fin, opcode, payload = frame
            if opcode in (TEXT, CONTINUATION):
                self._fragments += payload
                if fin:
                    message, self._fragments = bytes(self._fragments), bytearray()
                    self.text(now, message)
            elif opcode == PING:
                self._send(PONG, payload)
            elif opcode == CLOSE:
                self.close()

    def _handshake(self) -> bool:
        """Read the server's answer to the upgrade; True once it has switched protocols."""
        assert self._opened is not None and self.transport is not None
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            return False
        status = bytes(self._buffer[:end]).split(b"\r\n", 1)[0]
        del self._buffer[: end + 4]
        if b" 101 " not in status:
            self._opened.set_exception(ConnectionError(f"refused: {status.decode()}"))
            self.transport.close()
            return False
        self._opened.set_result(None)
        return True

    def _frame(self) -> tuple[bool, int, bytes] | None:
        b = self._buffer
        if len(b) < 2:
            return None
        size, head = b[1] & 0x7F, 2
        if size == 126:
            size, head = int.from_bytes(b[2:4]), 4
        elif size == 127:
            size, head = int.from_bytes(b[2:10]), 10
        if len(b) < head + size:
            return None
        fin, opcode, payload = bool(b[0] & 0x80), b[0] & 0x0F, bytes(b[head : head + size])
        del b[: head + size]
        return fin, opcode, payload

    def _send(self, opcode: int, payload: bytes) -> None:
        """A masked frame; the mask is zero, so the payload goes as it is."""
        assert self.transport is not None and len(payload) < 65536
        size = (
            bytes([0x80 | len(payload)])
            if len(payload) < 126
            else b"\xfe" + len(payload).to_bytes(2)
        )
        self.transport.write(bytes([0x80 | opcode]) + size + b"\0\0\0\0" + payload)
