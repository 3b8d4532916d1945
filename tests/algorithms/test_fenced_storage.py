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


def kinded(servers: ServerSet, kind: str, writer: str = "w") -> FencedStorage:
    node = servers["storage"]
    client = connect(node.host, node.port, password=node.password)
    return FencedStorage(client, "test:res", kind=kind, writer=writer)


def test_every_write_moves_the_version_and_a_read_returns_it(servers: ServerSet) -> None:
    s = kinded(servers, "plain")
    assert (s.fetch().value, s.fetch().version) == (None, 0)
    result = s.write("A", 0)
    assert (result.found, result.version) == (0, 1)
    assert s.read_versioned() == type(s.fetch())("A", 1)


def test_compare_and_set_refuses_a_write_based_on_an_out_of_date_read(servers: ServerSet) -> None:
    alice, bob = kinded(servers, "cas", "alice"), kinded(servers, "cas", "bob")
    seen = alice.fetch().version
    assert bob.fetch().version == seen == 0
    assert alice.write("A", 0, read=seen).accepted
    refused = bob.write("B", 0, read=seen)
    assert not refused.accepted and refused.reason == "read v0, now v1"
    assert (refused.found, refused.version) == (1, 1)  # nothing applied
    assert bob.write("AB", 0, read=bob.fetch().version).accepted  # read again, then write
    assert alice.read() == ("AB", ["alice 0 A", "bob 0 AB"])


def test_compare_and_set_ignores_tokens_and_fencing_ignores_versions(servers: ServerSet) -> None:
    cas = kinded(servers, "cas")
    assert cas.write("high", 9, read=0).accepted
    assert cas.write("low", 1, read=1).accepted  # a lower token, but the read is current
    fenced = kinded(servers, "fenced")
    assert fenced.write("any", 9, read=0).accepted  # an old read, but a token not lower


def test_an_idempotency_key_is_applied_once_and_answered_with_its_first_result(
    servers: ServerSet,
) -> None:
    alice, bob = kinded(servers, "plain", "alice"), kinded(servers, "plain", "bob")
    first = alice.write("A", 0, read=0, key="k1")
    assert first.accepted and not first.duplicate and (first.found, first.version) == (0, 1)
    assert bob.write("B", 0, read=1).accepted
    again = alice.write("A", 0, read=0, key="k1")
    assert again.accepted and again.duplicate and (again.found, again.version) == (0, 1)
    assert alice.read() == ("B", ["alice 0 A", "bob 0 B"])  # the repeat applied nothing
    assert alice.write("A2", 0, key="k2").accepted  # another key is another write


def test_a_rejected_first_write_is_what_its_key_answers_again(servers: ServerSet) -> None:
    s = kinded(servers, "cas")
    assert s.write("A", 0, read=0).accepted
    first = s.write("B", 0, read=0, key="k")
    assert not first.accepted
    again = s.write("B", 0, read=1, key="k")  # a current read now, but the key answers first
    assert not again.accepted and again.duplicate and "first write with key 'k'" in again.reason


def test_every_write_and_read_is_reported_with_its_basis(servers: ServerSet) -> None:
    node = servers["storage"]
    events: list[tuple[str, dict[str, object]]] = []
    s = FencedStorage(
        connect(node.host, node.port, password=node.password), "test:res", kind="cas",
        writer="alice", on_event=lambda k, d: events.append((k, d)),
    )  # fmt: skip
    s.read_versioned()
    s.write("A", 3, read=0, key="k")
    kinds = [(k, d["op"]) for k, d in events]
    assert kinds == [
        ("request", "read"),
        ("reply", "read"),
        ("request", "write"),
        ("reply", "write"),
    ]
    assert events[1][1]["value"] is None and events[1][1]["version"] == 0
    assert {"value": "A", "token": 3, "read": 0, "key": "k"}.items() <= events[2][1].items()
    assert {"accepted": True, "found": 0, "version": 1}.items() <= events[3][1].items()


def test_a_fenced_read_raises_the_highest_token_so_the_stale_writer_is_refused(
    servers: ServerSet,
) -> None:
    """The fencing hole closed: the new holder's read reaches the storage before the stale
    holder's write, and carries its token there."""
    alice, bob = kinded(servers, "fenced_reads", "alice"), kinded(servers, "fenced_reads", "bob")
    assert alice.read_versioned(33).accepted  # alice, holding token 33, reads
    seen = bob.read_versioned(34)  # the lock passed to bob (34); he reads before he writes
    assert seen.accepted and seen.highest == 33
    stale = alice.write("A", 33, read=0)
    assert not stale.accepted and stale.reason == "33 < 34"  # refused before bob ever wrote
    refused = alice.read_versioned(33)  # a stale reader is refused too
    assert not refused.accepted and refused.value is None and refused.reason == "33 < 34"
    assert bob.write("B", 34, read=seen.version).accepted


def test_a_plain_fenced_storage_ignores_a_read_s_token(servers: ServerSet) -> None:
    """The hole stays open when reads carry nothing: only writes raise the highest token."""
    alice, bob = kinded(servers, "fenced", "alice"), kinded(servers, "fenced", "bob")
    assert bob.read_versioned(34).token is None  # not sent: a fenced storage's reads are plain
    assert alice.write("A", 33, read=0).accepted  # the stale write arrives first


def test_a_fenced_read_is_reported_with_its_token_and_its_refusal(servers: ServerSet) -> None:
    node = servers["storage"]
    events: list[tuple[str, dict[str, object]]] = []
    s = FencedStorage(
        connect(node.host, node.port, password=node.password), "test:res",
        kind="fenced_reads", writer="alice", on_event=lambda k, d: events.append((k, d)),
    )  # fmt: skip
    s.write("B", 5)
    s.read_versioned(4)
    assert events[2][1] == {"to": "storage", "call": events[2][1]["call"], "op": "read", "token": 4}
    assert {"accepted": False, "token": 4, "highest": 5, "reason": "4 < 5"}.items() <= events[3][
        1
    ].items()
