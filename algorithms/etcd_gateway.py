"""etcd's v3 JSON gateway over one persistent HTTP/1.1 connection, with a timeout per call.

etcd serves its v3 API as JSON under ``/v3`` (the gRPC gateway): keys and values are base64.
The lock (:mod:`algorithms.etcd_lock`), the sequencer check (:mod:`algorithms.sequencer`) and
bench/locks.py speak to etcd through :class:`Gateway`.
"""

from __future__ import annotations

import base64
import http.client
import json
import select
from collections.abc import Callable, Mapping
from typing import Any

from algorithms.errors import BackendUnavailable

HEADERS = {"Content-Type": "application/json"}


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def unb64(text: str) -> str:
    return base64.b64decode(text).decode()


Endpoint = tuple[str, str, int]  # a member's name, host and port


class Gateway:
    """etcd's JSON gateway over one persistent HTTP/1.1 connection, with a stated timeout.

    A new connection per call cost a TCP handshake and a fresh server goroutine on every step.
    Before each call the idle connection is checked (one non-blocking ``select``): one that the
    server closed, or that was cut while the client was frozen, is replaced *before* the request
    is sent, so no request is ever sent twice. A call that failed closes the connection: a late
    reply can never be read as the answer to the next call. Not thread-safe: a thread that calls
    while another waits (the keepalive of a queued lock) uses its own :meth:`copy`.

    With ``others`` (a cluster's other members) a call that could not reach its member moves
    the gateway on to the next one, for the *next* call, as etcd's own client balances: the
    failed call is not sent again behind the caller's back. :attr:`node` names the member the
    next call goes to.
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        node: str = "etcd-1",
        timeout_ms: int = 1000,
        others: list[Endpoint] | None = None,
    ):
        self.endpoints: list[Endpoint] = [(node, host, port), *(others or [])]
        self.host, self.port, self.node = host, port, node
        self.timeout_ms = timeout_ms
        self._conn: http.client.HTTPConnection | None = None

    def copy(self) -> Gateway:
        """A gateway to the same member (and the same others) with a connection of its own."""
        endpoints = self.endpoints[self.endpoints.index((self.node, self.host, self.port)) :]
        endpoints += [e for e in self.endpoints if e not in endpoints]
        node, host, port = endpoints[0]
        return Gateway(host, port, node=node, timeout_ms=self.timeout_ms, others=endpoints[1:])

    def _move_on(self) -> None:
        """The member did not answer: the next call goes to the next member, if any."""
        if len(self.endpoints) > 1:
            here = self.endpoints.index((self.node, self.host, self.port))
            self.node, self.host, self.port = self.endpoints[(here + 1) % len(self.endpoints)]

    def call(
        self,
        path: str,
        body: Mapping[str, object],
        timeout_ms: int | None = None,
        sent: Callable[[], object] | None = None,
    ) -> dict[str, Any]:
        """The decoded reply; an error reply (HTTP 4xx/5xx) carries ``error``. ``sent`` is
        called once the request is on its way, while the member works on it (the lock reports
        its request then, instead of before)."""
        timeout_s = (self.timeout_ms if timeout_ms is None else timeout_ms) / 1000
        conn = self._connection()
        try:
            if conn.sock is not None:
                conn.sock.settimeout(timeout_s)
            else:
                conn.timeout = timeout_s
            # Bytes, not str: http.client then sends headers and body in one segment, where
            # two small writes would wait on each other (Nagle's algorithm and delayed ACKs).
            conn.request("POST", path, json.dumps(body).encode(), HEADERS)
            if sent is not None:
                sent()
            response = conn.getresponse()
            data = response.read()
        except TimeoutError as exc:
            self.close()
            raise BackendUnavailable(self.node, "no reply before the timeout") from exc
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            failed = BackendUnavailable(self.node, f"connection failed ({exc})")
            self._move_on()
            raise failed from exc
        if response.will_close:
            self.close()
        try:
            reply: dict[str, Any] = json.loads(data or b"{}")
        except ValueError as exc:
            raise BackendUnavailable(
                self.node, f"unreadable reply (HTTP {response.status})"
            ) from exc
        if response.status != 200:
            reply.setdefault("error", f"HTTP {response.status}")
        return reply

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def _connection(self) -> http.client.HTTPConnection:
        conn = self._conn
        # An idle connection has nothing to read: readable means closed (or garbage).
        if conn is not None and conn.sock is not None and select.select([conn.sock], [], [], 0)[0]:
            self.close()
            conn = None
        if conn is None:
            conn = self._conn = http.client.HTTPConnection(self.host, self.port)
        return conn
