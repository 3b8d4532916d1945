"""Redis's lock on the primary Sentinel names, against a real replicated set started by the lab:
a primary, two replicas, three Sentinels, each client on its own proxied links."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from algorithms.redis_client import connect
from algorithms.resp import RespConnection
from algorithms.sentinel_lock import SentinelLock, usable
from lockviz.catalogue import BACKENDS, SENTINEL, server_kind
from lockviz.lab.labs import LocalLab, ServerSet
from lockviz.lab.links import Links
from lockviz.lab.procs import wait_until

NODES = BACKENDS["redis-sentinel"].nodes()

pytestmark = pytest.mark.live


def named(servers: ServerSet) -> str | None:
    """The node sentinel-1 names the primary (by the address the set knows it by)."""
    sentinel = servers["sentinel-1"].client()  # type: ignore[attr-defined]
    host, port = sentinel.sentinel_get_master_addr_by_name("lockviz")
    return servers.announced().get(f"{host}:{port}")


def test_a_primary_is_usable_only_when_no_sentinel_flags_it_down() -> None:
    state = {"is_master": True, "is_sdown": False, "is_odown": False, "num-other-sentinels": 2}
    assert usable(state) and not usable(state, min_other_sentinels=3)
    assert not usable({**state, "is_sdown": True}) and not usable({**state, "is_master": False})


@pytest.fixture
def group() -> Iterator[tuple[ServerSet, Links]]:
    with LocalLab().servers(NODES) as servers:
        links = Links(["alice", "bob"], servers.addresses())
        links.start()
        try:
            yield servers, links
        finally:
            links.stop()


def make_lock(
    servers: ServerSet, links: Links, owner: str, **kw: Any
) -> tuple[SentinelLock, list[tuple[str, dict[str, Any]]]]:
    """``owner``'s lock over its own links, as a client process makes it."""
    events: list[tuple[str, dict[str, Any]]] = []
    routes = links.addresses_for(owner)

    def at(node: str) -> tuple[str, int]:
        host, _, port = routes[node].rpartition(":")
        return host, int(port)

    sentinels = {
        n: connect(*at(n), password=servers[n].password)
        for n in NODES
        if server_kind(n) is SENTINEL
    }
    nodes = {
        n: RespConnection(*at(n), timeout_ms=1000, node=n, password=servers[n].password)
        for n in NODES
        if server_kind(n) is not SENTINEL
    }
    lock = SentinelLock(
        sentinels, nodes, "test:lock", owner=owner, ttl_ms=10_000, service="lockviz",
        announced=servers.announced(), on_event=lambda k, d: events.append((k, d)), **kw,
    )  # fmt: skip
    lock.prepare()
    return lock, events


def test_the_client_asks_sentinel_for_the_primary_and_locks_there(
    group: tuple[ServerSet, Links],
) -> None:
    servers, links = group
    alice, told = make_lock(servers, links, "alice")
    bob, _ = make_lock(servers, links, "bob")
    grant = alice.acquire()
    assert grant is not None and grant.node == "redis-1"
    asked = [d for k, d in told if k == "reply" and d["op"] == "discover"]
    assert asked[0]["from"] == "sentinel-1" and asked[0]["primary"] == "redis-1"
    assert bob.acquire(timeout_ms=0) is None  # SET NX refused on the primary
    assert alice.release() is True
    assert (bob_grant := bob.acquire()) is not None and bob_grant.token > grant.token


def test_wait_1_undoes_a_grant_no_replica_acknowledged(group: tuple[ServerSet, Links]) -> None:
    servers, links = group
    for replica in ("redis-2", "redis-3"):
        servers["redis-1"].isolate([replica], "blackhole")  # replication cut both ways
    alice, told = make_lock(servers, links, "alice", wait_replicas=1, wait_timeout_ms=200)
    assert alice.acquire(timeout_ms=300) is None
    waits = [d for k, d in told if k == "reply" and d["op"] == "wait"]
    assert waits and all(w["acked"] == 0 and not w["ok"] for w in waits)
    undone = [d for k, d in told if k == "reply" and d["op"] == "release"]
    assert len(undone) == len(waits) and all(u["ok"] for u in undone)  # each key deleted again
    assert servers["redis-1"].client().get("test:lock") is None  # type: ignore[attr-defined]


def test_after_a_failover_the_client_asks_again_and_finds_the_new_primary(
    group: tuple[ServerSet, Links],
) -> None:
    servers, links = group
    alice, told = make_lock(servers, links, "alice")
    assert (first := alice.acquire()) is not None and alice.release()
    servers["redis-1"].kill()
    wait_until(lambda: servers.roles().get("redis-2") == "primary", 20, "redis-2 promoted")
    wait_until(lambda: named(servers) == "redis-2", 20, "sentinel-1 names redis-2")
    told.clear()
    grant = alice.acquire(timeout_ms=5000)
    assert grant is not None and grant.node == "redis-2"
    failed = [d for k, d in told if k == "reply" and d["from"] == "redis-1"]
    assert failed and "error" in failed[0]  # it talked to the dead primary first, as redis-py
    discovered = [d for k, d in told if k == "reply" and d["op"] == "discover" and d["ok"]]
    assert discovered[-1]["primary"] == "redis-2"
    assert grant.token > first.token  # the counter was replicated before the kill
