"""The fenced storage's check runs on a real Redis server, atomically with the write."""

from __future__ import annotations

import pytest

from algorithms.fenced_storage import FencedStorage
from algorithms.redis_client import connect
from lockviz.lab.labs import ServerSet

pytestmark = pytest.mark.live


def storage(servers: ServerSet, fencing: bool, writer: str = "w") -> FencedStorage:
    node = servers["storage"]
    client = connect(node.host, node.port, password=node.password)
    return FencedStorage(client, "test:res", fencing=fencing, writer=writer)


def test_fenced_storage_rejects_a_lower_token(servers: ServerSet) -> None:
    bob, alice = storage(servers, True, "bob"), storage(servers, True, "alice")
    assert bob.write("B", 34).accepted
    result = alice.write("A", 33)
    assert not result.accepted
    assert result.highest == 34 and result.reason == "33 < 34"
    assert bob.read() == ("B", ["bob 34 B"])


def test_equal_token_is_the_same_holder_writing_again(servers: ServerSet) -> None:
    s = storage(servers, True)
    assert s.write("one", 5).accepted
    assert s.write("two", 5).accepted
    assert s.read()[0] == "two"


def test_unfenced_storage_accepts_a_stale_write(servers: ServerSet) -> None:
    bob, alice = storage(servers, False, "bob"), storage(servers, False, "alice")
    assert bob.write("B", 34).accepted
    result = alice.write("A", 33)
    assert result.accepted and result.highest == 34
    assert alice.read() == ("A", ["bob 34 B", "alice 33 A"])  # bob's newer data is lost
