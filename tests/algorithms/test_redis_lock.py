"""The single-node Redis lock against a real redis-server started by the lab."""

from __future__ import annotations

import time

import pytest

from algorithms.errors import BackendUnavailable, NotHeld
from algorithms.redis_client import connect
from algorithms.redis_lock import RedisLock
from lockviz.lab.labs import ServerSet

pytestmark = pytest.mark.live


def make_lock(servers: ServerSet, owner: str, ttl_ms: int = 2000, **kw: object) -> RedisLock:
    node = servers["redis-1"]
    events: list[tuple[str, dict]] = []
    client = connect(node.host, node.port, password=node.password)
    lock = RedisLock(
        client, "test:lock", owner=owner, ttl_ms=ttl_ms,
        on_event=lambda kind, details: events.append((kind, details)), **kw,
    )  # fmt: skip
    lock.events = events  # type: ignore[attr-defined]
    return lock


def test_one_holder_at_a_time_and_tokens_increase(servers: ServerSet) -> None:
    alice, bob = make_lock(servers, "alice"), make_lock(servers, "bob")
    first = alice.acquire()
    assert first is not None
    assert bob.acquire(timeout_ms=0) is None  # held: SET NX refused
    assert alice.release() is True
    second = bob.acquire()
    assert second is not None and second.token > first.token


def test_lease_expires_on_the_server(servers: ServerSet) -> None:
    alice, bob = make_lock(servers, "alice", ttl_ms=300), make_lock(servers, "bob")
    assert alice.acquire() is not None
    pttl = servers["redis-1"].client().pttl("test:lock")
    assert 0 < pttl <= 300
    grant = bob.acquire(timeout_ms=3000)  # bob retries until the server expires alice's key
    assert grant is not None
    assert servers["redis-1"].client().get("test:lock") == grant.value


def test_release_never_deletes_someone_elses_lock(servers: ServerSet) -> None:
    alice, bob = make_lock(servers, "alice", ttl_ms=200), make_lock(servers, "bob")
    assert alice.acquire() is not None
    bob_grant = bob.acquire(timeout_ms=3000)
    assert bob_grant is not None
    assert alice.release() is False  # compare-and-delete saw bob's value
    assert servers["redis-1"].client().get("test:lock") == bob_grant.value
    assert ("released", {"ok": False, "reason": "not the owner any more"}) in alice.events


def test_unsafe_release_deletes_the_new_holders_lock(servers: ServerSet) -> None:
    alice = make_lock(servers, "alice", ttl_ms=200, unsafe_release=True)
    bob = make_lock(servers, "bob")
    assert alice.acquire() is not None
    assert bob.acquire(timeout_ms=3000) is not None
    assert alice.release() is True  # the plain DEL "succeeds"...
    assert servers["redis-1"].client().exists("test:lock") == 0  # ...and bob's lock is gone


def test_extend_prolongs_only_a_live_lease(servers: ServerSet) -> None:
    alice = make_lock(servers, "alice", ttl_ms=300)
    assert alice.acquire() is not None
    assert alice.extend(5000) is True
    assert servers["redis-1"].client().pttl("test:lock") > 1000
    servers["redis-1"].client().delete("test:lock")
    assert alice.extend() is False
    assert alice.grant is None
    assert alice.events[-1][0] == "lost"


def test_every_step_is_reported_as_request_and_reply(servers: ServerSet) -> None:
    alice = make_lock(servers, "alice")
    alice.acquire()
    alice.release()
    kinds = [kind for kind, _ in alice.events]
    assert kinds == ["request", "reply", "granted", "request", "reply", "released"]
    request, reply = alice.events[0][1], alice.events[1][1]
    assert request["call"] == reply["call"] and reply["ok"] is True and reply["token"] >= 1


def test_release_without_grant_is_an_error(servers: ServerSet) -> None:
    with pytest.raises(NotHeld):
        make_lock(servers, "alice").release()


def test_a_dead_node_fails_fast_with_a_clear_error(servers: ServerSet) -> None:
    alice = make_lock(servers, "alice")
    servers["redis-1"].kill()
    started = time.monotonic()
    assert alice.acquire(timeout_ms=300) is None
    assert time.monotonic() - started < 5  # no hidden retry policy stretching the timeout
    replies = [d for kind, d in alice.events if kind == "reply"]
    assert replies and all(not r["ok"] and "connection failed" in r["error"] for r in replies)
    with pytest.raises(BackendUnavailable):
        alice.do_acquire("x")
