"""ZooKeeper servers in the lab: an ensemble that forms, survives kill -9, and leaves nothing."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.retry import KazooRetry

from algorithms.zookeeper_calls import connect
from algorithms.zookeeper_lock import ZooKeeperLock
from lockviz.lab import procs
from lockviz.lab.errors import LabError
from lockviz.lab.labs import LocalLab, ServerSet
from lockviz.lab.servers.zookeeper import wipe
from lockviz.lab.watchers.zookeeper import NodeWatcher

pytestmark = pytest.mark.live

ENSEMBLE = ["zk-1", "zk-2", "zk-3"]


def hosts(servers: ServerSet, names: list[str]) -> str:
    return ",".join(servers[name].address for name in names)


def wait_for(predicate: Any, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def test_an_ensemble_serves_survives_kill_9_and_stops_without_leftovers() -> None:
    with LocalLab().servers(ENSEMBLE) as servers:
        pids = [pid for name in ENSEMBLE for pid in servers[name].pids()]
        for name in ENSEMBLE:  # each JVM runs with the lab's options (zookeeper.JVM_OPTIONS)
            jvm = servers[name].proc
            assert jvm is not None
            with open(f"/proc/{jvm.pid}/cmdline", "rb") as f:
                options = f.read().decode().split("\0")
            assert {"-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"} <= set(options), options
        # One leader, two followers (a JVM on a busy machine may answer its mode late).
        wait_for(
            lambda: (
                sorted(servers[n].mode() or "" for n in ENSEMBLE)
                == ["follower", "follower", "leader"]
            ),
            15,
        )
        writer = connect(servers["zk-1"].address, session_ms=4000, timeout_ms=5000)
        reader = connect(servers["zk-3"].address, session_ms=4000, timeout_ms=5000)
        writer.create("/lockviz/before", b"x", makepath=True)
        reader.sync("/lockviz/before")
        assert reader.get("/lockviz/before")[0] == b"x"  # replicated to another node
        writer.stop()
        writer.close()
        reader.stop()
        reader.close()

        leader = next(name for name in ENSEMBLE if servers[name].mode() == "leader")
        servers[leader].kill()
        rest = [name for name in ENSEMBLE if name != leader]
        wait_for(
            lambda: sorted(servers[n].mode() or "" for n in rest) == ["follower", "leader"], 15
        )
        # A lock client whose home server is the dead one fails over to the others.
        events: list[tuple[str, dict[str, Any]]] = []
        lock = ZooKeeperLock(
            connect(hosts(servers, [leader, *rest]), session_ms=4000, timeout_ms=5000),
            owner="alice", ttl_ms=4000, node=leader,
            addresses={servers[name].address: name for name in ENSEMBLE},
            on_event=lambda kind, details: events.append((kind, details)),
        )  # fmt: skip
        grant = lock.acquire(timeout_ms=5000)
        assert grant is not None and grant.node in rest
        assert {d["to"] for kind, d in events if kind == "request"} <= set(rest)
        assert grant.token is not None and grant.token >> 32 >= 2  # a new leader, a new epoch
        lock.close()
        check = connect(hosts(servers, rest), session_ms=4000, timeout_ms=5000)
        assert check.get("/lockviz/before")[0] == b"x"  # nothing committed was lost
        check.stop()
        check.close()
    assert pids and not [pid for pid in pids if procs.alive(pid)]  # no java left running


def test_the_watcher_tells_expiry_from_release_and_outlives_a_server_restart() -> None:
    with LocalLab().servers(["zk-1"]) as servers:
        zk = servers["zk-1"]
        seen: list[tuple[str, str, dict[str, Any]]] = []
        watcher = NodeWatcher(
            {"zk-1": (zk.host, zk.port)}, lambda a, k, d, t: seen.append((a, k, d))
        )
        locks: list[ZooKeeperLock] = []

        def lock(owner: str) -> ZooKeeperLock:
            client = connect(zk.address, session_ms=2000, timeout_ms=5000)
            locks.append(ZooKeeperLock(client, owner=owner, ttl_ms=2000))
            return locks[-1]

        watcher.start()
        try:
            alice = lock("alice")
            assert alice.acquire() is not None
            time.sleep(0.3)  # a holder works a while: the watcher sees the node's session
            assert alice.release() is True
            wait_for(lambda: len(seen) == 1, 5)
            assert seen[0][:2] == ("zk-1", "deleted") and seen[0][2]["holder"] == "alice"

            bob = lock("bob")
            assert bob.acquire() is not None
            wait_for(lambda: any(n.startswith("bob.") for n in watcher.known), 5)
            session_id, password = bob.client.client_id
            # Joining bob's session from another client and closing it ends the session on
            # the server, which deletes its ephemeral node: what an expiry does, sooner.
            intruder = _client_on_session(zk.address, session_id, password)
            intruder.stop()  # closing a session deletes its ephemeral nodes, as expiry does
            intruder.close()
            wait_for(lambda: len(seen) == 2, 5)
            assert seen[1][:2] == ("zk-1", "expired") and seen[1][2]["holder"] == "bob"
            assert seen[1][2]["holding"] is True

            zk.kill()  # the watcher loses its server...
            zk.launch()
            zk.wait_ready()
            carol = lock("carol")
            assert carol.acquire(timeout_ms=5000) is not None
            wait_for(lambda: any(n.startswith("carol.") for n in watcher.known), 15)  # ...is back
            assert carol.release() is True
            wait_for(lambda: len(seen) == 3, 10)
            assert seen[2][1] == "deleted" and seen[2][2]["holder"] == "carol"
        finally:
            for each in locks:
                each.close()
            watcher.stop()


def test_the_watcher_is_not_caught_up_until_a_gone_node_is_recorded() -> None:
    """A node's going is told only once the watcher has asked the server whose delete it was:
    until it has recorded it, it is not ``caught_up`` (a run's end waits for it)."""
    with LocalLab().servers(["zk-1"]) as servers:
        zk = servers["zk-1"]
        recording, go_on = threading.Event(), threading.Event()
        seen: list[str] = []

        def record(actor: str, kind: str, details: Any, t_ns: int) -> None:
            recording.set()
            go_on.wait(10)  # the server's answer, slow to come
            seen.append(kind)

        watcher = NodeWatcher({"zk-1": (zk.host, zk.port)}, record)
        client = connect(zk.address, session_ms=2000, timeout_ms=5000)
        alice = ZooKeeperLock(client, owner="alice", ttl_ms=2000)
        watcher.start()
        try:
            assert alice.acquire() is not None
            wait_for(lambda: any(n.startswith("alice.") for n in watcher.known), 5)
            assert watcher.caught_up(time.monotonic_ns())
            assert alice.release() is True
            assert recording.wait(5)
            assert not watcher.caught_up(time.monotonic_ns()) and seen == []
            go_on.set()
            wait_for(lambda: seen == ["deleted"] and watcher.caught_up(time.monotonic_ns()), 5)
        finally:
            go_on.set()
            alice.close()
            watcher.stop()


def _client_on_session(address: str, session_id: int, password: bytes) -> Any:
    client = KazooClient(
        hosts=address,
        client_id=(session_id, password),
        timeout=2.0,
        connection_retry=KazooRetry(max_tries=3, delay=0.05, max_delay=0.2),
    )
    client.start(timeout=5)
    return client


def test_wipe_clears_what_earlier_runs_left_on_a_shared_server() -> None:
    with LocalLab().servers(["zk-1"]) as servers:
        zk = servers["zk-1"]
        client = connect(zk.address, session_ms=4000, timeout_ms=5000)
        client.create("/lockviz/lock/left-over", b"x", makepath=True)
        client.create("/elsewhere", b"y")
        with pytest.raises(LabError, match="not marked as lockviz's"):
            wipe(zk.host, zk.port)  # a server not set aside for lockviz is left as it is
        assert client.exists("/lockviz/lock/left-over") is not None
        client.create("/lockviz-marker")
        wipe(zk.host, zk.port)
        assert client.exists("/lockviz") is None
        assert client.exists("/elsewhere") is not None  # only the lab's own tree
        wipe(zk.host, zk.port)  # nothing to wipe is fine too
        client.stop()
        client.close()
