"""PostgreSQL advisory locks: algorithms.postgres_lock on ``pg-1``, and an observer of pg_locks.

Variants: ``session`` (a session lock, no lease), ``xact`` (a transaction lock whose lease is
the scenario's ``ttl_ms``, enforced by the server as ``idle_in_transaction_session_timeout``)
and ``pooled`` (the session lock through the lab's PgBouncer in transaction pooling mode).

PostgreSQL has no notifications for its lock table, so the observer polls ``pg_locks`` every
50 ms over a connection of its own and reports ``deleted`` when a session's advisory lock is
gone: an unlock, a COMMIT, or the session's end (crash, terminated, idle timeout). The event is
stamped when the poll that no longer saw the lock started, so it lags the server by at most
one poll. When even a fresh loopback connection fails, the server is down, and every lock it
held (they live in its shared memory) is reported gone as of the moment the observer lost it.
Clients name themselves in ``application_name``, which is how it knows the holder; through the
pooler, the shared server session carries the name of the client that used it last.

Pooled clients find PgBouncer through the server (``lockviz.pooler``) and reach it directly,
not through their per-client network links: a partition of ``pg-1`` does not cut them off.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import psycopg

from algorithms.errors import InvalidScenarioUse
from algorithms.events import EventSink
from algorithms.postgres_lock import PostgresLock, connect
from lockviz.lab.watcher import NodeEventSink

LOCK_KEY = 0x6C6F636B  # "lock" in ASCII; any bigint names an advisory lock
POLL_S = 0.05
OBSERVER_NAME = "lockviz-observer"
# Every advisory lock granted right now, by server session, with the name of its client.
LOCKS_SQL = """
SELECT l.pid, (l.classid::bigint << 32) | l.objid::bigint, a.application_name
FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
"""


def address(config: dict[str, Any], node: str) -> tuple[str, int]:
    host, port = config["servers"][node].rsplit(":", 1)
    return host, int(port)


def pooler_address(host: str, port: int, timeout_ms: int) -> tuple[str, int]:
    """Where this server's PgBouncer listens: the lab publishes it as ``lockviz.pooler``."""
    with connect(host, port, application_name="lockviz-lab", timeout_ms=timeout_ms) as conn:
        row = conn.execute("SELECT current_setting('lockviz.pooler', true)").fetchone()
    published = row[0] if row else None
    if not published:
        raise InvalidScenarioUse(
            f"{host}:{port} publishes no pooler: set lockviz.pooler = 'host:port' on the server"
        )
    pool_host, pool_port = str(published).rsplit(":", 1)
    return pool_host, int(pool_port)


def make_lock(config: dict[str, Any], owner: str, emit: EventSink) -> PostgresLock:
    node = config["nodes"][0]
    host, port = address(config, node)
    variant = config.get("variant") or "session"
    timeout_ms = int(config["timeout_ms"])
    pooled = variant == "pooled"
    if pooled:
        host, port = pooler_address(host, port, timeout_ms)

    def session() -> psycopg.Connection[tuple[Any, ...]]:
        return connect(host, port, application_name=owner, timeout_ms=timeout_ms, pooled=pooled)

    xact = variant == "xact"
    return PostgresLock(
        session(),
        LOCK_KEY,
        owner=owner,
        scope="xact" if xact else "session",
        lease_ms=int(config["ttl_ms"]) if xact else None,
        node=node,
        on_event=emit,
        call_timeout_ms=timeout_ms,
        reconnect=session,
    )


def watchers(servers: Any, scenario: Any, record: NodeEventSink) -> list[LockTableWatcher]:
    return [LockTableWatcher(servers[node], node, record) for node in scenario.nodes]


class LockTableWatcher:
    """Polls one server's ``pg_locks`` and reports each advisory lock that disappears."""

    def __init__(self, server: Any, node: str, on_event: NodeEventSink) -> None:
        self.server = server
        self.node = node
        self.on_event = on_event
        self.held: dict[tuple[int, int], str] = {}  # (backend pid, key) -> holder's name
        self._stop = threading.Event()
        self._baseline = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"watch-{node}", daemon=True)

    def start(self, timeout_s: float = 5.0) -> None:
        self._thread.start()
        self._baseline.wait(timeout_s)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)

    def _run(self) -> None:
        lost_ns: int | None = None
        while not self._stop.is_set():
            try:
                with connect(
                    self.server.host, self.server.port, application_name=OBSERVER_NAME
                ) as conn:
                    lost_ns = None
                    while not self._stop.is_set():
                        self._poll(conn)
                        self._baseline.set()
                        self._stop.wait(POLL_S)
            except psycopg.Error:
                if lost_ns is None:
                    lost_ns = time.monotonic_ns()
                else:  # a fresh loopback connection failed too: the server is down (killed)
                    self._forget_all(lost_ns)
                self._stop.wait(POLL_S)

    def _forget_all(self, t_ns: int) -> None:
        """Advisory locks live in the server's shared memory: they died with the server."""
        for (_, key), holder in self.held.items():
            self.on_event(self.node, "deleted", {"key": key, "holder": holder}, t_ns)
        self.held = {}

    def _poll(self, conn: psycopg.Connection[tuple[Any, ...]]) -> None:
        t_ns = time.monotonic_ns()
        now = {(int(pid), int(key)): name for pid, key, name in conn.execute(LOCKS_SQL)}
        for (pid, key), holder in self.held.items():
            if (pid, key) not in now:
                self.on_event(self.node, "deleted", {"key": key, "holder": holder}, t_ns)
        self.held = now
