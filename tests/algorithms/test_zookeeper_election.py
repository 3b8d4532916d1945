"""Leader election on ZooKeeper (a real server started by the lab): kazoo's recipe, epochs that
grow, kazoo's own ``Election`` seeing the same candidates, and a deposed leader refused by an
epoch-checking storage."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from kazoo.recipe.election import Election as KazooElection

from algorithms.fenced_storage import FencedStorage
from algorithms.lock import Election, Leader
from algorithms.redis_client import connect as redis_connect
from algorithms.zookeeper_calls import connect
from algorithms.zookeeper_election import ZooKeeperElection
from lockviz.lab.labs import LocalLab, ServerSet

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def lab() -> Iterator[ServerSet]:
    with LocalLab().servers(["zk-1", "storage"]) as servers:
        yield servers


@pytest.fixture
def make(lab: ServerSet, request: pytest.FixtureRequest) -> Any:
    """Candidates on a path of this test's own; each is closed when the test ends."""
    path = f"/lockviz/{request.node.name}"

    def candidate(owner: str, ttl_ms: int = 4000) -> ZooKeeperElection:
        client = connect(lab["zk-1"].address, session_ms=ttl_ms, timeout_ms=5000)
        found = ZooKeeperElection(client, path, owner=owner, ttl_ms=ttl_ms)
        request.addfinalizer(found.close)
        return found

    candidate.path = path  # type: ignore[attr-defined]
    return candidate


def test_the_lowest_node_leads_and_the_next_leader_has_a_higher_epoch(make: Any) -> None:
    alice, bob = make("alice"), make("bob")
    assert isinstance(alice, Election)
    first = alice.acquire(timeout_ms=3000)
    assert first is not None and first.token is not None
    assert first.value.rsplit("/", 1)[1].startswith("alice.") and "__lock__" in first.value
    assert bob.leader() == Leader("alice", first.token)
    got: list[Any] = []
    follower = threading.Thread(target=lambda: got.append(bob.acquire(timeout_ms=8000)))
    follower.start()
    follower.join(0.5)
    assert follower.is_alive()  # bob watches alice's node
    assert alice.release() is True
    follower.join(8)
    second = got[0]
    assert second is not None and second.token > first.token
    assert alice.leader() == Leader("bob", second.token)


def test_kazoo_s_own_election_sees_these_candidates_in_order(make: Any, lab: ServerSet) -> None:
    alice, bob = make("alice"), make("bob")
    assert alice.acquire(timeout_ms=3000) is not None
    threading.Thread(target=lambda: bob.acquire(timeout_ms=3000), daemon=True).start()
    client = connect(lab["zk-1"].address, session_ms=4000, timeout_ms=5000)
    try:
        kazoo = KazooElection(client, make.path, "carol")
        deadline = 50
        while len(kazoo.contenders()) < 2 and deadline:
            deadline -= 1
            threading.Event().wait(0.05)
        assert kazoo.contenders() == ["alice", "bob"]
    finally:
        client.stop()
        client.close()


def test_a_deposed_leader_is_refused_by_the_epoch_check_and_taken_by_plain_storage(
    make: Any, lab: ServerSet
) -> None:
    """Alice leads; her session ends (closed here; a pause ends it the same way in the lab's
    runs), bob is elected with a higher czxid, and alice's code writes with its old one."""
    alice, bob = make("alice"), make("bob")
    old = alice.acquire(timeout_ms=3000)
    assert old is not None
    alice.client.stop()  # the session ends: ZooKeeper deletes her node
    new = bob.acquire(timeout_ms=8000)
    assert new is not None and new.token > old.token
    node = lab["storage"]
    key = f"test:{make.path}"

    def kinded(kind: str) -> FencedStorage:
        return FencedStorage(
            redis_connect(node.host, node.port, password=node.password), f"{key}:{kind}",
            kind=kind,
        )  # fmt: skip

    fenced, plain = kinded("fenced"), kinded("plain")
    for s in (fenced, plain):
        assert s.write("B", new.token).accepted
    assert not fenced.write("A", old.token).accepted
    assert plain.write("A", old.token).accepted
