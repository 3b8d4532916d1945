"""The backend catalogue: every fact about a lock service, read from one entry."""

from __future__ import annotations

from lockviz.catalogue import (
    BACKENDS,
    OPTIONS,
    REDIS,
    SENTINEL,
    STORAGE,
    STORAGE_KINDS,
    ZOOKEEPER,
    server_kind,
)
from lockviz.lab import backends, watchers
from lockviz.lab.servers import KINDS


def test_every_backend_has_its_lock_factory_its_watchers_and_its_servers() -> None:
    for name, backend in BACKENDS.items():
        assert callable(backends.lock_factory(name))
        assert name in watchers.FACTORIES
        assert backend.server in KINDS or (name == "none" and backend.server is None)
        assert backend.variants and backend.node_counts


def test_server_names_say_their_kind() -> None:
    assert server_kind("redis-3") is REDIS and server_kind(STORAGE) is REDIS
    assert server_kind("zk-1") is ZOOKEEPER
    for not_a_server in ("alice", "redis", "redis-", "redis-01", "zk-x", "lab"):
        assert server_kind(not_a_server) is None


def test_node_names_and_labels() -> None:
    redlock, zookeeper = BACKENDS["redlock"], BACKENDS["zookeeper"]
    assert redlock.nodes() == [f"redis-{i}" for i in range(1, 6)]
    assert redlock.nodes(3) == ["redis-1", "redis-2", "redis-3"]
    assert zookeeper.nodes() == ["zk-1"]
    assert redlock.describe() == "Redlock (5 nodes)"
    assert (
        zookeeper.describe() == "ZooKeeper" and zookeeper.describe(count=3) == "ZooKeeper (3 nodes)"
    )
    assert BACKENDS["redis"].describe("unsafe_release") == "Redis, plain DEL release"


def test_only_redlock_and_no_lock_cannot_fence_and_only_redis_clocks_jump() -> None:
    assert [b.name for b in BACKENDS.values() if not b.fencing] == ["redlock", "none"]
    assert "Kleppmann" in BACKENDS["redlock"].no_fencing
    assert [k.prefix for k in KINDS if k.clock_jumps] == ["redis"]


def test_each_backend_only_setting_names_its_backends() -> None:
    assert OPTIONS == {
        "redis_nodes": ["redlock"],
        "node_timeout_ms": ["redlock"],
        "zk_nodes": ["zookeeper"],
        "etcd_nodes": ["etcd"],
        "idle_session_timeout_ms": ["postgres"],
    }


def test_a_replicated_redis_runs_its_sentinels_beside_its_nodes_as_one_group() -> None:
    sentinel = BACKENDS["redis-sentinel"]
    assert sentinel.nodes() == [
        "redis-1", "redis-2", "redis-3", "sentinel-1", "sentinel-2", "sentinel-3"
    ]  # fmt: skip
    assert server_kind("sentinel-2") is SENTINEL and KINDS[SENTINEL] is KINDS[REDIS]
    assert sentinel.grouped() and not BACKENDS["redis"].grouped()
    assert BACKENDS["zookeeper"].grouped(3) and not BACKENDS["zookeeper"].grouped(1)
    assert BACKENDS["etcd"].nodes(3) == ["etcd-1", "etcd-2", "etcd-3"]
    assert "never have seen the writer's key" in sentinel.why_no_sequencer()


def test_every_lock_the_storage_can_ask_has_its_check_and_the_others_say_why() -> None:
    for name, backend in BACKENDS.items():
        for v in backend.variants:
            why = backend.why_no_sequencer(v.name)
            if why:
                assert why.endswith(".") and len(why) > 30
            else:
                factory, lock = backends.check_factory(name)
                assert callable(factory) and lock and backend.sequencer
    assert not BACKENDS["none"].lock and BACKENDS["none"].nodes() == []
    assert "pg_locks" in BACKENDS["postgres"].why_no_sequencer("pooled")
    assert BACKENDS["postgres"].why_no_sequencer("session") == ""
    assert list(STORAGE_KINDS) == [
        "plain", "fenced", "fenced_reads", "sequencer", "cas", "lww", "crdt",
    ]  # fmt: skip
    assert "pg_locks" in BACKENDS["postgres"].why_no_sequencer("pooled_xact")


def test_a_storage_kind_says_its_servers_and_what_it_needs() -> None:
    """A replicated kind runs on two Redis servers and takes no lock; a token-checking kind
    needs a lock that fences; each kind beyond plain's one-liner says what it costs."""
    for kind in STORAGE_KINDS.values():
        assert kind.replicas[0] == "storage"
        assert all(server_kind(name) == REDIS for name in kind.replicas)
        assert bool(kind.lockless) == (len(kind.replicas) > 1)
    assert [k.name for k in STORAGE_KINDS.values() if k.tokens] == ["fenced", "fenced_reads"]
    for name in ("fenced_reads", "lww", "crdt"):
        assert STORAGE_KINDS[name].cost.endswith(".")
    assert server_kind("storage-2") == REDIS and server_kind("storage-3") is None


def test_the_elections_are_variants_of_the_services_that_have_an_election() -> None:
    assert [(b.name, v.name) for b in BACKENDS.values() for v in b.variants if v.election] == [
        ("zookeeper", "election"),
        ("etcd", "election"),
    ]


def test_one_table_names_what_each_lock_counts_down_and_what_the_server_ends() -> None:
    """Issue 32: a lease only where there is one (the header, the lessons list and the narrator
    read these words, never a string check of their own)."""
    words = {(b.name, v.name): (v.ttl, v.ends) for b in BACKENDS.values() for v in b.variants}
    assert words == {
        ("redis", "safe"): ("lease", "lease"),
        ("redis", "unsafe_release"): ("lease", "lease"),
        ("redis", "no_ttl"): ("", ""),
        ("redis-sentinel", "async"): ("lease", "lease"),
        ("redis-sentinel", "wait"): ("lease", "lease"),
        ("redis-sentinel", "min_replicas"): ("lease", "lease"),
        ("redlock", "safe"): ("lease", "lease"),
        ("zookeeper", "recipe"): ("session timeout", "session"),
        ("zookeeper", "herd"): ("session timeout", "session"),
        ("zookeeper", "election"): ("session timeout", "session"),
        ("zookeeper", "session"): ("session timeout", "session"),
        ("postgres", "session"): ("", "session"),
        ("postgres", "xact"): ("idle-in-transaction timeout", "session"),
        ("postgres", "pooled"): ("", "session"),
        ("postgres", "pooled_xact"): ("idle-in-transaction timeout", "session"),
        ("etcd", "lease"): ("lease", "lease"),
        ("etcd", "election"): ("lease", "lease"),
        ("none", "direct"): ("", ""),
    }


def test_what_a_restarted_server_kept_is_said_by_its_kind() -> None:
    assert REDIS.kept("none").label == "no persistence"  # save "", appendonly no: nothing kept
    assert "fsync always" in REDIS.kept("fsync").text
    assert ZOOKEEPER.kept("none").label == "log replayed"  # forceSync=no still keeps the log
    assert server_kind("pg-1").kept(None).label == "WAL replayed"
    assert server_kind("sentinel-2").kept(None).label == "config kept"  # a row like the others
