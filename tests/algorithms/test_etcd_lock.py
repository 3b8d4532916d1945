"""The etcd lease lock against a real etcd started by the lab."""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from algorithms.errors import NotHeld
from algorithms.etcd_gateway import Gateway
from algorithms.etcd_lock import EtcdLock, effective_ttl_s
from algorithms.lock import Grant
from lockviz.lab.labs import LocalLab
from lockviz.lab.servers.etcd import EtcdServer, post, prefix_end

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def etcd() -> Iterator[EtcdServer]:
    """One etcd for the module (it takes ~0.5 s to start); each test uses its own lock name."""
    with LocalLab().servers(["etcd-1"]) as servers:
        yield servers["etcd-1"]


class RecordingLock(EtcdLock):
    """An EtcdLock that keeps every event it reported, in order."""

    def __init__(self, etcd: EtcdServer, name: str, owner: str, ttl_ms: int) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        gateway = Gateway(etcd.host, etcd.port, timeout_ms=500)
        super().__init__(
            gateway,
            name,
            owner=owner,
            ttl_ms=ttl_ms,
            on_event=lambda k, d: self.events.append((k, d)),
        )


def make_lock(etcd: EtcdServer, name: str, owner: str, ttl_ms: int = 2000) -> RecordingLock:
    return RecordingLock(etcd, name, owner, ttl_ms)


class Waiter(threading.Thread):
    """``lock.acquire`` in a thread of its own: a client blocked in its lock call."""

    def __init__(self, lock: EtcdLock, timeout_ms: int) -> None:
        super().__init__(daemon=True)
        self.lock, self.timeout_ms = lock, timeout_ms
        self.grant: Grant | None = None
        self.returned = False
        self.start()

    def run(self) -> None:
        self.grant = self.lock.acquire(timeout_ms=self.timeout_ms)
        self.returned = True


def queued(etcd: EtcdServer, name: str, waiting: int = 1) -> None:
    """Return once ``waiting`` keys wait in the queue behind the holder's (on the server)."""
    deadline = time.monotonic() + 5
    while len(keys(etcd, name + "/")) < 1 + waiting:
        assert time.monotonic() < deadline, keys(etcd, name + "/")
        time.sleep(0.02)


def keys(etcd: EtcdServer, prefix: str) -> dict[str, int]:
    """The keys under ``prefix`` on the server, with their create revisions."""
    body = {"key": b64(prefix), "range_end": b64(prefix_end(prefix))}
    reply = post(etcd.host, etcd.port, "/v3/kv/range", body)
    return {
        base64.b64decode(kv["key"]).decode(): int(kv["create_revision"])
        for kv in reply.get("kvs", [])
    }


def lease_ttl_s(etcd: EtcdServer, lease_id: str) -> int:
    """What etcd says is left of a lease; -1 when it does not know the lease (any more)."""
    return int(post(etcd.host, etcd.port, "/v3/lease/timetolive", {"ID": lease_id})["TTL"])


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def leases_of(lock: RecordingLock) -> list[str]:
    return [d["lease"] for kind, d in lock.events if kind == "reply" and d["op"] == "lease_grant"]


def test_effective_ttl_is_whole_seconds_and_at_least_two() -> None:
    assert [effective_ttl_s(ms) for ms in (100, 1000, 2000, 2001, 3000)] == [2, 2, 2, 3, 3]


def test_one_holder_at_a_time_and_revisions_increase(etcd: EtcdServer, name: str) -> None:
    alice, bob = make_lock(etcd, name, "alice"), make_lock(etcd, name, "bob")
    first = alice.acquire()
    assert first is not None and first.ttl_ms == 2000
    assert bob.acquire(timeout_ms=0) is None  # queued behind alice until the call timed out
    assert alice.release() is True
    second = bob.acquire()
    assert second is not None and first.token is not None and second.token is not None
    assert second.token > first.token
    assert keys(etcd, name + "/") == {second.value: second.token}  # the token is the revision


def test_a_waiter_is_granted_when_the_holder_releases(etcd: EtcdServer, name: str) -> None:
    alice, bob = make_lock(etcd, name, "alice"), make_lock(etcd, name, "bob")
    assert alice.acquire() is not None
    waiter = Waiter(bob, timeout_ms=5000)
    queued(etcd, name)
    assert not waiter.returned  # bob's lock call is blocked on the server
    released_ns = time.monotonic_ns()
    assert alice.release() is True
    waiter.join(6)
    assert waiter.grant is not None and waiter.grant.granted_ns > released_ns


def test_lease_expiry_frees_the_lock(etcd: EtcdServer, name: str) -> None:
    alice, bob = make_lock(etcd, name, "alice", ttl_ms=2000), make_lock(etcd, name, "bob")
    first = alice.acquire()
    assert first is not None
    second = bob.acquire(timeout_ms=8000)  # queued until etcd expires alice's lease
    assert second is not None
    # etcd ended a 2 s lease that nobody renewed; not before its 2 s (a margin for the clocks).
    assert (second.granted_ns - first.granted_ns) / 1e9 > 1.8
    assert lease_ttl_s(etcd, leases_of(alice)[0]) == -1
    assert first.value not in keys(etcd, name + "/")
    assert alice.release() is False
    assert ("released", {"ok": False, "reason": "the key was gone: the lease had expired"}) in (
        alice.events
    )


def test_an_acquire_timeout_revokes_the_lease(etcd: EtcdServer, name: str) -> None:
    alice, bob = make_lock(etcd, name, "alice", ttl_ms=10_000), make_lock(etcd, name, "bob")
    grant = alice.acquire()
    assert grant is not None
    started = time.monotonic()
    assert bob.acquire(timeout_ms=1000) is None
    assert 0.9 < time.monotonic() - started < 4  # waited its timeout, no hidden retries
    assert bob.events[-1] == ("acquire_failed", {"reason": "timed out after 1000 ms"})
    assert lease_ttl_s(etcd, leases_of(bob)[0]) == -1  # revoked: bob left the queue
    assert list(keys(etcd, name + "/")) == [grant.value]


