"""Warm spares (lockviz.lab.spares) on real servers: each used once, fresh, and nothing left
behind when the pool or its process stops. Faults on spares: test_spares_faults.py.

Past ~300 lines on purpose: every kind of spare set (a Redis set with its Sentinels and an etcd
cluster included) shares the pool's probes and its leftover checks."""

from __future__ import annotations

import base64
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from bench.browser import Browser
from lockviz.catalogue import BACKENDS
from lockviz.jsontypes import JsonObject
from lockviz.lab import capacity, procs, registry, spares
from lockviz.lab.errors import LabError
from lockviz.lab.labs import LocalLab, ServerSet
from lockviz.lab.procs import wait_until
from lockviz.lab.servers.etcd import post
from lockviz.lab.servers.postgres import PostgresServer
from lockviz.lab.servers.redis import RedisServer
from lockviz.lab.servers.zookeeper import ZooKeeperServer, four_letter
from lockviz.lab.sparekeys import SpareKey, first_keys, key_for
from lockviz.lab.spares import SparePool, setting
from tests.conftest import AppServer

pytestmark = pytest.mark.live

SINGLE = ["redis-1", "storage"]
REDLOCK = ["redis-1", "redis-2", "redis-3", "redis-4", "redis-5", "storage"]
ENSEMBLE = ["zk-1", "zk-2", "zk-3"]
START_S = 120.0  # a JVM ensemble on a loaded machine


def pool_of(*groups: list[str]) -> SparePool:
    return SparePool(per_kind=1, most=1, warm=[key_for(g) for g in groups], reserve_mb=0).start()


def take_ready(pool: SparePool, names: list[str]) -> ServerSet:
    assert pool.wait_ready(key_for(names), timeout_s=START_S), f"no spare of {names}"
    found = pool.take(names)
    assert found is not None
    return found


def pids_of(servers: ServerSet) -> set[int]:
    return {pid for server in servers.servers.values() for pid in server.pids()}


def test_a_spare_is_handed_to_one_run_only() -> None:
    pool = pool_of(SINGLE)
    handed: list[ServerSet] = []
    try:
        for _ in range(3):
            handed.append(take_ready(pool, SINGLE))
    finally:
        pool.stop()
    dirs = [s.workdir for s in handed]
    assert len(set(dirs)) == 3, dirs
    every = [pids_of(s) for s in handed]
    assert all(len(p) == 2 for p in every)
    assert not (every[0] & every[1]) and not (every[1] & every[2]) and not (every[0] & every[2])
    assert pool.taken == 3
    for servers in handed:  # the run that took it stops it, and its dir goes
        servers.close()
        assert not any(procs.alive(pid) for pid in pids_of(servers))
        assert servers.workdir is not None and not os.path.exists(servers.workdir)
    assert pool.take(SINGLE) is None  # a stopped pool hands out nothing


# -- fresh state: what a previous run did on its spare is nowhere in the next one -----------


def redis_dirty(servers: ServerSet) -> None:
    for server in servers.servers.values():
        assert isinstance(server, RedisServer)
        client = server.client()
        for _ in range(5):
            client.incr("lock:fence")
        client.set("lock", "alice")


def redis_state(servers: ServerSet) -> object:
    found = []
    for name, server in sorted(servers.servers.items()):
        assert isinstance(server, RedisServer)
        client = server.client()
        found.append((name, client.dbsize(), client.incr("lock:fence")))  # the first token
    return found


def zk_client(servers: ServerSet) -> KazooClient:
    hosts = ",".join(s.address for s in servers.servers.values())
    client = KazooClient(hosts=hosts, timeout=10.0)
    client.start(timeout=20)
    return client


def zk_dirty(servers: ServerSet) -> None:
    client = zk_client(servers)
    try:
        for i in range(5):
            client.create(f"/lockviz/lock/n{i}", makepath=True)
    finally:
        client.stop()
        client.close()


