"""Advisory locks against a real PostgreSQL (and a real PgBouncer) started by the lab."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from algorithms.errors import NotHeld
from algorithms.postgres_lock import PostgresLock
from algorithms.postgres_session import connect
from lockviz.lab.labs import LocalLab
from lockviz.lab.procs import wait_until

pytestmark = pytest.mark.live

KEY = 4242
MakeLock = Callable[..., PostgresLock]


@pytest.fixture
def pg(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    with LocalLab().servers(["pg-1"]) as started:
        # The server asks for its password (SCRAM); libpq takes it from here when not given.
        monkeypatch.setenv("PGPASSWORD", started["pg-1"].password)
        yield started["pg-1"]


@pytest.fixture
def make(pg: Any) -> Iterator[MakeLock]:
    made: list[PostgresLock] = []

    def make_lock(owner: str, *, pooled: bool = False, **kw: Any) -> PostgresLock:
        port = pg.pooler_port if pooled else pg.port

        def session() -> psycopg.Connection[tuple[Any, ...]]:
            return connect(pg.host, port, application_name=owner, pooled=pooled)

        events: list[tuple[str, dict[str, Any]]] = []
        lock = PostgresLock(
            session(), KEY, owner=owner, on_event=lambda k, d: events.append((k, d)),
            reconnect=session, **kw,
        )  # fmt: skip
        lock.events = events  # type: ignore[attr-defined]
        made.append(lock)
        return lock

    yield make_lock
    for lock in made:
        lock.close()


def test_one_session_at_a_time_and_tokens_increase(make: MakeLock) -> None:
    alice, bob = make("alice"), make("bob")
    first = alice.acquire()
    assert first is not None and first.token is not None
    assert bob.acquire(timeout_ms=0) is None  # another session holds the key
    assert alice.release() is True
    second = bob.acquire()
    assert second is not None and second.token is not None and second.token > first.token
    kinds = [kind for kind, _ in alice.events]  # type: ignore[attr-defined]
    assert kinds == ["request", "reply", "granted", "request", "reply", "released"]
    granted = dict(alice.events)["granted"]  # type: ignore[attr-defined]
    assert granted["ttl_ms"] is None and granted["node"] == "pg-1"  # no lease


def test_session_locks_are_reentrant_two_locks_need_two_unlocks(make: MakeLock) -> None:
    alice, bob = make("alice"), make("bob")
    first = alice.acquire()
    again = alice.acquire(timeout_ms=0)  # the same session asks again: granted, not refused
    assert first is not None and again is not None and again.token > first.token  # type: ignore[operator]
    assert alice.release() is True  # one unlock of two
    assert bob.acquire(timeout_ms=300) is None  # still held: the count is 1
    assert alice.conn.execute("SELECT pg_advisory_unlock(%s)", [KEY]).fetchone() == (True,)
    assert bob.acquire(timeout_ms=0) is not None


def test_unlocking_a_key_the_session_does_not_hold_returns_false_with_the_warning(
    make: MakeLock,
) -> None:
    alice = make("alice")
    assert alice.acquire() is not None
    alice.conn.execute("SELECT pg_advisory_unlock_all()")  # someone else's code, same session
    assert alice.release() is False
    assert alice.events[-1] == (  # type: ignore[attr-defined]
        "released",
        {"ok": False, "reason": "you don't own a lock of type ExclusiveLock"},
    )
    with pytest.raises(NotHeld):
        alice.release()


def test_xact_lock_ends_with_the_transaction_and_unlock_cannot_release_it(
    make: MakeLock,
) -> None:
    alice, bob = make("alice", scope="xact"), make("bob", scope="xact")
    warnings: list[str] = []
    alice.conn.add_notice_handler(lambda diag: warnings.append(str(diag.message_primary)))
    first = alice.acquire(timeout_ms=1000)
    assert first is not None
    assert alice.conn.execute("SELECT pg_advisory_unlock(%s)", [KEY]).fetchone() == (False,)
    assert warnings == ["you don't own a lock of type ExclusiveLock"]
    assert bob.acquire(timeout_ms=0) is None  # the unlock did nothing: still held
    assert bob.conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE  # rolled back
    assert alice.release() is True  # COMMIT releases it
    second = bob.acquire(timeout_ms=1000)
    assert second is not None and second.token is not None and first.token is not None
    assert second.token > first.token


def waiting_in_the_servers_queue(pg: Any) -> bool:
    with pg.connect(application_name="observer") as conn:
        row = conn.execute("SELECT count(*) FROM pg_locks WHERE NOT granted").fetchone()
    return bool(row and row[0])


def test_xact_waiter_queues_on_the_server_until_commit_or_lock_timeout(
    make: MakeLock, pg: Any
) -> None:
    alice, bob = make("alice", scope="xact"), make("bob", scope="xact")
    assert alice.acquire(timeout_ms=1000) is not None
    assert bob.acquire(timeout_ms=300) is None  # lock_timeout ended the wait
    assert ("reply", "lock_timeout") in [(k, d.get("reason")) for k, d in bob.events]  # type: ignore[attr-defined]
    assert bob.conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    got: dict[str, Any] = {}
    waiter = threading.Thread(target=lambda: got.update(grant=bob.acquire(timeout_ms=10_000)))
    waiter.start()
    wait_until(lambda: waiting_in_the_servers_queue(pg), 10, "bob in the server's lock queue")
    assert waiter.is_alive()  # one request, waiting in the server's lock queue
    released_ns = time.monotonic_ns()
    assert alice.release() is True
    waiter.join(10)
    assert got["grant"] is not None and got["grant"].granted_ns > released_ns
    requests = [d for k, d in bob.events if k == "request"]  # type: ignore[attr-defined]
    assert len(requests) == 2  # no polling


def test_xact_lease_the_server_ends_an_idle_holder_and_extend_is_the_heartbeat(
    make: MakeLock,
) -> None:
    alice, bob = make("alice", scope="xact", lease_ms=800), make("bob", scope="xact")
    assert alice.acquire(timeout_ms=1000) is not None
    # 2.4 s in all, three lease lengths: each query restarts the idle clock. A beat every 0.2 s
    # leaves a loaded machine 0.6 s to be late by before the lease ends.
    for _ in range(12):
        time.sleep(0.2)
        assert alice.extend() is True
    assert bob.acquire(timeout_ms=0) is None
    grant = bob.acquire(timeout_ms=5000)  # alice idles now: the server terminates her session
    assert grant is not None
    assert alice.release() is False
    reason = alice.events[-1][1]["reason"]  # type: ignore[attr-defined]
    assert "idle-in-transaction timeout" in reason


def test_a_session_that_ends_frees_its_lock_and_its_holder_learns_it(
    make: MakeLock, pg: Any
) -> None:
    alice, bob = make("alice"), make("bob")
    assert alice.acquire() is not None
    assert alice.extend() is True  # no lease: extend only checks that the session holds it
    with connect(pg.host, pg.port, application_name="admin") as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
            ["alice"],
        )
    assert bob.acquire(timeout_ms=2000) is not None
    assert alice.extend() is False
    assert alice.events[-1][0] == "lost"  # type: ignore[attr-defined]
    assert alice.grant is None


def test_through_pgbouncer_a_second_client_is_granted_the_held_lock(make: MakeLock) -> None:
    alice, bob = make("alice", pooled=True), make("bob", pooled=True)
    carol = make("carol")  # connected to the server directly
    first, second = alice.acquire(), bob.acquire(timeout_ms=0)
    assert first is not None and second is not None  # both "hold" it
    assert first.value.split(":")[1] == second.value.split(":")[1]  # one server session
    assert carol.acquire(timeout_ms=0) is None
    assert alice.release() is True  # lowers the shared count ...
    assert carol.acquire(timeout_ms=0) is None  # ... to one: still held
    assert bob.release() is True
    assert carol.acquire(timeout_ms=0) is not None


def test_through_pgbouncer_a_disconnected_holders_lock_stays_in_the_pool(make: MakeLock) -> None:
    dave = make("dave", pooled=True)
    assert dave.acquire() is not None
    dave.close()  # a direct session would free its locks here; the pooled server session stays
    time.sleep(0.3)
    carol, erin = make("carol"), make("erin", pooled=True)
    assert carol.acquire(timeout_ms=500) is None
    assert erin.acquire(timeout_ms=0) is not None  # whoever gets that session "holds" it


def test_prepare_makes_both_statements_in_one_query_and_acquire_runs_them(make: MakeLock) -> None:
    alice = make("alice")
    alice.prepare()
    rows = alice.conn.execute("SELECT name, from_sql FROM pg_prepared_statements").fetchall()
    assert sorted(rows) == [("lockviz_try", True), ("lockviz_unlock", True)]  # by SQL PREPARE
    grant = alice.acquire()
    assert grant is not None and grant.token is not None
    assert alice.release() is True
    alice.prepare()  # prepared already: nothing to do
    kinds = [kind for kind, _ in alice.events]  # type: ignore[attr-defined]
    assert kinds == ["request", "reply", "granted", "request", "reply", "released"]


def test_every_call_has_a_bound(pg: Any) -> None:
    with connect(pg.host, pg.port, application_name="t", timeout_ms=300) as conn:
        assert conn.execute("SHOW statement_timeout").fetchone() == ("300ms",)
        assert conn.execute("SHOW lock_timeout").fetchone() == ("300ms",)
        assert conn.info.get_parameters()["keepalives"] == "1"
        assert int(conn.info.get_parameters()["tcp_user_timeout"]) > 0
        with pytest.raises(psycopg.errors.QueryCanceled):
            conn.execute("SELECT pg_sleep(2)")


def test_a_frozen_server_session_cannot_hang_a_call_and_acquire_starts_a_new_one(
    make: MakeLock,
) -> None:
    alice = make("alice")
    first = alice.acquire()
    assert first is not None
    backend = int(first.value.rsplit("-", 1)[1])
    os.kill(backend, signal.SIGSTOP)  # its kernel still acknowledges: only silence comes back
    try:
        checker = threading.Thread(target=alice.extend)
        started = time.monotonic()
        checker.start()
        checker.join(10)
        assert not checker.is_alive()  # the client's own deadline ended the call
        assert time.monotonic() - started < 5
    finally:
        os.kill(backend, signal.SIGCONT)
    reply = next(d for k, d in alice.events if k == "reply" and d["op"] == "extend")  # type: ignore[attr-defined]
    assert reply["ok"] is False and reply["error"] == "no reply within 1500 ms"
    assert alice.events[-1][0] == "lost" and alice.grant is None  # type: ignore[attr-defined]
    second = alice.acquire(timeout_ms=3000)  # a new session; the old one ended with its lock
    assert second is not None and second.value != first.value
    assert second.token > first.token  # type: ignore[operator]
