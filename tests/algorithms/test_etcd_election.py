"""Leader election on etcd's election API (a real etcd started by the lab): one leader, epochs
that grow, a deposed leader refused by etcd's proclaim and by an epoch-checking storage."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from algorithms.etcd_election import EtcdElection
from algorithms.etcd_gateway import Gateway
from algorithms.fenced_storage import FencedStorage
from algorithms.lock import Election, Leader
from algorithms.redis_client import connect
from lockviz.lab.labs import LocalLab, ServerSet
from tests.algorithms.test_etcd_lock import Waiter, keys

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def lab() -> Iterator[ServerSet]:
    with LocalLab().servers(["etcd-1", "storage"]) as servers:
        yield servers


def candidate(lab: ServerSet, name: str, owner: str, ttl_ms: int = 2000) -> EtcdElection:
    etcd = lab["etcd-1"]
    events: list[tuple[str, dict[str, Any]]] = []
    found = EtcdElection(
        Gateway(etcd.host, etcd.port, timeout_ms=1000), name, owner=owner, ttl_ms=ttl_ms,
        on_event=lambda k, d: events.append((k, d)),
    )  # fmt: skip
    found.events = events  # type: ignore[attr-defined]
    return found


def storage(lab: ServerSet, kind: str, key: str) -> FencedStorage:
    node = lab["storage"]
    return FencedStorage(connect(node.host, node.port, password=node.password), key, kind=kind)


def ops(c: EtcdElection) -> list[str]:
    return [d["op"] for k, d in c.events if k == "request"]  # type: ignore[attr-defined]


def test_one_leader_a_follower_waits_and_leads_next_with_a_higher_epoch(
    lab: ServerSet, name: str
) -> None:
    alice, bob = candidate(lab, name, "alice", 10_000), candidate(lab, name, "bob", 10_000)
    assert isinstance(alice, Election)
    first = alice.acquire()
    assert first is not None and first.token is not None
    assert ops(alice) == ["lease_grant", "campaign", "claim"]
    assert alice.leader() == Leader("alice", first.token)
    follower = Waiter(bob, timeout_ms=8000)  # bob's campaign blocks: he follows alice
    deadline = time.monotonic() + 5
    while len(keys(lab["etcd-1"], name + "/")) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    observer = candidate(lab, name, "carol")  # bob's connection is busy with his campaign
    assert not follower.returned and observer.leader() == Leader("alice", first.token)
    assert alice.release() is True
    follower.join(6)
    second = follower.grant
    assert second is not None and second.token is not None and second.token > first.token
    assert alice.leader() == Leader("bob", second.token)
    assert bob.release() is True and alice.leader() is None


def test_a_deposed_leader_is_refused_by_the_epoch_check_and_taken_by_plain_storage(
    lab: ServerSet, name: str
) -> None:
    """Alice leads on a 2 s lease and sends no keepalive (a pause would stop them too): etcd
    expires her lease, elects bob with a higher epoch, and alice still believes she leads."""
    alice, bob = candidate(lab, name, "alice"), candidate(lab, name, "bob")
    old = alice.acquire()
    assert old is not None and old.token is not None
    new = bob.acquire(timeout_ms=8000)  # elected once etcd ends alice's lease
    assert new is not None and new.token is not None and new.token > old.token
    assert alice.grant is old  # nothing told her
    assert alice.proclaim("alice is in charge") is False  # etcd itself checks the leader key
    refused = [d for k, d in alice.events if k == "reply" and d["op"] == "proclaim"]  # type: ignore[attr-defined]
    assert "not leader" in refused[0]["error"]
    key = f"test:{uuid.uuid4().hex[:8]}"
    fenced, plain = storage(lab, "fenced", key + ":f"), storage(lab, "plain", key + ":p")
    for s in (fenced, plain):
        assert s.write("B", new.token).accepted  # the new leader acts
    stale = fenced.write("A", old.token)  # the deposed leader acts late, with its epoch
    assert not stale.accepted and stale.reason == f"{old.token} < {new.token}"
    assert plain.write("A", old.token).accepted  # a plain storage takes it
    assert plain.read()[0] == "A" and fenced.read()[0] == "B"
    assert alice.release() is False  # resigning finds the key gone
    assert bob.release() is True


def test_a_campaign_that_times_out_leaves_the_election(lab: ServerSet, name: str) -> None:
    alice, bob = candidate(lab, name, "alice", 10_000), candidate(lab, name, "bob", 10_000)
    grant = alice.acquire()
    assert grant is not None
    assert bob.acquire(timeout_ms=1000) is None
    assert bob.events[-1] == ("acquire_failed", {"reason": "timed out after 1000 ms"})  # type: ignore[attr-defined]
    assert list(keys(lab["etcd-1"], name + "/")) == [grant.value]  # bob's key went with his lease
    assert alice.release() is True