def zk_state(servers: ServerSet) -> object:
    client = zk_client(servers)
    try:
        path = client.create("/lockviz/lock/n", makepath=True, sequence=True)
        stat = client.exists(path)
        assert stat is not None
        # The token: its counter is a fresh server's (an ensemble whose first election went to
        # another server than zk-3 elects again, so its epoch may be 2, not 1).
        return path, stat.czxid & 0xFFFFFFFF < 64
    finally:
        client.stop()
        client.close()


def pg_dirty(servers: ServerSet) -> None:
    server = servers["pg-1"]
    assert isinstance(server, PostgresServer)
    with server.connect() as conn:
        for _ in range(5):
            conn.execute("SELECT nextval('lockviz_fence')")


def pg_state(servers: ServerSet) -> object:
    server = servers["pg-1"]
    assert isinstance(server, PostgresServer)
    with server.connect() as conn:
        row = conn.execute("SELECT nextval('lockviz_fence')").fetchone()  # the first token
    return row[0] if row else None


def etcd_put(servers: ServerSet, key: str) -> int:
    server = servers["etcd-1"]
    body: JsonObject = {"key": base64.b64encode(key.encode()).decode(), "value": ""}
    answer = post(server.host, server.port, "/v3/kv/put", body)
    header = answer.get("header")
    assert isinstance(header, dict)
    return int(str(header["revision"]))


def etcd_dirty(servers: ServerSet) -> None:
    for i in range(5):
        etcd_put(servers, f"lockviz/lock/{i}")


def etcd_state(servers: ServerSet) -> object:
    return etcd_put(servers, "lockviz/lock/a")  # the revision: the first token


REPLICATED = [*BACKENDS["redis-sentinel"].nodes(), "storage"]
CLUSTER = BACKENDS["etcd"].nodes(3)


def primary_dirty(servers: ServerSet) -> None:
    for name in ("redis-1", "storage"):  # the primary takes writes; its replicas copy them
        client = servers[name].client()  # type: ignore[attr-defined]
        for _ in range(5):
            client.incr("lockviz:lock:fence")
        client.set("lockviz:lock", "alice")


def primary_state(servers: ServerSet) -> object:
    found = []
    for name in ("redis-1", "storage"):
        client = servers[name].client()  # type: ignore[attr-defined]
        found.append((name, client.dbsize(), client.incr("lock:fence")))
    return found, servers.roles()


