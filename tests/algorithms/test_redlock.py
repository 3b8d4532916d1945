"""Redlock against real redis-servers started by the lab (three, five or seven of them)."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest

from algorithms.errors import NotHeld
from algorithms.redlock import Redlock, connect_node, drift_ms
from lockviz.lab.labs import LocalLab, ServerSet
from lockviz.lab.procs import wait_until

pytestmark = pytest.mark.live

KEY = "test:redlock"
NODE_TIMEOUT_MS = 200  # generous: a loaded machine must not turn a live node into a "no"


def names(n: int) -> list[str]:
    return [f"redis-{i}" for i in range(1, n + 1)]


@pytest.fixture
def nodes() -> Iterator[ServerSet]:
    with LocalLab().servers(names(5)) as started:
        yield started


def make_lock(
    servers: ServerSet,
    owner: str,
    ttl_ms: int = 5000,
    n: int = 5,
    timeout_ms: int = NODE_TIMEOUT_MS,
) -> Redlock:
    events: list[tuple[str, dict[str, Any]]] = []
    connections = {
        name: connect_node(
            servers[name].host,
            servers[name].port,
            timeout_ms=timeout_ms,
            password=servers[name].password,
        )
        for name in names(n)
    }
    lock = Redlock(
        connections, KEY, owner=owner, ttl_ms=ttl_ms, node_timeout_ms=timeout_ms,
        on_event=lambda kind, details: events.append((kind, details)),
    )  # fmt: skip
    lock.events = events  # type: ignore[attr-defined]
    return lock


def values(servers: ServerSet, n: int = 5) -> dict[str, str | None]:
    """What each live node stores under the lock key."""
    found = {}
    for name in names(n):
        if servers[name].proc.poll() is None:
            found[name] = servers[name].client().get(KEY)
    return found


def of(lock: Redlock, kind: str) -> list[dict[str, Any]]:
    return [details for k, details in lock.events if k == kind]  # type: ignore[attr-defined]


def test_a_majority_grants_the_lock_without_a_token(nodes: ServerSet) -> None:
    alice = make_lock(nodes, "alice")
    grant = alice.acquire()
    assert grant is not None and grant.token is None
    assert values(nodes) == dict.fromkeys(names(5), grant.value)  # set on every node
    requests, replies = of(alice, "request"), of(alice, "reply")
    assert sorted(r["to"] for r in requests) == names(5)
    assert {r["call"] for r in replies} == {r["call"] for r in requests}
    assert all(r["ok"] for r in replies)
    granted = of(alice, "granted")[0]
    assert granted["token"] is None and sorted(granted["nodes"]) == names(5)
    alice.close()


def test_refused_when_another_holds_a_majority_and_its_own_keys_are_undone(
    nodes: ServerSet,
) -> None:
    for name in names(3):
        nodes[name].client().set(KEY, "carol:x", px=10_000)
    bob = make_lock(nodes, "bob")
    assert bob.acquire(timeout_ms=0) is None
    failed = of(bob, "acquire_failed")
    assert failed == [failed[0]] and failed[0]["reason"] == (
        "only 2 of 5 nodes said yes; a majority needs 3"
    )
    # redis-4 and redis-5 said yes; bob must not leave his keys there, and carol keeps hers.
    assert values(nodes) == {**dict.fromkeys(names(3), "carol:x"), "redis-4": None, "redis-5": None}
    released_on = [r["to"] for r in of(bob, "request") if r["op"] == "release"]
    assert sorted(released_on) == names(5)
    bob.close()


def test_a_node_that_said_no_in_time_still_loses_our_key_on_release(nodes: ServerSet) -> None:
    # redis-5 is frozen: alice's SET reaches its socket but is answered only after the node
    # thaws, long after alice counted it as "no". Release must delete the key there too.
    frozen = nodes["redis-5"].proc
    alice = make_lock(nodes, "alice", timeout_ms=500)  # one round only: the live four must answer
    frozen.send_signal(signal.SIGSTOP)
    try:
        grant = alice.acquire()
    finally:
        frozen.send_signal(signal.SIGCONT)
    assert grant is not None and sorted(grant.node.split(",")) == names(4)
    late = next(r for r in of(alice, "reply") if r["from"] == "redis-5")
    assert late["ok"] is False and "no reply" in late["error"]
    wait_until(lambda: values(nodes)["redis-5"] == grant.value, 5, "the late SET on redis-5")
    assert alice.release() is True
    assert values(nodes) == dict.fromkeys(names(5))  # gone everywhere, redis-5 included
    alice.close()


def test_two_nodes_down_still_grant_with_three_of_five(nodes: ServerSet) -> None:
    nodes["redis-1"].kill()
    nodes["redis-4"].kill()
    alice = make_lock(nodes, "alice")
    grant = alice.acquire()
    assert grant is not None
    assert sorted(of(alice, "granted")[0]["nodes"]) == ["redis-2", "redis-3", "redis-5"]
    dead = [r for r in of(alice, "reply") if r["from"] in ("redis-1", "redis-4")]
    assert len(dead) == 2 and all(not r["ok"] and "connection" in r["error"] for r in dead)
    assert make_lock(nodes, "bob").acquire(timeout_ms=0) is None  # the three still exclude
    alice.close()


def test_three_nodes_down_grant_nothing(nodes: ServerSet) -> None:
    for name in ("redis-1", "redis-2", "redis-3"):
        nodes[name].kill()
    alice = make_lock(nodes, "alice")
    started = time.monotonic()
    assert alice.acquire(timeout_ms=1000) is None
    assert time.monotonic() - started < 5  # dead nodes fail fast, no hidden retry loop
    assert of(alice, "granted") == []
    attempts = [r for r in of(alice, "request") if r["op"] == "acquire"]
    assert len(attempts) >= 10  # at least two rounds: it retried before giving up
    assert of(alice, "acquire_failed")[0]["reason"] == (
        "only 2 of 5 nodes said yes; a majority needs 3"
    )
    assert values(nodes) == {"redis-4": None, "redis-5": None}  # its 2 yeses were undone
    alice.close()


def test_validity_is_the_ttl_less_elapsed_time_and_drift(nodes: ServerSet) -> None:
    alice = make_lock(nodes, "alice", ttl_ms=2000)
    before = time.monotonic_ns()
    assert alice.acquire() is not None
    elapsed_ms = (time.monotonic_ns() - before) / 1e6
    assert 2000 - drift_ms(2000) - elapsed_ms <= alice.validity_ms < 2000 - drift_ms(2000)
    assert of(alice, "granted")[0]["validity_ms"] == round(alice.validity_ms)
    alice.close()


def test_extend_needs_a_majority(nodes: ServerSet) -> None:
    alice = make_lock(nodes, "alice", ttl_ms=3000)
    assert alice.acquire() is not None
    for name in ("redis-1", "redis-2"):
        nodes[name].client().delete(KEY)  # a minority lost our key: still a majority left
    assert alice.extend(10_000) is True
    assert all(nodes[n].client().pttl(KEY) > 5000 for n in ("redis-3", "redis-4", "redis-5"))
    assert sorted(of(alice, "extended")[-1]["nodes"]) == ["redis-3", "redis-4", "redis-5"]
    nodes["redis-3"].client().set(KEY, "bob:y")
    assert alice.extend() is False  # 2 of 5
    assert alice.grant is None
    assert of(alice, "lost")[0]["reason"] == "extend reached only 2 of 5 nodes; a majority needs 3"
    assert values(nodes) == {**dict.fromkeys(names(5)), "redis-3": "bob:y"}  # ours undone
    with pytest.raises(NotHeld):
        alice.release()
    alice.close()


def test_release_reports_a_lock_that_had_expired(nodes: ServerSet) -> None:
    alice = make_lock(nodes, "alice", ttl_ms=200)
    assert alice.acquire() is not None
    wait_until(lambda: not any(values(nodes).values()), 5, "the keys to expire")
    assert alice.release() is False
    assert of(alice, "released")[0]["reason"] == "only 0 of 5 nodes still had our key"
    alice.close()


@pytest.mark.parametrize("n", [3, 7])
def test_three_and_seven_nodes_need_their_own_majority(n: int) -> None:
    with LocalLab().servers(names(n)) as servers:
        alice, bob = make_lock(servers, "alice", n=n), make_lock(servers, "bob", n=n)
        assert alice.quorum == n // 2 + 1
        assert alice.acquire() is not None
        assert bob.acquire(timeout_ms=0) is None
        assert alice.release() is True
        for name in names(n)[: n // 2]:  # a minority down: still granted
            servers[name].kill()
        assert bob.acquire() is not None and bob.release() is True
        servers[names(n)[n // 2]].kill()  # now a majority is down
        assert alice.acquire(timeout_ms=0) is None
        assert of(alice, "acquire_failed")[-1]["reason"] == (
            f"only {n // 2} of {n} nodes said yes; a majority needs {n // 2 + 1}"
        )
        alice.close()
        bob.close()