def test_keepalive_keeps_the_lock_past_its_ttl(etcd: EtcdServer, name: str) -> None:
    # A lease far longer than the keepalives' interval: a machine that stalls this process for
    # seconds (a full suite beside other work) must not be what ends it.
    alice, bob = make_lock(etcd, name, "alice", ttl_ms=4000), make_lock(etcd, name, "bob")
    grant = alice.acquire()
    assert grant is not None
    for _ in range(12):  # 6 s in all, far past the 4 s lease
        time.sleep(0.5)
        assert alice.extend() is True
    assert list(keys(etcd, name + "/")) == [grant.value]
    assert bob.acquire(timeout_ms=0) is None
    assert ("extended", {"ok": True, "ttl_ms": 4000}) in alice.events


def test_extend_reports_lost_when_the_lease_is_gone(etcd: EtcdServer, name: str) -> None:
    alice = make_lock(etcd, name, "alice", ttl_ms=5000)
    assert alice.acquire() is not None
    post(etcd.host, etcd.port, "/v3/lease/revoke", {"ID": leases_of(alice)[0]})
    assert alice.extend() is False
    assert alice.grant is None
    assert alice.events[-1][0] == "lost"
    assert alice.events[-2] == ("extended", {"ok": False, "ttl_ms": 5000})
    with pytest.raises(NotHeld):
        alice.release()


def test_a_waiter_keeps_its_place_longer_than_its_lease(etcd: EtcdServer, name: str) -> None:
    """Without keepalives while queued, etcd 3.4 would answer "locked" with a vanished key."""
    alice, bob = make_lock(etcd, name, "alice", ttl_ms=2000), make_lock(etcd, name, "bob")
    assert alice.acquire() is not None
    waiter = Waiter(bob, timeout_ms=8000)
    for _ in range(5):  # alice holds for 3 s; bob's 2 s lease must outlive that in the queue
        time.sleep(0.6)
        assert alice.extend() is True
    assert alice.release() is True
    waiter.join(9)
    grant = waiter.grant
    assert grant is not None and list(keys(etcd, name + "/")) == [grant.value]
    assert any(kind == "reply" and d["op"] == "keepalive" and d["ok"] for kind, d in bob.events)


def test_every_step_is_a_request_and_its_reply(etcd: EtcdServer, name: str) -> None:
    alice = make_lock(etcd, name, "alice", ttl_ms=2500)
    grant = alice.acquire()
    assert grant is not None
    owner_key = f"{name}.owners/{grant.value.rsplit('/', 1)[-1]}"
    owners = keys(etcd, f"{name}.owners/")
    assert owners == {owner_key: grant.token}  # recorded in the same transaction as the lock key
    assert alice.release() is True
    steps = [(d["op"], kind) for kind, d in alice.events if kind in ("request", "reply")]
    ops = ["lease_grant", "lock", "unlock", "revoke"]  # uncontended: the lock step is the claim
    assert steps == [(op, kind) for op in ops for kind in ("request", "reply")]
    requests = [d for kind, d in alice.events if kind == "request"]
    replies = [d for kind, d in alice.events if kind == "reply"]
    assert [r["call"] for r in requests] == [r["call"] for r in replies]
    assert all(r["to"] == "etcd-1" for r in requests) and all(r["ok"] for r in replies)
    lock_reply = next(r for r in replies if r["op"] == "lock")
    assert lock_reply["value"] == grant.value and lock_reply["token"] == grant.token
    granted = next(d for kind, d in alice.events if kind == "granted")
    assert granted == {"node": "etcd-1", "token": grant.token, "ttl_ms": 3000, "value": grant.value}
    assert owner_key not in keys(etcd, f"{name}.owners/")  # the revoke took the owner's key too


def test_a_waiter_claims_its_key_after_the_wait(etcd: EtcdServer, name: str) -> None:
    """A lock call that waited may answer for a key that is gone: the claim checks it."""
    alice, bob = make_lock(etcd, name, "alice"), make_lock(etcd, name, "bob")
    assert alice.acquire() is not None
    waiter = Waiter(bob, timeout_ms=5000)
    queued(etcd, name)
    assert alice.release() is True
    waiter.join(6)
    grant = waiter.grant
    assert grant is not None
    steps = [(d["op"], kind) for kind, d in bob.events if kind in ("request", "reply")]
    ops = ["lease_grant", "lock", "claim"]
    assert steps == [(op, kind) for op in ops for kind in ("request", "reply")]
    lock_reply, claim_reply = [d for kind, d in bob.events if kind == "reply"][1:]
    assert lock_reply == {
        "from": "etcd-1", "call": lock_reply["call"], "op": "lock", "ok": True, "value": grant.value
    }  # fmt: skip
    assert claim_reply["ok"] is True and claim_reply["token"] == grant.token
    assert keys(etcd, name + "/") == {grant.value: grant.token}


def test_a_dead_server_fails_fast(name: str) -> None:
    with LocalLab().servers(["etcd-1"]) as servers:
        etcd = servers["etcd-1"]
        alice = make_lock(etcd, name, "alice")
        etcd.kill()
        started = time.monotonic()
        assert alice.acquire(timeout_ms=300) is None
        assert time.monotonic() - started < 3
        reply = next(d for kind, d in alice.events if kind == "reply")
        assert reply["ok"] is False and "connection failed" in reply["error"]
        assert alice.events[-1][0] == "acquire_failed"
