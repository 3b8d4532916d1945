"""The ZooKeeper recipe lock against a real ZooKeeper server started by the lab."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from algorithms.errors import NotHeld
from algorithms.zookeeper_calls import connect
from algorithms.zookeeper_lock import ZooKeeperLock
from lockviz.lab.labs import LocalLab, ServerSet
from tests.conftest import ROOT

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def zk() -> Iterator[ServerSet]:
    with LocalLab().servers(["zk-1"]) as started:
        yield started


@pytest.fixture
def make(zk: ServerSet, request: pytest.FixtureRequest) -> Any:
    """Locks on a path of this test's own; each is closed when the test ends."""
    path = f"/lockviz/{request.node.name.replace('[', '-').rstrip(']')}"

    def make_lock(owner: str, ttl_ms: int = 4000, **kw: Any) -> ZooKeeperLock:
        events: list[tuple[str, dict[str, Any]]] = []
        client = connect(zk["zk-1"].address, session_ms=ttl_ms, timeout_ms=5000)
        lock = ZooKeeperLock(
            client, path, owner=owner, ttl_ms=ttl_ms,
            on_event=lambda kind, details: events.append((kind, details)), **kw,
        )  # fmt: skip
        lock.events = events  # type: ignore[attr-defined]
        request.addfinalizer(lock.close)
        return lock

    make_lock.path = path  # type: ignore[attr-defined]
    return make_lock


def children(zk: ServerSet, path: str) -> list[str]:
    client = connect(zk["zk-1"].address, session_ms=2000, timeout_ms=5000)
    try:
        return sorted(client.get_children(path))
    finally:
        client.stop()
        client.close()


def kinds(lock: ZooKeeperLock) -> list[str]:
    return [kind for kind, _ in lock.events]  # type: ignore[attr-defined]


def test_one_holder_at_a_time_and_czxid_tokens_increase(make: Any, zk: ServerSet) -> None:
    alice, bob = make("alice"), make("bob")
    first = alice.acquire()
    assert first is not None and first.token is not None
    assert bob.acquire(timeout_ms=0) is None  # alice's node is ahead of his
    assert children(zk, make.path) == [first.value.rsplit("/", 1)[1]]  # bob removed his node
    assert alice.release() is True
    second = bob.acquire()
    assert second is not None and second.token is not None and second.token > first.token


def test_concurrent_clients_never_hold_it_together(make: Any) -> None:
    locks = [make(name) for name in ("alice", "bob", "carol")]
    inside: list[str] = []
    overlaps: list[list[str]] = []
    tokens: list[int] = []
    guard = threading.Lock()

    def work(lock: ZooKeeperLock) -> None:
        for _ in range(5):
            grant = lock.acquire(timeout_ms=10_000)
            assert grant is not None and grant.token is not None
            with guard:
                inside.append(lock.owner)
                tokens.append(grant.token)
                if len(inside) > 1:
                    overlaps.append(list(inside))
            time.sleep(0.01)
            with guard:
                inside.remove(lock.owner)
            assert lock.release() is True

    threads = [threading.Thread(target=work, args=(lock,)) for lock in locks]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert overlaps == []
    assert len(tokens) == 15 and tokens == sorted(tokens)  # grant order is czxid order


def wait_for(predicate: Any, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.01)