Probe = Callable[[ServerSet], object]
KINDS: dict[str, tuple[list[str], Probe, Probe]] = {
    "replicated": (REPLICATED, primary_dirty, primary_state),
    "cluster": (CLUSTER, etcd_dirty, etcd_state),
    "redis": (SINGLE, redis_dirty, redis_state),
    "redlock": (REDLOCK, redis_dirty, redis_state),
    "zookeeper": (["zk-1"], zk_dirty, zk_state),
    "ensemble": (ENSEMBLE, zk_dirty, zk_state),
    "postgres": (["pg-1"], pg_dirty, pg_state),
    "etcd": (["etcd-1"], etcd_dirty, etcd_state),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_run_on_a_spare_starts_from_a_fresh_servers_state(kind: str) -> None:
    names, dirty, state = KINDS[kind]
    pool = pool_of(names)
    try:
        first = take_ready(pool, names)  # one run's spare: it writes, takes tokens, ends
        try:
            dirty(first)
        finally:
            first.close()
        second = take_ready(pool, names)  # the next run's: started behind the first
        try:
            assert second.workdir != first.workdir
            on_spare = state(second)
        finally:
            second.close()
    finally:
        pool.stop()
    with LocalLab().servers(names) as fresh:  # what a server started for the run says
        on_fresh = state(fresh)
    assert on_spare == on_fresh


# -- nothing left behind -------------------------------------------------------------------


def spare_entries(*owners: int) -> list[registry.Entry]:
    return [
        e
        for e in registry.entries()
        if e["owner_pid"] in owners and os.path.basename(e["workdir"]).startswith("lockviz-spare-")
    ]


def test_stopping_the_pool_stops_every_spare_and_removes_its_dir() -> None:
    pool = pool_of(SINGLE, ["zk-1"], ["etcd-1"])
    for names in (SINGLE, ["zk-1"], ["etcd-1"]):
        assert pool.wait_ready(key_for(names), timeout_s=START_S)
    pids = pool.pids()
    dirs = [e["workdir"] for e in spare_entries(os.getpid()) if set(e["pids"].values()) & {*pids}]
    assert len(pids) == 4 and len(dirs) == 3  # (another test's pool may have spares too)
    pool.stop()
    assert [pid for pid in pids if procs.alive(pid)] == []
    assert [d for d in dirs if os.path.exists(d)] == []
    assert pool.pids() == []


def test_ctrl_c_of_an_app_with_spares_leaves_no_spare_behind(tmp_path: Path) -> None:
    app = AppServer(tmp_path, env={"LOCKVIZ_SPARES": "1"})
    try:
        run_id, why = Browser(app.url).start("gc-pause-fenced")  # the app's lab, and its pool
        assert run_id is not None, why

        def labs() -> list[int]:  # the app, and its lab host (a child: lockviz.labhost)
            return [app.proc.pid, *app.descendants()]

        def warm() -> bool:  # the set it keeps from the start (and its run took: restocked)
            return len([e for e in spare_entries(*labs()) if e["pids"]]) >= 1

        wait_until(warm, START_S, "the app's spares")
        spares = [pid for e in spare_entries(*labs()) for pid in e["pids"].values()]
        children = list(app.descendants())  # after: a spare may start between the two reads
        assert spares and set(spares) <= set(children)
        app.proc.send_signal(signal.SIGINT)
        app.proc.wait(timeout=60)
    finally:
        app.stop()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(procs.alive(pid) for pid in children):
        time.sleep(0.05)
    assert [pid for pid in children if procs.alive(pid)] == []
    registry.sweep()  # whatever the app had no time to remove, the next start-up does
    assert spare_entries(app.proc.pid, *children) == []


def test_a_bad_spares_setting_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCKVIZ_SPARES", "lots")
    with pytest.raises(LabError, match="LOCKVIZ_SPARES='lots'"):
        setting("LOCKVIZ_SPARES", 1)
    monkeypatch.setenv("LOCKVIZ_SPARES", "99")
    with pytest.raises(LabError, match="LOCKVIZ_SPARES=99: give 0 to 16"):
        setting("LOCKVIZ_SPARES", 1)


def test_a_set_that_runs_dry_gets_more_spares_up_to_the_most() -> None:
    pool = SparePool(per_kind=1, most=3, warm=[])  # not started: no spare is ever ready
    key: SpareKey = key_for(SINGLE)
    assert pool.target(key) == 0  # never asked for, not a built-in's: none kept
    assert pool.take(SINGLE) is None
    assert pool.target(key) == 2 and pool.missed == 1  # asked for: kept; ran dry: one more
    for _ in range(5):
        assert pool.take(SINGLE) is None
    assert pool.target(key) == 3  # the most
    assert pool.target(key, now=time.monotonic() + 120) == 1  # the rush is over: the base
    assert pool.target(key, now=time.monotonic() + 400) == 0  # and long forgotten: none


# -- demand, priority, release (issue 34) ------------------------------------------------------


def test_from_the_start_only_free_plays_set_is_kept_warm() -> None:
    """An idle app held 4 JVMs, 10 redis-servers, a PostgreSQL cluster, PgBouncer and etcd
    ahead (462 MB PSS), all started in its first 28 s, as the first learner waited for CPU."""
    pool = SparePool(per_kind=1, most=4, warm=None)
    assert first_keys() == [key_for(SINGLE)]
    assert pool.target(key_for(SINGLE)) == 0  # the pool's thread sets its warm sets
    pool._warm = first_keys()
    assert pool.target(key_for(SINGLE)) == 1
    assert pool.target(key_for(ENSEMBLE)) == 0  # until a run asks for it


def test_no_spare_starts_while_a_run_waits_for_the_lab() -> None:
    machine = capacity.machine()
    machine.join("a learner's run")  # waiting for its turn
    pool = pool_of(SINGLE)
    try:
        time.sleep(2.0)
        assert pool.ready(key_for(SINGLE)) == 0 and pool.pids() == []
        machine.forget("a learner's run")
        assert pool.wait_ready(key_for(SINGLE), timeout_s=START_S)
    finally:
        machine.forget("a learner's run")
        pool.stop()


@pytest.mark.skipif(not procs.may_restore(), reason="this process may not raise a priority back")
def test_a_spare_boots_at_a_yielding_runs_priority_and_plays_at_the_apps() -> None:
    pool = pool_of(SINGLE)
    try:
        assert pool.wait_ready(key_for(SINGLE), timeout_s=START_S)
        waiting = pool.pids()
        assert waiting and {procs.niceness(pid) for pid in waiting} == {procs.LOW_NICENESS}
        taken = pool.take(SINGLE)
        assert taken is not None
        mine = os.getpriority(os.PRIO_PROCESS, 0)
        assert {procs.niceness(pid) for pid in pids_of(taken)} == {mine}
        taken.close()
    finally:
        pool.stop()


def test_a_set_nobody_asked_for_lately_is_released(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spares, "DEMAND_WINDOW_S", 3.0)
    monkeypatch.setattr(spares, "BUSY_WINDOW_S", 3.0)
    pool = SparePool(per_kind=1, most=1, warm=[], reserve_mb=0).start()
    try:
        assert pool.take(SINGLE) is None  # asked for: one is kept from now on
        assert pool.wait_ready(key_for(SINGLE), timeout_s=START_S)
        kept = pool.pids()
        assert kept and all(procs.alive(pid) for pid in kept)
        wait_until(lambda: pool.released == 1, 30, "the spare nobody asked for released")
        assert pool.ready(key_for(SINGLE)) == 0
        wait_until(lambda: not any(procs.alive(pid) for pid in kept), 10, "its servers stopped")
    finally:
        pool.stop()


# -- warmed before it is handed out (issue 34: the first event drawn fast) ------------------


def zk_says(server: object) -> dict[str, str]:
    """What a ZooKeeper server says of itself (``srvr``), by field."""
    assert isinstance(server, ZooKeeperServer)
    said = four_letter(server.host, server.port, "srvr", timeout_s=2.0)
    return dict(line.split(": ", 1) for line in said.splitlines() if ": " in line)


@pytest.mark.parametrize("names", [["zk-1"], ENSEMBLE], ids=["standalone", "ensemble"])
def test_a_zookeeper_spare_has_served_a_session_before_it_is_handed_out(names: list[str]) -> None:
    """A run on a never-used JVM waited for its first sessions to load the server's request
    path (370 ms against 232 ms at the median to the run's start, load ~23): a spare is warmed
    first, and keeps nothing of it but the lock's path, which every run's watcher makes."""
    pool = pool_of(names)
    try:
        taken = take_ready(pool, names)
        try:
            for server in taken.servers.values():
                said = zk_says(server)
                assert int(said["Zxid"], 16) & 0xFFFFFFFF > 0, said  # sessions, transactions
                assert int(said["Node count"]) == 7, said  # 5 of its own + /lockviz/lock
            client = zk_client(taken)
            try:
                assert client.get_children("/lockviz") == ["lock"]
                assert client.get_children("/lockviz/lock") == []
            finally:
                client.stop()
                client.close()
        finally:
            taken.close()
    finally:
        pool.stop()


def test_a_spare_whose_warm_up_fails_is_still_handed_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """Cold, it starts a run as a spare did before there was a warm-up; stopped instead (a
    loaded machine's just-elected ensemble lost a warm-up's connection once), a class's next
    runs booted their own ensemble, 5-7 s each, while the set waited out its pause."""

    def refuse(self: RedisServer) -> None:
        raise LabError(f"{self.name} did not serve its warm-up session")

    monkeypatch.setattr(RedisServer, "warm_up", refuse)
    pool = pool_of(SINGLE)
    try:
        taken = take_ready(pool, SINGLE)
        assert all(procs.alive(pid) for pid in pids_of(taken))
        taken.close()
        assert key_for(SINGLE) not in pool._failed
    finally:
        pool.stop()
