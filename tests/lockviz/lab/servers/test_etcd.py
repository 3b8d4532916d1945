"""The lab's etcd: the server it starts, wipes and kills, and the watcher of its lock keys."""

from __future__ import annotations

import base64
import time
from typing import Any

import pytest

from algorithms.clock import SystemClock
from lockviz.lab import procs
from lockviz.lab.backends import etcd as backend
from lockviz.lab.config import ClientConfig
from lockviz.lab.errors import LabError
from lockviz.lab.labs import LocalLab
from lockviz.lab.servers import etcd as etcd_kind
from lockviz.lab.servers import missing
from lockviz.lab.servers.etcd import EtcdServer, post, prefix_end
from lockviz.lab.watchers.etcd import LockWatcher
from tests.lockviz.lab.recorded import told_once

pytestmark = pytest.mark.live


def test_the_machine_has_etcd() -> None:
    assert missing("etcd") == []
    assert etcd_kind.requirements()[0].debian_package == "etcd-server"


def test_the_server_starts_and_leaves_nothing_alive_after_stop_or_kill() -> None:
    with LocalLab().servers(["etcd-1"]) as servers:
        server = servers["etcd-1"]
        first = server.pids()
        assert server.healthy() and server.start_ms is not None and server.offset_ms == 0
        server.kill()
        assert not any(procs.alive(pid) for pid in first) and not server.healthy()
        server.launch()
        server.wait_ready()
        second = server.pids()
        assert second != first and all(procs.alive(pid) for pid in second)
    assert not any(procs.alive(pid) for pid in first + second)


def put(server: Any, key: str, value: str = "x") -> int:
    body = {"key": b64(key), "value": b64(value)}
    return int(post(server.host, server.port, "/v3/kv/put", body)["header"]["revision"])


def count(server: Any, prefix: str) -> int:
    body = {"key": b64(prefix), "range_end": b64(prefix_end(prefix)), "count_only": True}
    return int(post(server.host, server.port, "/v3/kv/range", body).get("count", 0))


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def test_revisions_survive_a_kill_and_wipe_clears_only_the_labs_keys() -> None:
    with LocalLab().servers(["etcd-1"]) as servers:
        server = servers["etcd-1"]
        before = put(server, "lockviz/lock/left-over")
        put(server, "elsewhere/key")
        server.kill()
        server.launch()
        server.wait_ready()
        assert put(server, "lockviz/owners/x") > before  # tokens keep increasing
        with pytest.raises(LabError, match="not marked as lockviz's"):
            etcd_kind.wipe(server.host, server.port)
        assert count(server, "lockviz/") == 2
        put(server, "lockviz-marker")
        etcd_kind.wipe(server.host, server.port)
        assert count(server, "lockviz/") == 0 and count(server, "elsewhere/") == 1


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, dict[str, Any]]] = []

    def __call__(self, actor: str, kind: str, details: dict[str, Any], t_ns: int) -> None:
        self.events.append((actor, kind, details))

    def wait_for(self, n: int, timeout_s: float) -> list[tuple[str, str, dict[str, Any]]]:
        deadline = time.monotonic() + timeout_s
        while len(self.events) < n and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.events


def lock(server: EtcdServer, owner: str, ttl_ms: int = 2000) -> Any:
    config = ClientConfig(
        name=owner, backend="etcd", variant="lease", ttl_ms=ttl_ms, fencing=True,
        clients=(owner,), nodes=("etcd-1",), servers={"etcd-1": server.address},
    )  # fmt: skip
    return backend.make_lock(config, SystemClock(), lambda kind, details: None)


