"""Replicated storage on two real Redis nodes: last-write-wins drops a write, the add-wins set
keeps every one, and a read merges the replicas (read repair)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from algorithms.clock import SystemClock
from algorithms.redis_client import connect
from algorithms.replicated_storage import ReplicatedStorage, SetState, Stamped, merge
from lockviz.lab.labs import LocalLab, ServerSet

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def replicas() -> Iterator[ServerSet]:
    with LocalLab().servers(["redis-1", "redis-2"]) as servers:
        yield servers


class Behind(SystemClock):
    """A client whose wall clock runs ``ms`` behind the host's."""

    def __init__(self, ms: int) -> None:
        self.ms = ms

    def wall(self) -> float:
        return time.time() - self.ms / 1000


BOTH = ("redis-1", "redis-2")


def storage(
    servers: ServerSet, name: str, kind: str, writer: str, nodes: tuple[str, ...] = BOTH,
    clock: SystemClock | None = None,
) -> tuple[ReplicatedStorage, list[tuple[str, dict[str, Any]]]]:  # fmt: skip
    events: list[tuple[str, dict[str, Any]]] = []
    clients = [
        (n, connect(servers[n].host, servers[n].port, password=servers[n].password)) for n in nodes
    ]
    found = ReplicatedStorage(
        clients, name, kind=kind, writer=writer, clock=clock,
        on_event=lambda k, d: events.append((k, d)),
    )  # fmt: skip
    return found, events


def replies(events: list[tuple[str, dict[str, Any]]], op: str) -> list[dict[str, Any]]:
    return [d for k, d in events if k == "reply" and d["op"] == op]


def test_lww_drops_the_newer_write_of_a_client_whose_clock_runs_behind(
    replicas: ServerSet, name: str
) -> None:
    alice, _ = storage(replicas, name, "lww", "alice")
    bob, told = storage(replicas, name, "lww", "bob", clock=Behind(5000))
    first = alice.write("A")
    time.sleep(0.01)
    second = bob.write("B")  # written after alice's, stamped 5 s before it
    assert first.accepted and second.accepted and not second.kept  # told OK, kept nowhere
    assert second.stamp < first.stamp
    for reply in replies(told, "write"):
        assert reply["accepted"] is True and reply["kept"] is False
        assert reply["dropped"] == {"writer": "bob", "value": "B", "stamp": second.stamp}
        assert reply["holds"] == {"writer": "alice", "value": "A", "stamp": first.stamp}
    assert alice.read() == Stamped(first.stamp, "alice", "A")


def test_lww_replicas_in_a_partition_converge_on_the_higher_stamp_and_say_what_they_drop(
    replicas: ServerSet, name: str
) -> None:
    alice, _ = storage(replicas, name, "lww", "alice", ("redis-1",))  # cut off from redis-2
    bob, _ = storage(replicas, name, "lww", "bob", ("redis-2",), clock=Behind(5000))
    a, b = alice.write("A"), bob.write("B")
    assert bob.read() == Stamped(b.stamp, "bob", "B")  # in the partition bob sees his own write
    reader, told = storage(replicas, name, "lww", "carol")  # healed: a read reaches both
    assert reader.read() == Stamped(a.stamp, "alice", "A")
    (repair,) = replies(told, "merge")  # only redis-2 lacked the merge
    assert repair["dropped"]["writer"] == "bob" and repair["holds"]["stamp"] == a.stamp
    assert reader.read() == Stamped(a.stamp, "alice", "A")
    assert len(replies(told, "merge")) == 1  # converged: the second read repairs nothing


def test_the_add_wins_set_keeps_both_writes_of_the_same_schedule(
    replicas: ServerSet, name: str
) -> None:
    alice, _ = storage(replicas, name, "crdt", "alice", ("redis-1",))
    bob, _ = storage(replicas, name, "crdt", "bob", ("redis-2",), clock=Behind(5000))
    assert alice.write("A").accepted and bob.write("B").accepted
    reader, told = storage(replicas, name, "crdt", "carol")
    merged = reader.read()
    assert isinstance(merged, SetState) and merged.elements == ["A", "B"]
    assert sorted(r["added"][0] for r in replies(told, "merge")) == ["A", "B"]
    for node in ("redis-1", "redis-2"):
        fetched = reader.fetch(node)
        assert isinstance(fetched, SetState) and fetched.elements == ["A", "B"]


def test_an_add_concurrent_with_a_remove_wins(replicas: ServerSet, name: str) -> None:
    alice, _ = storage(replicas, name, "crdt", "alice", ("redis-1",))
    bob, _ = storage(replicas, name, "crdt", "bob", ("redis-2",))
    both, _ = storage(replicas, name, "crdt", "carol")
    both.write("X")  # on both replicas
    assert alice.remove("X")  # removes the X it has seen, on redis-1 only
    bob.write("X")  # a concurrent add, on redis-2
    merged = both.read()
    assert isinstance(merged, SetState) and merged.elements == ["X"]


def test_a_write_is_acknowledged_by_the_replica_it_reaches(replicas: ServerSet, name: str) -> None:
    gone = connect("127.0.0.1", 1, timeout_ms=200)  # nothing listens there
    good = replicas["redis-1"]
    clients = [("redis-1", connect(good.host, good.port, password=good.password)), ("x", gone)]
    events: list[tuple[str, dict[str, Any]]] = []
    s = ReplicatedStorage(
        clients, name, kind="lww", writer="alice", on_event=lambda k, d: events.append((k, d))
    )
    result = s.write("A")
    assert result.acked == ("redis-1",) and result.kept
    failed = [d for k, d in events if k == "reply" and not d["ok"]]
    assert [d["from"] for d in failed] == ["x"] and "error" in failed[0]


def test_merge_is_the_highest_stamp_or_the_union() -> None:
    older, newer = Stamped(1, "bob", "B"), Stamped(2, "alice", "A")
    assert merge([older, None, newer]) == newer and merge([None]) is None
    a = SetState(frozenset({("t1", "A")}), frozenset())
    b = SetState(frozenset({("t2", "B")}), frozenset({"t1"}))
    assert merge([a, b]) == SetState(frozenset({("t1", "A"), ("t2", "B")}), frozenset({"t1"}))
    assert merge([a, b]).elements == ["B"]  # type: ignore[union-attr]
