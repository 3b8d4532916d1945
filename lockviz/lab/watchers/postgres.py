"""PostgreSQL deciding: when did a session's advisory lock go?

PostgreSQL has no notifications for its lock table, so the observer polls ``pg_locks`` every
50 ms over a connection of its own and reports ``deleted`` when a session's advisory lock is
gone: an unlock, a COMMIT, or the session's end (crash, terminated, idle timeout). The event is
stamped when the poll that no longer saw the lock started, so it lags the server by at most
one poll. When even a fresh loopback connection fails, the server is down, and every lock it
held (they live in its shared memory) is reported gone as of the moment the observer lost it.
Clients name themselves in ``application_name``, which is how it knows the holder; through the
pooler, the shared server session carries the name of the client that used it last.
"""

from __future__ import annotations

import time

import psycopg
from psycopg.rows import TupleRow

from algorithms.postgres_session import connect
from lockviz.lab.watchers.base import ServerWatcher

POLL_S = 0.05
OBSERVER_NAME = "lockviz-observer"
# Every advisory lock granted right now, by server session, with the name of its client.
# The name comes from pg_stat_get_activity(pid), the function under the pg_stat_activity view,
# without the view's joins to pg_database and pg_authid: a fresh session's first poll loaded
# their catalogs, 2-3 ms of the server's CPU as a run starts (measured), and each poll after it
# planned them again.
LOCKS_SQL = """
SELECT l.pid, (l.classid::bigint << 32) | l.objid::bigint, a.application_name
FROM pg_locks l JOIN LATERAL pg_stat_get_activity(l.pid) a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
"""


class LockTableWatcher(ServerWatcher):
    """Polls one server's ``pg_locks`` and reports each advisory lock that disappears."""

    transient = (psycopg.Error,)

    def init_state(self) -> None:
        self.held: dict[tuple[int, int], str] = {}  # (backend pid, key) -> holder's name
        self.lost_ns: int | None = None  # when the connection to the server was lost
        self.polled_ns = 0  # when the last poll that completed began

    def caught_up(self, since_ns: int) -> bool:
        # A poll that began after ``since_ns`` has seen what went before it; a server that is
        # down had its locks reported gone already.
        return self.polled_ns >= since_ns or self.lost_ns is not None or not self.running

    def watch(self) -> None:
        with connect(
            self.host, self.port, application_name=OBSERVER_NAME, password=self.password
        ) as conn:
            self.lost_ns = None
            while not self.stopping:
                self._poll(conn)
                self.ready()  # the first poll is the baseline
                self.pause(POLL_S)

    def lost(self, failures: int) -> None:
        if self.lost_ns is None:
            self.lost_ns = time.monotonic_ns()
        else:  # a fresh loopback connection failed too: the server is down (killed)
            self._forget_all(self.lost_ns)

    def backoff_s(self, failures: int) -> float:
        return POLL_S

    def _forget_all(self, t_ns: int) -> None:
        """Advisory locks live in the server's shared memory: they died with the server."""
        for (_, key), holder in self.held.items():
            self.record(self.name, "deleted", {"key": key, "holder": holder}, t_ns)
        self.held = {}

    def _poll(self, conn: psycopg.Connection[TupleRow]) -> None:
        t_ns = time.monotonic_ns()
        now = {(int(pid), int(key)): name for pid, key, name in conn.execute(LOCKS_SQL)}
        for (pid, key), holder in self.held.items():
            if (pid, key) not in now:
                self.record(self.name, "deleted", {"key": key, "holder": holder}, t_ns)
        self.held = now
        self.polled_ns = t_ns