@pytest.mark.parametrize(("herd", "wakeups"), [(False, 3), (True, 9)])
def test_the_recipe_wakes_one_waiter_per_release_the_herd_wakes_all(
    make: Any, herd: bool, wakeups: int
) -> None:
    holder = make("alice", herd=herd)
    assert holder.acquire() is not None
    waiters = [make(name, herd=herd) for name in ("bob", "carol", "dave")]
    granted: dict[str, threading.Event] = {w.owner: threading.Event() for w in waiters}

    def wait_turn(lock: ZooKeeperLock) -> None:
        if lock.acquire(timeout_ms=15_000) is not None:
            granted[lock.owner].set()

    threads = []
    last_call = "children" if herd else "watch"  # a waiter's last call before it sleeps

    def settled(woken: int) -> None:
        """Wait until ``woken`` wake-ups have come in all and every waiter not yet granted is
        asleep on its watch again (its last event: the reply to that call)."""

        def quiet() -> bool:
            total = sum(kind == "woken" for w in waiters for kind, _ in _events(w))
            waiting = [w for w in waiters if not granted[w.owner].is_set() and _events(w)]
            asleep = all(_calls(w)[-1] == ("reply", last_call) for w in waiting)
            return total == woken and asleep

        wait_for(quiet)

    # A new node in the queue wakes the herd (every waiter before it), never the recipe's.
    for n, lock in enumerate(waiters):  # one at a time: each asleep before the next queues
        threads.append(threading.Thread(target=wait_turn, args=(lock,)))
        threads[-1].start()
        wait_for(lambda lock=lock: ("reply", last_call) in _calls(lock))
        settled(n * (n + 1) // 2 if herd else 0)
    # A release wakes every waiter left in the herd, one in the recipe.
    woken = 3 if herd else 0
    for n, (previous, lock) in enumerate(zip([holder, *waiters], waiters, strict=False)):
        assert previous.release() is True
        assert granted[lock.owner].wait(10)
        woken += len(waiters) - n if herd else 1
        settled(woken)
    assert waiters[-1].release() is True
    for t in threads:
        t.join(5)
    woken = [(w.owner, d["by"]) for w in waiters for kind, d in w.events if kind == "woken"]
    assert len(woken) == wakeups, woken
    if not herd:  # each waiter watched exactly the node ahead of its own
        assert woken == [(w.owner, "predecessor deleted") for w in waiters]
        queue = [_created(holder), *(_created(w) for w in waiters)]
        for ahead, lock in zip(queue, waiters, strict=False):
            watched = [
                d["path"] for kind, d in lock.events if kind == "request" and d["op"] == "watch"
            ]
            assert watched == [ahead]


def _created(lock: ZooKeeperLock) -> str:
    """The path of the lock's node, from its create's reply."""
    events = lock.events  # type: ignore[attr-defined]
    return next(d["path"] for kind, d in events if kind == "reply" and d["op"] == "create")


def _events(lock: ZooKeeperLock) -> list[tuple[str, dict[str, Any]]]:
    return list(lock.events)  # type: ignore[attr-defined]


def _calls(lock: ZooKeeperLock) -> list[tuple[str, str]]:
    return [(kind, d.get("op", "")) for kind, d in _events(lock)]


def test_acquire_timeout_deletes_its_own_node(make: Any, zk: ServerSet) -> None:
    alice, bob = make("alice"), make("bob")
    grant = alice.acquire()
    assert grant is not None
    started = time.monotonic()
    assert bob.acquire(timeout_ms=400) is None
    assert 0.4 <= time.monotonic() - started < 5
    assert children(zk, make.path) == [grant.value.rsplit("/", 1)[1]]
    assert kinds(bob)[-3:] == ["request", "reply", "acquire_failed"]
    assert bob.events[-3][1]["op"] == "delete"  # type: ignore[attr-defined]


def test_extend_and_release_notice_a_node_that_is_gone(make: Any, zk: ServerSet) -> None:
    alice = make("alice")
    grant = alice.acquire()
    assert grant is not None
    assert alice.extend() is True
    admin = connect(zk["zk-1"].address, session_ms=2000, timeout_ms=5000)
    admin.delete(grant.value)  # as the server does when it expires the session
    admin.stop()
    admin.close()
    assert alice.extend() is False
    assert alice.grant is None and kinds(alice)[-1] == "lost"
    with pytest.raises(NotHeld):
        alice.release()


# A client in a process of its own, so SIGSTOP freezes its kazoo threads and heartbeats too.
CLIENT = """
import json, sys, time
from algorithms.zookeeper_calls import connect
from algorithms.zookeeper_lock import ZooKeeperLock
emit = lambda kind, d: print(json.dumps({"kind": kind, "t": time.monotonic(), **d}), flush=True)
client = connect(sys.argv[1], session_ms=600, timeout_ms=5000)
lock = ZooKeeperLock(client, sys.argv[2], owner="alice", ttl_ms=600, on_event=emit)
lock.acquire(timeout_ms=5000)
sys.stdin.readline()
lock.close()
"""


def test_a_paused_client_learns_at_thaw_that_its_session_expired(make: Any, zk: ServerSet) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", CLIENT, zk["zk-1"].address, make.path],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    out: queue.Queue[dict[str, Any]] = queue.Queue()
    assert proc.stdout is not None and proc.stdin is not None
    reader = threading.Thread(target=lambda: [out.put(json.loads(line)) for line in proc.stdout])
    reader.start()
    try:
        events = [out.get(timeout=10)]  # queue.Empty fails the test
        while events[-1]["kind"] in ("request", "reply"):  # create and list (list again if the
            events.append(out.get(timeout=10))  # create had to make the parent first)
        assert events[-1]["kind"] == "granted"
        proc.send_signal(signal.SIGSTOP)
        bob = make("bob")
        grant = bob.acquire(timeout_ms=10_000)  # granted once the server expired alice's session
        assert grant is not None and grant.token is not None
        assert grant.token > events[-1]["token"]
        assert proc.poll() is None  # alice is still frozen: she cannot know yet
        thawed = time.monotonic()
        proc.send_signal(signal.SIGCONT)
        later = []
        while not any(e["kind"] == "session" and e["state"] == "CONNECTED" for e in later):
            later.append(out.get(timeout=10))
        states = [e["state"] for e in later if e["kind"] == "session"]
        assert states == ["SUSPENDED", "LOST", "CONNECTED"]
        lost = [e for e in later if e["kind"] == "lost"]
        assert len(lost) == 1 and lost[0]["t"] >= thawed  # one ``lost``, and only after the thaw
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
            proc.wait()
        reader.join(5)
