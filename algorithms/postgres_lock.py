"""PostgreSQL advisory locks, held by a session or by a transaction, with a fencing token.

One module past the usual ~300 lines, on purpose: both scopes (session and transaction), their
statement timeouts and the token live beside each other because they share one connection's
life, which is the point of the lesson (a lock held by a session). The session itself, each call
bounded by a client-side deadline, is :mod:`algorithms.postgres_session`.

An advisory lock is a key (a bigint) in the server's lock table that means whatever the
application says it means. PostgreSQL docs: "Advisory Locks" (section 13.3.5,
https://www.postgresql.org/docs/current/explicit-locking.html#ADVISORY-LOCKS) and "Advisory
Lock Functions" (section 9.27.10, .../functions-admin.html#FUNCTIONS-ADVISORY-LOCKS). Two scopes:

* ``session``: ``pg_try_advisory_lock(key)``, polled until granted or the timeout; held until
  ``pg_advisory_unlock(key)`` or the end of the session. Session locks are **re-entrant**: the
  same session can take the key again and must unlock it as many times as it locked it.
* ``xact``: ``BEGIN`` then ``pg_advisory_xact_lock(key)``, waiting in the server's queue up to
  ``lock_timeout``; held until ``COMMIT`` or ``ROLLBACK``. ``pg_advisory_unlock`` cannot release
  it: it returns false with the WARNING "you don't own a lock of type ExclusiveLock".

Guarantees (only while its assumptions hold):
  * At most one *session* holds the key at any instant on the server.
  * The fencing token is ``nextval('lockviz_fence')`` taken by the holder's own session after
    the grant, while holding the lock: tokens increase in grant order, so a resource that keeps
    the highest token it has seen refuses the writes of a holder whose lock was already reused.
  * A session that ends (the client crashed and its socket closed, an admin ran
    ``pg_terminate_backend``, ``idle_in_transaction_session_timeout`` fired) frees its locks.

Assumes:
  * One session is one client. A connection pooler breaks this: through PgBouncer in
    ``pool_mode = transaction`` (https://www.pgbouncer.org/features.html lists session-level
    advisory locks as incompatible with transaction pooling), each client's statement runs on
    whichever server session is free. With one server connection, alice's
    ``pg_try_advisory_lock`` locks the shared session; bob's then runs on the same session and,
    the lock being re-entrant, is granted too; alice's unlock merely lowers the count, and if
    she disconnects without unlocking, the lock stays with the pooled session forever: every
    direct client is refused and every pooled client "gets" it. This is the lab's ``pooled``
    variant: the code here is the same, only the connection goes through the pooler.
  * A session lock has **no lease**. A holder that is frozen (GC pause, SIGSTOP) keeps its lock:
    its kernel still answers TCP, so the server sees nothing wrong and every other client waits.
    That is safety bought with liveness. The ``xact`` scope can be given a lease on the server:
    with ``lease_ms`` it sets ``idle_in_transaction_session_timeout``, and a holder that stays
    idle that long (frozen, or just slow) has its session terminated and its lock freed.
  * The server itself keeps running: advisory locks live in shared memory, not in WAL, so a
    server crash or restart frees every lock at once (and a failover to a replica too).
  * The sequence is durable: ``nextval`` makes its commit flush the WAL, but with
    ``synchronous_commit = off`` a server crash loses the last commits and the same token is
    handed out again.

Fails by:
  * Pooling (above): two clients granted at once. Fencing still orders their writes.
  * ``xact`` with a lease: the server ends a slow holder's transaction and grants the lock to
    another while the first still believes it holds it; only fencing saves the data.
  * Without a lease, a frozen or hung holder blocks everyone for as long as it lives.

Every call has an explicit bound: ``connect_timeout``, ``statement_timeout``, ``lock_timeout``
and TCP keepalives plus ``tcp_user_timeout``; none of them ends a wait for a server whose
kernel still acknowledges everything while its process is frozen, or for a partition where a
proxy holds the bytes (a psycopg query would then wait forever). So each call also has a
client-side deadline: past it, the lock shuts its socket down and the call fails
(:mod:`algorithms.postgres_session`). A session
that was lost that way (or any other way) is replaced by a new one at the next ``acquire``.

Performance: the session lock's two statements (try-lock with the token, unlock) are prepared
once per session (both in one round trip, by :meth:`PostgresLock.prepare` before a run starts)
and run on libpq directly (``psycopg.pq``), one round trip each; psycopg's
``execute`` spent as long in Python as the round trip took. The rest (the transaction scope,
the liveness check) goes through psycopg as usual.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any, Literal

import psycopg
from psycopg import errors, pq

from algorithms.clock import Clock
from algorithms.errors import BackendUnavailable, NotHeld
from algorithms.events import Asked, EventSink, discard
from algorithms.lock import Grant, LockBase
from algorithms.postgres_session import CLIENT_MARGIN_MS, Bounded, Connection, reply
from algorithms.sequencer import Sequencer

Scope = Literal["session", "xact"]

# What the lab creates once per server (and recreates when it wipes a shared one).
SETUP_SQL = "CREATE SEQUENCE IF NOT EXISTS lockviz_fence"

# The two statements of a session lock run on libpq directly (see PostgresLock._run), so they
# are written with libpq's placeholders.
# $1 lock key. Returns (fencing token or NULL, backend pid). CASE evaluates nextval only when
# pg_try_advisory_lock granted the key, so the token is drawn by the holder, after its grant.
TRY_SESSION_SQL = (
    "SELECT CASE WHEN pg_try_advisory_lock($1) THEN nextval('lockviz_fence') END, pg_backend_pid()"
)
# $1 lock key. True when this session held the key (one level of it); false, with a WARNING,
# when it did not: someone else holds it, or it is a transaction lock.
UNLOCK_SQL = "SELECT pg_advisory_unlock($1)"
_STATEMENTS = {b"lockviz_try": TRY_SESSION_SQL.encode(), b"lockviz_unlock": UNLOCK_SQL.encode()}
# Both, prepared in one round trip (one simple query): libpq runs a statement prepared by SQL
# PREPARE by its name as it runs one prepared by the protocol, and $1's type is inferred alike.
PREPARE_ALL_SQL = "; ".join(
    f"PREPARE {name.decode()} AS {sql.decode()}" for name, sql in _STATEMENTS.items()
).encode()
# %s lock_timeout, statement_timeout, idle_in_transaction_session_timeout (ms), for this
# transaction only.
XACT_LIMITS_SQL = (
    "SELECT set_config('lock_timeout', %s, true), set_config('statement_timeout', %s, true),"
    " set_config('idle_in_transaction_session_timeout', %s, true)"
)
# %s lock key. Waits in the server's lock queue (bounded by lock_timeout); held until COMMIT.
XACT_LOCK_SQL = "SELECT true, pg_backend_pid() FROM pg_advisory_xact_lock(%s)"
XACT_TRY_SQL = "SELECT pg_try_advisory_xact_lock(%s), pg_backend_pid()"
TOKEN_SQL = "SELECT nextval('lockviz_fence')"
# %s lock key. Does this session still hold it? (A bigint key is split into classid, objid.)
HELD_SQL = (
    "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted"
    " AND pid = pg_backend_pid() AND objsubid = 1"
    " AND ((classid::bigint << 32) | objid::bigint) = %s)"
)
WAIT_MARGIN_MS = 1000  # statement_timeout beyond lock_timeout, so the lock wait ends first


class PostgresLock(LockBase):
    """An advisory lock on one PostgreSQL server; verbs like ``threading.Lock``."""

    def __init__(
        self,
        conn: Connection,
        key: int,
        *,
        owner: str,
        scope: Scope = "session",
        lease_ms: int | None = None,
        node: str = "pg-1",
        clock: Clock | None = None,
        on_event: EventSink = discard,
        retry_delay_ms: int = 100,
        call_timeout_ms: int = 1000,
        reconnect: Callable[[], Connection] | None = None,
    ) -> None:
        if lease_ms is not None and scope != "xact":
            raise ValueError("only a transaction-scoped lock can have a lease (an idle timeout)")
        super().__init__(owner, clock, on_event)
        self.conn = conn
        self.call_timeout_ms = call_timeout_ms
        self.reconnect = reconnect
        self.key = key
        self.scope = scope
        self.lease_ms = lease_ms
        self.node = node
        self.retry_delay_ms = retry_delay_ms
        self.session_pid = 0  # the server session that holds our grant (its backend pid)
        self._warnings: list[str] = []
        self._prepared: set[tuple[pq.abc.PGconn, bytes]] = set()  # statements, by libpq session
        self.guard = threading.Lock()  # a call's end and its deadline's abandon exclude each other
        conn.add_notice_handler(self._notice)

    def _notice(self, diag: errors.Diagnostic) -> None:
        if diag.severity == "WARNING" and diag.message_primary:
            self._warnings.append(diag.message_primary)

    def acquire(self, timeout_ms: int = 0) -> Grant | None:
        """Try until granted or ``timeout_ms`` has passed; ``None`` if not granted."""
        if self.scope == "xact":
            return self._acquire_xact(timeout_ms)
        deadline = self.clock.monotonic_ns() + timeout_ms * 1_000_000
        while True:
            asked = self._report.asking(self.node, "acquire", ttl_ms=None, key=self.key)
            try:
                with self._boundary():
                    self._ensure_session()
                    token, pid = self._run(b"lockviz_try", asked)
            except BackendUnavailable as exc:
                self._report.reply(asked.call(), self.node, "acquire", False, error=exc.detail)
                token = None
            else:
                call = asked.call()
                if token is not None:
                    self._report.reply(call, self.node, "acquire", True, token=int(token))
                    return self._granted(int(token), int(pid or 0))
                self._report.reply(call, self.node, "acquire", False, reason="held by another")
            if self.clock.monotonic_ns() >= deadline:
                self._report.emit("acquire_failed", reason=f"timed out after {timeout_ms} ms")
                return None
            self.clock.sleep(self.retry_delay_ms / 1000)

    def _acquire_xact(self, timeout_ms: int) -> Grant | None:
        """One request: BEGIN, then wait in the server's queue for at most ``timeout_ms``."""
        call = self._report.request(
            self.node, "acquire", ttl_ms=self.lease_ms, key=self.key, wait_ms=timeout_ms
        )
        reason = f"timed out after {timeout_ms} ms"
        try:
            with self._boundary(timeout_ms + WAIT_MARGIN_MS):
                self._ensure_session()
                self.conn.execute("BEGIN")
                limits = (timeout_ms, timeout_ms + WAIT_MARGIN_MS, self.lease_ms or 0)
                self.conn.execute(XACT_LIMITS_SQL, [str(ms) for ms in limits])
                got, pid = self._fetch(XACT_LOCK_SQL if timeout_ms > 0 else XACT_TRY_SQL, self.key)
                token = self._fetch(TOKEN_SQL)[0] if got else None
        except errors.LockNotAvailable:  # lock_timeout: the transaction is aborted, end it
            self._rollback()
            self._report.reply(call, self.node, "acquire", False, reason="lock_timeout")
        except BackendUnavailable as exc:
            self._rollback()
            self._report.reply(call, self.node, "acquire", False, error=exc.detail)
            reason = exc.detail
        else:
            if token is not None:
                self._report.reply(call, self.node, "acquire", True, token=token)
                return self._granted(int(token), pid)
            self._rollback()
            self._report.reply(call, self.node, "acquire", False, reason="held by another")
        self._report.emit("acquire_failed", reason=reason)
        return None

    def _granted(self, token: int, pid: int) -> Grant:
        value = f"{self.owner}:backend-{pid}"  # which server session holds it
        self.session_pid = pid
        self.grant = Grant(token, value, self.lease_ms or 0, self.node, self.clock.monotonic_ns())
        self._report.emit("granted", node=self.node, token=token, ttl_ms=self.lease_ms, value=value)
        return self.grant

    def release(self) -> bool:
        """Give the lock up. ``False`` when the server said it was no longer ours."""
        self._held()
        self.grant = None
        self._warnings.clear()
        how = "COMMIT" if self.scope == "xact" else "pg_advisory_unlock"
        asked = self._report.asking(self.node, "release", sql=how)
        try:
            with self._boundary():
                if self.scope == "xact":
                    asked.call()
                    self.conn.execute("COMMIT")  # the transaction's locks go with it
                    ok = True
                else:
                    ok = self._run(b"lockviz_unlock", asked)[0] == b"t"
        except BackendUnavailable as exc:
            self._report.reply(asked.call(), self.node, "release", False, error=exc.detail)
            self._report.emit("released", ok=False, reason=exc.detail)
            return False
        reason = {} if ok else {"reason": "; ".join(self._warnings) or "not held"}
        self._report.reply(asked.call(), self.node, "release", ok, **reason)
        self._report.emit("released", ok=ok, **reason)
        return ok

    def extend(self, ttl_ms: int | None = None) -> bool:
        """Check that our session still holds the key; ``False`` (and ``lost``) if not.

        Nothing to prolong for a session lock. For a transaction lock with a lease, the query
        itself restarts the server's idle-in-transaction clock: it is the heartbeat.
        """
        self._held()
        call = self._report.request(self.node, "extend", ttl_ms=self.lease_ms)
        try:
            with self._boundary():
                ok = bool(self._fetch(HELD_SQL, self.key)[0])
        except BackendUnavailable as exc:
            self._report.reply(call, self.node, "extend", False, error=exc.detail)
            self._report.emit("extended", ok=False, ttl_ms=self.lease_ms)
            if self.conn.closed:
                self.grant = None
                self._report.emit("lost", reason=f"the session ended: {exc.detail}")
            return False
        self._report.reply(call, self.node, "extend", ok)
        self._report.emit("extended", ok=ok, ttl_ms=self.lease_ms)
        if not ok:
            self.grant = None
            self._report.emit("lost", reason="our session no longer holds the key")
        return ok

    def sequencer(self) -> Sequencer | None:
        """The lock's key and our session: the lock is ours while pg_locks says that session
        holds it. Through a pooler the session is shared, and this says nothing."""
        grant = self.grant
        if grant is None:
            return None
        session = str(self.session_pid)
        return Sequencer(
            "postgres", str(self.key), grant.value, self.owner, grant.token, session=session
        )

    def close(self) -> None:
        """End the session; the server frees whatever it still held."""
        self.conn.close()

    def _run(self, statement: bytes, asked: Asked) -> tuple[bytes | None, ...]:
        """One of the session lock's statements on libpq directly: its first row, as text.

        psycopg's ``execute`` spends about as long in Python (a cursor, the query's conversion,
        its prepare bookkeeping) as the loopback round trip takes. Here each statement is
        prepared once per session and sent by libpq; while the server works on it the request
        is reported (``asked``: its event, encoded meanwhile instead of before), and the reply
        is waited for with the GIL released (the deadline thread can still shut the socket);
        errors are psycopg's own, from the result. Through a pooler the server session changes
        under us, so nothing is prepared there.
        """
        pgconn = self.conn.pgconn
        params = [b"%d" % self.key]
        if self.conn.prepare_threshold is None:
            pgconn.send_query_params(_STATEMENTS[statement], params)
        else:
            if (pgconn, statement) not in self._prepared:  # a new session (or no prepare())
                self._prepare(pgconn, statement)
            pgconn.send_query_prepared(statement, params)
        asked.call()  # reported as the server works on it
        result = reply(pgconn)
        self._check(result, pq.ExecStatus.TUPLES_OK)
        if result.ntuples < 1:
            raise BackendUnavailable(self.node, f"no row from {statement.decode()}")
        return tuple(result.get_value(0, i) for i in range(result.nfields))

    def _prepare(self, pgconn: pq.abc.PGconn, statement: bytes) -> None:
        if not any(conn is pgconn for conn, _ in self._prepared):
            self._prepared.clear()  # statements of a session that is gone
        self._check(pgconn.prepare(statement, _STATEMENTS[statement]), pq.ExecStatus.COMMAND_OK)
        self._prepared.add((pgconn, statement))

    def prepare(self) -> None:
        """Prepare the session lock's statements now, so each later step is one round trip."""
        if self.scope != "session" or self.conn.prepare_threshold is None:
            return
        with self._boundary():
            pgconn = self.conn.pgconn
            missing = [s for s in _STATEMENTS if (pgconn, s) not in self._prepared]
            if len(missing) < len(_STATEMENTS):  # some are (a lazy _run): the rest one by one
                for statement in missing:
                    self._prepare(pgconn, statement)
                return
            self._prepared.clear()  # statements of a session that is gone
            self._check(pgconn.exec_(PREPARE_ALL_SQL), pq.ExecStatus.COMMAND_OK)
            self._prepared.update((pgconn, statement) for statement in _STATEMENTS)

    def _check(self, result: pq.abc.PGresult, expected: pq.ExecStatus) -> None:
        if result.status != expected:
            raise errors.error_from_result(result, encoding=self.conn.info.encoding)

    def _fetch(self, sql: str, *params: Any) -> tuple[Any, ...]:
        row = self.conn.execute(sql, params or None).fetchone()
        if row is None:
            raise BackendUnavailable(self.node, f"no row from {sql!r}")
        return row

    def _ensure_session(self) -> None:
        """A lost session is gone with its locks; acquiring starts a new one (if we can)."""
        if self.conn.closed and self.reconnect is not None:
            self.conn = self.reconnect()
            self.conn.add_notice_handler(self._notice)

    def _rollback(self) -> None:
        with contextlib.suppress(psycopg.Error):  # the session is gone, its transaction too
            self.conn.execute("ROLLBACK")

    def _boundary(self, limit_ms: int | None = None) -> Bounded:
        """Bound the calls inside by a client-side deadline; connection trouble becomes
        :class:`BackendUnavailable`, SQL bugs propagate."""
        return Bounded(self, (limit_ms or self.call_timeout_ms) + CLIENT_MARGIN_MS)

    def _held(self) -> Grant:
        if self.grant is None:
            raise NotHeld(f"{self.owner} holds no lock on {self.node}")
        return self.grant
