"""A PostgreSQL session whose every call is bounded, for :mod:`algorithms.postgres_lock`.

Every call has an explicit bound on the server's side: ``connect_timeout``,
``statement_timeout``, ``lock_timeout``, and TCP keepalives plus ``tcp_user_timeout``
(:func:`connect`). None of them ends a wait for a server whose kernel still acknowledges
everything while its process is frozen, or for a partition where a proxy holds the bytes (a
psycopg query would then wait forever). So each call is also guarded by a client-side deadline
(:class:`Bounded`): past it, the socket is shut down under psycopg, the call fails, and
connection trouble becomes :class:`~algorithms.errors.BackendUnavailable` (SQL bugs propagate).
:func:`reply` waits for a query sent on libpq directly without holding the GIL.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import threading
from typing import Any, Protocol

import psycopg
from psycopg import errors, pq

from algorithms.deadlines import deadlines
from algorithms.errors import BackendUnavailable

Connection = psycopg.Connection[tuple[Any, ...]]

CLIENT_MARGIN_MS = 500  # the client's deadline beyond the server's, which should fire first


class Session(Protocol):
    """What a guarded call needs of its lock: the server's name, the connection (replaced when
    the session is lost), and the lock that a call's end and its deadline's abandon share."""

    node: str
    conn: Connection
    guard: threading.Lock


def connect(
    host: str,
    port: int,
    *,
    application_name: str,
    timeout_ms: int = 1000,
    pooled: bool = False,
    user: str = "postgres",
    dbname: str = "postgres",
    password: str | None = None,
) -> Connection:
    """An autocommit connection with every bound stated (the lock adds its own deadline).

    ``application_name`` names the client in ``pg_stat_activity``, so an observer can tell who
    holds which lock. Through a pooler (``pooled``) the server's timeouts cannot travel in the
    startup packet: the lock's client-side deadline and the pooler's ``query_timeout`` bound
    statements there.
    """
    # Through PgBouncer: no startup options, no prepared statements (sessions switch under us).
    extra: dict[str, Any] = {"prepare_threshold": None}
    if not pooled:
        extra = {
            # idle_session_timeout is left to the server: it is how an operator frees the
            # lock of a holder that went silent (the "ghost holder" scenarios).
            "options": f"-c statement_timeout={timeout_ms} -c lock_timeout={timeout_ms}"
            " -c idle_in_transaction_session_timeout=0"
        }
    return psycopg.connect(
        host=host,
        port=port,
        user=user,
        password=password,
        dbname=dbname,
        application_name=application_name,
        autocommit=True,
        connect_timeout=max(2, -(-timeout_ms // 1000)),  # whole seconds, at least 2 (libpq)
        keepalives=1,
        keepalives_idle=1,
        keepalives_interval=1,
        keepalives_count=3,
        tcp_user_timeout=max(timeout_ms, 1000),
        **extra,
    )


def reply(pgconn: pq.abc.PGconn) -> pq.abc.PGresult:
    """The result of the query just sent, waited for without the GIL (``select``: a socket the
    deadline thread shut wakes it, and libpq then says the connection is gone)."""
    while pgconn.flush():  # what the kernel did not take at once (never here: a short query)
        select.select([], [pgconn.socket], [])
    while True:
        pgconn.consume_input()
        if not pgconn.is_busy():
            break
        select.select([pgconn.socket], [], [])
    result = pgconn.get_result()
    if result is None:
        raise psycopg.OperationalError("the server sent no result")
    while pgconn.get_result() is not None:  # the end of this query's results
        pass
    return result


class Bounded:
    """One guarded call of a session's (a class, not a generator: it runs twice per acquire +
    release, and a ``@contextmanager`` costs several times as much)."""

    __slots__ = ("abandoned", "done", "ident", "limit", "session")

    def __init__(self, session: Session, limit_ms: int) -> None:
        self.session = session
        self.limit = limit_ms
        self.done = self.abandoned = False
        self.ident = 0

    def __enter__(self) -> None:
        self.ident = deadlines.arm(self.limit / 1000, self._abandon)

    def _abandon(self) -> None:  # in the deadline thread: the blocked recv returns, psycopg raises
        with self.session.guard:
            if not self.done:
                self.abandoned = True
                shut_down(self.session.conn)

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> None:
        with self.session.guard:
            self.done = True
        deadlines.disarm(self.ident)
        if not isinstance(exc, psycopg.Error) or isinstance(exc, errors.LockNotAvailable):
            return  # no error, or one that the caller handles (or a bug: it propagates)
        node = self.session.node
        if self.abandoned:
            raise BackendUnavailable(node, f"no reply within {self.limit} ms") from exc
        if isinstance(exc, errors.QueryCanceled):
            raise BackendUnavailable(node, f"no reply before the timeout ({exc})") from exc
        if isinstance(exc, psycopg.OperationalError) or self.session.conn.closed:
            text = str(exc).strip()
            detail = text.splitlines()[0] if text else type(exc).__name__
            raise BackendUnavailable(node, detail) from exc


def shut_down(conn: Connection) -> None:
    """Shut the connection's socket down under psycopg, which then fails the call it waits on."""
    with contextlib.suppress(OSError, psycopg.Error):
        sock = socket.socket(fileno=os.dup(conn.fileno()))
        try:
            sock.shutdown(socket.SHUT_RDWR)
        finally:
            sock.close()