def test_the_watcher_tells_expiry_from_release_and_outlives_a_restart() -> None:
    with LocalLab().servers(["etcd-1"]) as servers:
        server = servers["etcd-1"]
        record = Recorder()
        watcher = LockWatcher(server.host, server.port, "etcd-1", record)
        watcher.start()
        try:
            alice, bob, carol = lock(server, "alice"), lock(server, "bob"), lock(server, "carol")
            assert alice.acquire() is not None
            assert bob.acquire(timeout_ms=300) is None  # a waiter leaves: it never held the lock
            assert alice.release() is True
            assert carol.acquire() is not None  # and never renews: etcd expires her lease
            events = record.wait_for(2, timeout_s=8)
            assert [(kind, d["holder"]) for _, kind, d in events] == [
                ("deleted", "alice"),
                ("expired", "carol"),
            ]
            assert {actor for actor, _, _ in events} == {"etcd-1"}
            server.kill()
            time.sleep(0.3)  # the watcher loses its stream and retries
            server.launch()
            server.wait_ready()
            dave = lock(server, "dave")
            assert dave.acquire() is not None and dave.release() is True
            events = record.wait_for(3, timeout_s=5)
            assert (events[2][1], events[2][2]["holder"]) == ("deleted", "dave")
        finally:
            started = time.monotonic()
            watcher.stop()
            assert time.monotonic() - started < 1.0  # stop cuts the blocked read short
        assert not watcher._thread.is_alive()


def test_the_gc_pause_story_happens_in_order_of_cause() -> None:
    result = told_once("etcd-gc-pause-fenced")  # played once, shared with test_builtins
    assert result.error is None and result.mismatches == [], result.verdict
    events = result.events
    first: dict[tuple[str, str], dict[str, Any]] = {}
    for e in events:
        first.setdefault((e["actor"], e["kind"]), e)
    alice, bob = first[("alice", "granted")], first[("bob", "granted")]
    renewing, paused = first[("alice", "renewal_started")], first[("alice", "paused")]
    expired, resumed = first[("etcd-1", "expired")], first[("alice", "resumed")]
    lost = first[("alice", "lost")]
    rejected = next(e for e in events if e["kind"] == "reply" and e.get("accepted") is False)
    # Her keepalive thread renewed the lease (if the pause came late enough for it to) until
    # the pause froze it with her: no renewal reached etcd after that, so the lease ran out
    # there, its TTL after the last renewal, while she was frozen; bob's key came later, with a
    # higher revision. Thawed, her first keepalive was refused and her client said the lock was
    # lost; her code wrote anyway, with her old revision, and the storage refused it. Her
    # release found nothing left to release.
    assert alice["ttl_ms"] == 2000 and alice["seq"] < renewing["seq"] < paused["seq"]
    renewals = [  # the lease's grant, then each keepalive etcd answered
        e
        for e in events
        if e["actor"] == "alice"
        and e["kind"] == "reply"
        and e.get("op") in ("lease_grant", "keepalive")
    ]
    before = [e for e in renewals if e["seq"] < paused["seq"]]
    assert before and all(e["ok"] for e in before)
    assert expired["holder"] == "alice" and expired["key"] == alice["value"]
    request = next(e for e in events if e["kind"] == "request" and e["call"] == before[-1]["call"]
                   and e["actor"] == "alice")  # fmt: skip
    assert expired["t_ms"] >= request["t_ms"] + alice["ttl_ms"]  # not before her last renewal's TTL
    # The lab's watcher hears of the expiry on a watch of its own, in a busier process than
    # bob's client: ordered against its cause (the pause, the TTL), not against bob's grant.
    assert paused["seq"] < expired["seq"] < resumed["seq"]
    assert paused["seq"] < bob["seq"] < resumed["seq"]
    assert bob["t_ms"] >= request["t_ms"] + alice["ttl_ms"]  # his key once her lease ran out
    refused = next(e for e in renewals if e["seq"] > paused["seq"])
    assert refused["ok"] is False and refused["seq"] > resumed["seq"]  # none while she was frozen
    assert refused["seq"] < lost["seq"] < rejected["seq"] and "expired" in lost["reason"]
    assert bob["token"] > alice["token"] and rejected["token"] == alice["token"]
    assert first[("etcd-1", "deleted")]["holder"] == "bob"  # bob's own release, not an expiry
    assert ("alice", "released") not in first and ("alice", "releasing") not in first
    nothing = [e for e in events if e["actor"] == "alice" and e["kind"] == "note"]
    assert nothing and nothing[-1]["seq"] > rejected["seq"]
    assert "no lock to release" in nothing[-1]["text"]
