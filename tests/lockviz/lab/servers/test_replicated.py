"""Groups of servers the lab starts whole: a Redis primary with its replicas and Sentinels, and
an etcd cluster; each behind a mesh of fronts, each made to lead as a story names it, each
leaving nothing alive when stopped."""

from __future__ import annotations

import pytest

from lockviz.catalogue import BACKENDS
from lockviz.lab import procs, registry
from lockviz.lab.labs import LocalLab
from lockviz.lab.servers.replicated import ReplicaSetNode, SentinelServer

pytestmark = pytest.mark.live


def test_a_replicated_set_starts_with_its_roles_and_stops_whole() -> None:
    names = [*BACKENDS["redis-sentinel"].nodes(), "storage"]
    with LocalLab().servers(names) as servers:
        roles = {"redis-1": "primary", "redis-2": "replica", "redis-3": "replica"}
        assert servers.roles() == roles | {f"sentinel-{i}": "sentinel" for i in (1, 2, 3)}
        nodes = [servers[n] for n in names if n.startswith("redis-")]
        assert all(isinstance(s, ReplicaSetNode) for s in nodes)
        assert isinstance(servers["sentinel-1"], SentinelServer)
        announced = servers.announced()  # each known to the others by its front, not its port
        assert sorted(announced.values()) == sorted(BACKENDS["redis-sentinel"].nodes())
        assert servers["redis-1"].address not in announced
        assert servers.peers("redis-1") == [
            "redis-2",
            "redis-3",
            "sentinel-1",
            "sentinel-2",
            "sentinel-3",
        ]
        assert "storage" not in servers.peers("sentinel-2")  # the storage is nobody's peer
        pids = [pid for s in servers.servers.values() for pid in s.pids()]
        assert len(pids) == len(names) + 1  # and the set's proxy, counted once
        servers["sentinel-2"].check_identity()
        recorded = next(e for e in registry.entries() if e["workdir"] == servers.workdir)
        assert sorted(recorded["pids"].values()) == sorted(pids)  # a killed app's sweep finds them
    assert not [pid for pid in pids if procs.alive(pid)]
    assert not any(e["workdir"] == servers.workdir for e in registry.entries())


def test_a_replica_cut_from_its_primary_stops_receiving_and_heals() -> None:
    names = BACKENDS["redis-sentinel"].nodes()
    with LocalLab().servers(names) as servers:
        primary, replica = servers["redis-1"].client(), servers["redis-2"].client()  # type: ignore[attr-defined]
        servers["redis-1"].isolate(["redis-2"], "blackhole")
        primary.set("k", "1")
        assert primary.execute_command("WAIT", 2, 300) == 1  # redis-3 only
        assert replica.get("k") is None
        servers["redis-1"].isolate(["redis-2"], "pass")  # the held bytes go on
        assert primary.execute_command("WAIT", 2, 3000) == 2 and replica.get("k") == "1"


def test_an_etcd_cluster_is_led_by_etcd_3_and_stops_whole() -> None:
    names = BACKENDS["etcd"].nodes(3)
    with LocalLab().servers(names) as servers:
        assert servers.roles() == {"etcd-1": "follower", "etcd-2": "follower", "etcd-3": "leader"}
        pids = [pid for s in servers.servers.values() for pid in s.pids()]
        assert len(pids) == 4  # three members and their proxy
        recorded = next(e for e in registry.entries() if e["workdir"] == servers.workdir)
        assert sorted(recorded["pids"].values()) == sorted(pids)
        servers["etcd-3"].isolate(["etcd-1", "etcd-2"], "blackhole")

        def new_leader() -> bool:
            return any(servers[n].role() == "leader" for n in ("etcd-1", "etcd-2"))

        procs.wait_until(new_leader, 20, "a leader on the majority's side")
    assert not [pid for pid in pids if procs.alive(pid)]
