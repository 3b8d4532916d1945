"""kazoo's calls as the lock recipes make them: each a visible ``request``/``reply`` pair.

:func:`connect` starts a session with a bounded reconnect and no command retried (a retried
step would hide from the diagram). :class:`Calls` makes one client's calls: every request is
reported before the first is sent (:meth:`Calls.start`), each reply read within the call
timeout and reported (:meth:`Calls.finish`), kazoo's errors turned into
:class:`~algorithms.errors.BackendUnavailable` at this boundary (``NoNodeError`` is an answer,
and passes), and ``to``/``from`` named by the server the session is on now
(:meth:`Calls.where`: an ensemble client fails over). :mod:`algorithms.zookeeper_lock` and
:mod:`algorithms.zookeeper_election` call ZooKeeper through it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException, NoNodeError
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.retry import KazooRetry

from algorithms.errors import BackendUnavailable
from algorithms.events import Reporter

_log = logging.getLogger(__name__)
_log.addHandler(logging.NullHandler())  # kazoo's warnings go to the app's logging, not stderr


def connect(hosts: str, *, session_ms: int, timeout_ms: int = 1000) -> KazooClient:
    """A started client with a ``session_ms`` session; ``hosts`` are tried in the order given.

    Reconnecting is bounded: ~8 s of attempts (0.05 s doubling to 0.5 s, 20 tries), then kazoo
    closes the client. Commands are never retried: a retried step would hide from the diagram.
    """
    client = KazooClient(
        hosts=hosts,
        timeout=session_ms / 1000,
        randomize_hosts=False,
        connection_retry=KazooRetry(max_tries=20, delay=0.05, backoff=2, max_delay=0.5),
        command_retry=KazooRetry(max_tries=1, delay=0.05, max_delay=0.05),
        logger=_log,
    )
    try:
        client.start(timeout=timeout_ms / 1000)
    except KazooTimeoutError as exc:
        raise BackendUnavailable(hosts.split(",")[0], f"no session within {timeout_ms} ms") from exc
    return client


def unavailable(node: str, exc: Exception) -> BackendUnavailable:
    """kazoo's error as :class:`BackendUnavailable` (``NoNodeError`` is an answer, not this)."""
    if isinstance(exc, KazooTimeoutError):
        return BackendUnavailable(node, "no reply before the timeout")
    return BackendUnavailable(node, f"{type(exc).__name__} {exc}".strip())


class Request(NamedTuple):
    """A ZooKeeper call to make: its name in events, how to send it, its reported arguments."""

    op: str
    start: Callable[[], Any]
    args: dict[str, object]


class Pending(NamedTuple):
    """A call sent to ZooKeeper whose reply is not read yet."""

    op: str
    call: int
    where: str
    result: Any  # kazoo's IAsyncResult
    failed: BackendUnavailable | None  # the call could not even be sent


class Calls:
    """One client's ZooKeeper calls, each reported as a request/reply pair."""

    def __init__(
        self,
        client: KazooClient,
        report: Reporter,
        node: str,
        addresses: Mapping[str, str],
        call_timeout_s: float,
    ) -> None:
        self.client = client
        self.report = report
        self.node = node  # the home server; ``addresses`` ("host:port" -> name) names the others
        self.addresses = addresses
        self.call_timeout_s = call_timeout_s
        self._peer: tuple[Any, str] = (None, node)  # kazoo's socket, and the server it reaches

    def call(
        self,
        op: str,
        start: Callable[[], Any],
        describe: Callable[[Any], dict[str, Any]],
        **args: object,
    ) -> Any:
        """One ZooKeeper call as a request/reply pair, answered within the call timeout."""
        return self.finish(self.start(Request(op, start, args))[0], describe)

    def start(self, *requests: Request) -> list[Pending]:
        """Report requests and send them; :meth:`finish` waits for each reply.

        Every request is reported before the first is sent: once a request is queued, kazoo's
        connection thread wants the GIL to send it, and any Python run here delays that.
        """
        where = self.where()
        calls = [self.report.request(where, r.op, **r.args) for r in requests]
        pending = []
        for request, call in zip(requests, calls, strict=True):
            try:
                pending.append(Pending(request.op, call, where, request.start(), None))
            except (KazooException, KazooTimeoutError) as exc:  # e.g. the client was closed
                failed = unavailable(where, exc)
                failed.__cause__ = exc
                pending.append(Pending(request.op, call, where, None, failed))
        return pending

    def finish(self, pending: Pending, describe: Callable[[Any], dict[str, Any]]) -> Any:
        """The reply of a started call (reported), within the call timeout."""
        op, call, where = pending.op, pending.call, pending.where
        try:
            if pending.failed is not None:
                raise pending.failed
            try:
                result = pending.result.get(timeout=self.call_timeout_s)
            except NoNodeError:
                raise
            except (KazooException, KazooTimeoutError) as exc:
                raise unavailable(where, exc) from exc
        except NoNodeError:
            self.report.reply(call, where, op, False, reason="no such node")
            raise
        except BackendUnavailable as exc:
            self.report.reply(call, where, op, False, error=exc.detail)
            raise
        self.report.reply(call, where, op, True, **describe(result))
        return result

    def where(self) -> str:
        """The server this client is connected to now (an ensemble client fails over)."""
        try:  # kazoo keeps the socket private; its peer is the only way to tell
            sock = self.client._connection._socket
            if sock is self._peer[0]:  # the same connection as last time: the same server
                return self._peer[1]
            host, port = sock.getpeername()[:2]
        except (AttributeError, OSError, TypeError):
            return self.node
        where = self.addresses.get(f"{host}:{port}", self.node)
        self._peer = (sock, where)
        return where
