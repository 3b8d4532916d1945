"""The lease watchdog (algorithms.renewal) on a real redis-server: what it saves, what it cannot."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from algorithms.redis_client import connect
from algorithms.redis_lock import RedisLock
from algorithms.renewal import Renewer
from lockviz.lab import procs
from lockviz.lab.labs import ServerSet
from lockviz.lab.procs import wait_until
from tests.conftest import ROOT

pytestmark = pytest.mark.live

KEY = "test:renewed"

# A client process: takes the lock, starts the watchdog, prints every event as a JSON line and
# lives until its stdin closes. The test freezes it from outside, as a GC pause would.
HOLDER = """
import json, os, sys, threading, time
from algorithms.redis_client import connect
from algorithms.redis_lock import RedisLock
from algorithms.renewal import Renewer

def emit(kind, details):
    print(json.dumps({"kind": kind, "t_ns": time.monotonic_ns(), **details}), flush=True)

ttl = int(sys.argv[3])
password = os.environ["LOCKVIZ_TEST_PASSWORD"]  # never on a command line
client = connect(sys.argv[1], int(sys.argv[2]), password=password)
lock = RedisLock(client, sys.argv[4], owner="alice", ttl_ms=ttl, on_event=emit)
assert lock.acquire() is not None
Renewer(lock, ttl, threading.Lock(), emit).start()
sys.stdin.read()
"""


def state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def lock_for(servers: ServerSet, owner: str, ttl_ms: int, events: list[Any]) -> RedisLock:
    node = servers["redis-1"]
    return RedisLock(
        connect(node.host, node.port, password=node.password), KEY, owner=owner, ttl_ms=ttl_ms,
        on_event=lambda kind, details: events.append((kind, details)),
    )  # fmt: skip


def test_the_watchdog_keeps_the_lock_past_several_leases(servers: ServerSet) -> None:
    ttl_ms = 900
    events: list[Any] = []
    alice = lock_for(servers, "alice", ttl_ms, events)
    bob = lock_for(servers, "bob", ttl_ms, [])
    grant = alice.acquire()
    assert grant is not None
    renewer = Renewer(alice, ttl_ms, threading.Lock(), lambda k, d: events.append((k, d)))
    renewer.start()
    try:
        time.sleep(4 * ttl_ms / 1000)  # four leases long
        assert servers["redis-1"].client().get(KEY) == grant.value
        assert bob.acquire(timeout_ms=0) is None
    finally:
        renewer.stop()
    extends = [d for kind, d in events if kind == "extended"]
    assert len(extends) >= 4 and all(e["ok"] for e in extends)
    # Without the watchdog the lease runs out on the server and bob gets the lock.
    assert bob.acquire(timeout_ms=5 * ttl_ms) is not None


def test_a_frozen_process_freezes_its_watchdog_and_loses_the_lease(servers: ServerSet) -> None:
    ttl_ms = 1500
    node = servers["redis-1"]
    holder = procs.spawn(
        [sys.executable, "-c", HOLDER, node.host, str(node.port), str(ttl_ms), KEY],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "LOCKVIZ_TEST_PASSWORD": node.password},
    )  # fmt: skip
    lines: queue.Queue[dict[str, Any]] = queue.Queue()
    assert holder.stdout is not None
    out = holder.stdout
    threading.Thread(target=lambda: [lines.put(json.loads(x)) for x in out], daemon=True).start()

    def next_event(kind: str, after_ns: int = 0) -> dict[str, Any]:
        deadline = time.monotonic() + 15
        while True:
            event = lines.get(timeout=max(0.01, deadline - time.monotonic()))
            if event["kind"] == kind and event["t_ns"] > after_ns:
                return event

    try:
        value = next_event("granted")["value"]
        for _ in range(3):  # renewed past one whole lease
            assert next_event("extended")["ok"] is True
        holder.send_signal(signal.SIGSTOP)
        wait_until(
            lambda: state(holder.pid) == "T", 5, "the holder to stop"
        )  # signals take a moment
        assert node.client().get(KEY) == value  # the lease was alive when the pause began
        wait_until(lambda: node.client().get(KEY) is None, 10, "the frozen holder's lease to end")
        bob = lock_for(servers, "bob", ttl_ms, [])
        assert bob.acquire(timeout_ms=0) is not None
        thawed_ns = time.monotonic_ns()
        holder.send_signal(signal.SIGCONT)
        # The watchdog's first extend after the pause (one caught in flight by the SIGSTOP may
        # still report the OK it got before; the one after it cannot) fails, and it says so.
        extend = next_event("extended", after_ns=thawed_ns)
        if extend["ok"]:
            extend = next_event("extended", after_ns=thawed_ns)
        lost = next_event("lost")
        assert extend["ok"] is False
        assert lost["t_ns"] >= extend["t_ns"]
        assert node.client().get(KEY) == bob.grant.value  # type: ignore[union-attr]
    finally:
        holder.send_signal(signal.SIGCONT)
        procs.stop(holder)
