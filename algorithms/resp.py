"""A bare Redis connection for the lock clients: one socket, RESP2, the replies a lock gets.

redis-py's ``Redis.execute_command`` spends more time in Python (connection pool, command
packing, a general reply parser, retry bookkeeping) than a loopback round trip takes: a lock
step through it costs about twice the network's share. The lock clients here send a handful of
commands whose replies are one line or one short bulk string (``+OK``, ``:7``, ``$-1``, a
script's SHA1, an ``-ERR``), so they talk RESP2 on a plain socket: commands packed once where
they can be, the reply parsed by one small function.

Guarantees: every call answers or fails within ``timeout_ms`` (connect, send and read alike),
with no hidden retry. A call that failed (timeout, reset, refused, closed) closes the socket:
a reply that arrives late can never be read as the answer to a later command. The next call
opens a new connection (a plain TCP connect: no HELLO, no CLIENT SETINFO round trip).

Assumes the replies fit the types above (no arrays, no RESP3): the lock scripts are written
so. Not thread-safe: one connection belongs to one lock, which serialises its own calls.

With a ``password``, a new connection's first command goes out behind an ``AUTH``, in the same
write, and its reply is read first: authenticating costs no round trip of its own, so a
Redlock round still sends to every node at once.

Fails by raising :class:`~algorithms.errors.BackendUnavailable` with the words the lab shows
("no reply before the timeout", "connection failed (...)"); an error *reply* is not a failure
of the connection and comes back as a :class:`ReplyError` value.
"""

from __future__ import annotations

import socket

from algorithms.errors import BackendUnavailable

_CRLF = b"\r\n"


class ReplyError(str):
    """An error reply (``-ERR ...``, ``-NOSCRIPT ...``): the node answered, with an error."""


def pack(*args: str | int | bytes) -> bytes:
    """One command in RESP2: an array of bulk strings."""
    out = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


class RespConnection:
    """One connection to one Redis node, opened on first use; see the module docstring."""

    def __init__(
        self, host: str, port: int, *, timeout_ms: int, node: str = "", password: str | None = None
    ) -> None:
        self.host = host
        self.port = port
        self.timeout_s = timeout_ms / 1000
        self.node = node or f"{host}:{port}"
        self.sock: socket.socket | None = None
        self._buf = b""
        self._auth = pack("AUTH", password) if password else b""
        self._auth_pending = False  # an AUTH was sent whose reply is still to be read
        self._first = b""  # what goes out before the next command: a new connection's AUTH

    def connect(self) -> socket.socket:
        if self.sock is None:
            try:
                sock = socket.create_connection((self.host, self.port), timeout=self.timeout_s)
            except TimeoutError as exc:
                raise BackendUnavailable(self.node, "no reply before the timeout") from exc
            except OSError as exc:
                detail = f"Error {exc.errno} connecting to {self.host}:{self.port}. {exc.strerror}."
                raise BackendUnavailable(self.node, f"connection failed ({detail})") from exc
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.sock, self._buf = sock, b""
            if self._auth:
                self._first, self._auth_pending = self._auth, True
        return self.sock

    def send(self, packed: bytes) -> None:
        """Send one packed command (connecting first if needed, and authenticating with it)."""
        sock = self.connect()
        first, self._first = self._first, b""
        try:
            sock.sendall(first + packed)
        except OSError as exc:
            raise self._failed(exc) from exc

    def read(self) -> str | int | ReplyError | None:
        """The next reply: ``str`` (status or bulk), ``int``, ``None`` (nil) or ReplyError."""
        if self._auth_pending:
            self._auth_pending = False
            answer = self._read()
            if isinstance(answer, ReplyError):
                self.close()
                raise BackendUnavailable(self.node, f"authentication failed ({answer})")
        return self._read()

    def _read(self) -> str | int | ReplyError | None:
        try:
            while True:
                parsed = _parse(self._buf)
                if parsed is not None:
                    reply, self._buf = parsed
                    return reply
                if self.sock is None:
                    raise BackendUnavailable(self.node, "connection failed (not connected)")
                chunk = self.sock.recv(4096)
                if not chunk:
                    raise self._failed(ConnectionError("Connection closed by server."))
                self._buf += chunk
        except (OSError, ValueError) as exc:  # ValueError: not RESP, or not a reply we know
            raise self._failed(exc) from exc

    def call(self, packed: bytes) -> str | int | ReplyError | None:
        """Send one command and read its reply."""
        self.send(packed)
        return self.read()

    def fileno(self) -> int:
        return -1 if self.sock is None else self.sock.fileno()

    def close(self) -> None:
        """Drop the connection; a reply still on its way is never read."""
        sock, self.sock, self._buf = self.sock, None, b""
        self._first, self._auth_pending = b"", False
        if sock is not None:
            sock.close()

    def _failed(self, exc: Exception) -> BackendUnavailable:
        self.close()
        if isinstance(exc, TimeoutError):
            return BackendUnavailable(self.node, "no reply before the timeout")
        if isinstance(exc, OSError) and exc.strerror:
            detail = f"Error {exc.errno} while talking to {self.host}:{self.port}. {exc.strerror}."
        else:
            detail = str(exc)
        return BackendUnavailable(self.node, f"connection failed ({detail})")


def _parse(buf: bytes) -> tuple[str | int | ReplyError | None, bytes] | None:
    """One whole reply from the front of ``buf`` and what follows it; ``None`` if incomplete."""
    end = buf.find(_CRLF)
    if end <= 0:
        return None
    kind, line = buf[0], buf[1:end]
    if kind == 36:  # "$": a bulk string of len(line) bytes, or nil
        size = int(line)
        if size < 0:
            return None, buf[end + 2 :]
        stop = end + 2 + size
        if len(buf) < stop + 2:
            return None
        return buf[end + 2 : stop].decode(), buf[stop + 2 :]
    rest = buf[end + 2 :]
    if kind == 58:  # ":"
        return int(line), rest
    if kind == 43:  # "+"
        return line.decode(), rest
    if kind == 45:  # "-"
        return ReplyError(line.decode()), rest
    raise ValueError(f"unexpected reply {buf[:20]!r}")
