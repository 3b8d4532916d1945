"""Sequencer checks against real lock services: current while the grant lives, not after."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from algorithms.etcd_gateway import Gateway
from algorithms.etcd_lock import EtcdLock
from algorithms.events import Reporter
from algorithms.postgres_lock import PostgresLock
from algorithms.postgres_session import connect
from algorithms.redis_client import connect as redis_connect
from algorithms.redis_lock import RedisLock
from algorithms.redlock import Redlock, connect_node
from algorithms.resp import RespConnection
from algorithms.sequencer import (
    EtcdCheck,
    PostgresCheck,
    RedisCheck,
    RedlockCheck,
    Sequencer,
    ZooKeeperCheck,
)
from algorithms.zookeeper_calls import connect as zk_connect
from algorithms.zookeeper_lock import ZooKeeperLock
from lockviz.lab.labs import LocalLab, ServerSet

pytestmark = pytest.mark.live

Events = list[tuple[str, dict[str, Any]]]


def recorder() -> tuple[Reporter, Events]:
    events: Events = []
    return Reporter(lambda kind, details: events.append((kind, details))), events


def replies(events: Events) -> list[dict[str, Any]]:
    return [d for k, d in events if k == "reply" and d["op"] == "check"]


def test_a_sequencer_crosses_a_process_boundary_unchanged() -> None:
    s = Sequencer("etcd", "lockviz/lock", "lockviz/lock/7a", "alice", 12, lease="123")
    assert Sequencer.from_dict(s.as_dict()) == s
    assert "session" not in s.as_dict()  # fields a lock does not have are left out


@pytest.fixture
def redis_servers() -> Iterator[ServerSet]:
    with LocalLab().servers(["redis-1", "redis-2", "redis-3"]) as started:
        yield started


def test_redis_the_key_must_still_hold_the_writers_value(redis_servers: ServerSet) -> None:
    node = redis_servers["redis-1"]
    client = redis_connect(node.host, node.port, password=node.password)
    alice = RedisLock(client, "t:lock", owner="alice", ttl_ms=5000)
    report, events = recorder()
    check = RedisCheck(
        RespConnection(node.host, node.port, timeout_ms=1000, password=node.password),
        "t:lock", node="redis-1", report=report,
    )  # fmt: skip
    assert alice.acquire() is not None
    sequencer = alice.sequencer()
    assert sequencer is not None and sequencer.holder == alice.grant.value  # type: ignore[union-attr]
    assert check.check(sequencer).current
    alice.release()
    answer = check.check(sequencer)
    assert not answer.current and "expired or been deleted" in answer.why
    bob = RedisLock(client, "t:lock", owner="bob", ttl_ms=5000)
    assert bob.acquire() is not None
    answer = check.check(sequencer)
    assert not answer.current and "another client's value" in answer.why
    assert [r["current"] for r in replies(events)] == [True, False, False]
    assert all(d["to"] == "redis-1" for k, d in events if k == "request")
    check.close()


def test_redlock_a_majority_must_still_hold_the_writers_value(redis_servers: ServerSet) -> None:
    names = ["redis-1", "redis-2", "redis-3"]

    def nodes() -> dict[str, RespConnection]:
        return {
            n: connect_node(
                redis_servers[n].host, redis_servers[n].port, timeout_ms=300, node=n,
                password=redis_servers[n].password,
            )
            for n in names
        }  # fmt: skip

    alice = Redlock(nodes(), "t:redlock", owner="alice", ttl_ms=5000)
    report, events = recorder()
    check = RedlockCheck(nodes(), "t:redlock", report=report)
    assert alice.acquire(timeout_ms=1000) is not None
    sequencer = alice.sequencer()
    assert sequencer is not None and check.check(sequencer).current
    assert sorted(d["to"] for k, d in events if k == "request") == names  # a GET on every node
    # Two of three nodes forget alice's key (as after restarts without fsync): no majority.
    for n in names[:2]:
        server = redis_servers[n]
        redis_connect(server.host, server.port, password=server.password).delete("t:redlock")
    answer = check.check(sequencer)
    assert not answer.current and "only 1 of 3 nodes" in answer.why
    check.close()


def test_zookeeper_the_writers_lock_node_must_still_exist() -> None:
    with LocalLab().servers(["zk-1"]) as zk:
        path = f"/lockviz/t-{uuid.uuid4().hex[:6]}"
        address = zk["zk-1"].address
        alice = ZooKeeperLock(
            zk_connect(address, session_ms=4000, timeout_ms=5000), path, owner="alice",
            ttl_ms=4000,
        )  # fmt: skip
        report, events = recorder()
        check = ZooKeeperCheck(
            zk_connect(address, session_ms=10_000, timeout_ms=5000), node="zk-1", report=report
        )
        try:
            assert alice.acquire(timeout_ms=3000) is not None
            sequencer = alice.sequencer()
            assert sequencer is not None and sequencer.token == alice.grant.token  # type: ignore[union-attr]
            assert check.check(sequencer).current
            alice.release()
            answer = check.check(sequencer)
            assert not answer.current and answer.why == "alice's lock node is gone"
            other = Sequencer("zookeeper", path, "/elsewhere/x", "mallory", 1)
            assert not check.check(other).current  # a node of another lock proves nothing
            requests = [d for k, d in events if k == "request"]
            assert [d["path"] for d in requests] == [sequencer.holder] * 2
        finally:
            alice.close()
            check.close()


def test_etcd_the_lease_must_live_and_the_key_be_this_grants() -> None:
    with LocalLab().servers(["etcd-1"]) as servers:
        etcd = servers["etcd-1"]
        name = f"test/{uuid.uuid4().hex[:8]}/lock"
        alice = EtcdLock(Gateway(etcd.host, etcd.port), name, owner="alice", ttl_ms=2000)
        report, events = recorder()
        check = EtcdCheck(Gateway(etcd.host, etcd.port, node="etcd-1"), report=report)
        assert alice.acquire(timeout_ms=2000) is not None
        sequencer = alice.sequencer()
        assert sequencer is not None and sequencer.lease == alice.lease_id
        assert check.check(sequencer).current
        assert [d.get("lease") is not None for k, d in events if k == "request"] == [True, False]
        forged = Sequencer("etcd", name, sequencer.holder, "alice", (sequencer.token or 0) + 1,
                           lease=sequencer.lease)  # fmt: skip
        assert not check.check(forged).current  # the key exists, but not from that revision
        alice.release()  # deletes the key and revokes the lease
        answer = check.check(sequencer)
        assert not answer.current and answer.why == "alice's lease has ended"
        check.close()


@pytest.fixture
def pg(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    with LocalLab().servers(["pg-1"]) as started:
        monkeypatch.setenv("PGPASSWORD", started["pg-1"].password)
        yield started["pg-1"]


def pg_lock(pg: Any, owner: str, pooled: bool = False) -> PostgresLock:
    port = pg.pooler_port if pooled else pg.port

    def session() -> psycopg.Connection[tuple[Any, ...]]:
        return connect(pg.host, port, application_name=owner, pooled=pooled)

    return PostgresLock(session(), 4242, owner=owner, reconnect=session)


def pg_check(pg: Any) -> tuple[PostgresCheck, Events]:
    report, events = recorder()

    def session() -> psycopg.Connection[tuple[Any, ...]]:
        return connect(pg.host, pg.port, application_name="lockviz-storage")

    return PostgresCheck(session, 4242, node="pg-1", report=report), events


def test_postgres_the_writers_own_session_must_still_hold_the_lock(pg: Any) -> None:
    alice, bob = pg_lock(pg, "alice"), pg_lock(pg, "bob")
    check, events = pg_check(pg)
    try:
        assert alice.acquire() is not None
        sequencer = alice.sequencer()
        assert sequencer is not None and sequencer.session == str(alice.session_pid)
        assert check.check(sequencer).current
        alice.release()
        assert bob.acquire() is not None
        answer = check.check(sequencer)
        assert not answer.current and answer.why == "alice's session no longer holds the lock"
        assert [r["current"] for r in replies(events)] == [True, False]
    finally:
        for lock in (alice, bob):
            lock.close()
        check.close()


def test_postgres_through_pgbouncer_the_check_cannot_tell_clients_apart(pg: Any) -> None:
    """Why the lab refuses sequencers with the pooled variant: the session is not the client."""
    alice, bob = pg_lock(pg, "alice", pooled=True), pg_lock(pg, "bob", pooled=True)
    try:
        assert alice.acquire() is not None and bob.acquire() is not None  # the pooled leak
        a, b = alice.sequencer(), bob.sequencer()
        assert a is not None and b is not None
        assert a.session == b.session  # both grants live in the one pooled server session
        held = (
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted"
            " AND pid = %s)"
        )
        with connect(pg.host, pg.port, application_name="t") as conn:
            for s in (a, b):  # pg_locks says "held" for either client's session alike
                assert conn.execute(held, (int(s.session or 0),)).fetchone() == (True,)
    finally:
        for lock in (alice, bob):
            lock.close()
