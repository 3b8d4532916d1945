"""The course plan: its modules in order, each lesson a :class:`Planned` row (its scenario's
slug, its title, the concepts it teaches and uses). Plain data, read by
:mod:`lockviz.teaching.lessons` (which builds the lessons from it) and held to its order by
``tests/lockviz/teaching/test_concepts.py`` (the rules: :mod:`lockviz.teaching.concepts`).

To add a lesson: its scenario in ``lockviz/scenarios/builtin/<slug>.json`` (with its take-away),
and a row here, in its module at the place a learner should meet it, declaring what it teaches
(a concept no earlier lesson taught: a new :class:`Concept` member if need be) and what it uses
beyond what its scenario implies. docs/scenarios.md, "Adding a lesson", says more.
"""

from __future__ import annotations

from dataclasses import dataclass

from lockviz.teaching.concepts import Concept, Planned


@dataclass(frozen=True)
class Plan:
    """A module as the course plans it: its lessons in order, and the lock service whose other
    built-ins join it at its end (None: only those named)."""

    slug: str
    title: str
    about: str
    backend: str | None
    lessons: tuple[Planned, ...]


C = Concept
MODULES: tuple[Plan, ...] = (
    Plan("redis", "Single Redis", "One Redis node: SET NX with a lease, how a lease misleads a "
         "paused holder, and the token that saves the data.", "redis", (
        Planned("contention", "Taking turns", teaches=(C.MUTUAL_EXCLUSION, C.LEASE, C.TOKEN)),
        Planned("naive-no-ttl-crash", "Why SETNX needs a TTL", teaches=(C.LIVENESS,),
                uses=(C.LEASE,)),
        Planned("gc-pause-unfenced", "A lease expires under a GC pause",
                teaches=(C.PAUSE, C.STALE_WRITE), uses=(C.TOKEN,)),
        Planned("gc-pause-fenced", "Fencing tokens save the data", teaches=(C.FENCED_STORAGE,),
                uses=(C.TOKEN,)),
        Planned("unsafe-release", "Release only your own lock", teaches=(C.OWNER_CHECK,)),
        Planned("watchdog-pause", "The watchdog freezes too", teaches=(C.WATCHDOG,),
                uses=(C.TOKEN,)),
        Planned("redis-restart", "A restart forgets the lock", teaches=(C.PERSISTENCE,),
                uses=(C.TOKEN, C.FENCED_STORAGE)),
    )),
    # Issue 35: one node, then replicas and failover, then independent nodes, then consensus.
    Plan("failover", "Replicas and failover", "A primary, its replicas and Sentinel: a lock "
         "survives a failover only if its key did; WAIT and min-replicas-to-write narrow the "
         "window without closing it.", "redis-sentinel", (
        Planned("redis-failover", "Failover hands the lock out twice",
                teaches=(C.REPLICATION, C.NETWORK, C.SILENT_FAILURE),
                uses=(C.TOKEN, C.PERSISTENCE)),
        Planned("redis-failover-wait", "WAIT 1 keeps the lock", teaches=(C.WAIT_REPLICAS,),
                uses=(C.TOKEN,)),
        Planned("redis-failover-wait-loses", "WAIT 1, and still two holders",
                uses=(C.TOKEN,)),
        Planned("redis-split-primary", "A split primary: two primaries grant",
                teaches=(C.SPLIT_PRIMARY,), uses=(C.TOKEN,)),
    )),
    Plan("redlock", "Redlock", "Five independent Redis nodes and a majority: what the quorum "
         "buys, and what it cannot.", "redlock", (
        Planned("redlock-happy", "Redlock: a majority of five", teaches=(C.QUORUM, C.VALIDITY),
                uses=(C.TOKEN, C.OWNER_CHECK, C.FENCED_STORAGE)),
        Planned("redlock-contention", "Redlock: taking turns on five nodes",
                uses=(C.OWNER_CHECK,)),
        Planned("redlock-two-down", "Redlock's quorum: two of five nodes down"),
        Planned("redlock-three-down", "Redlock's quorum: three of five nodes down",
                uses=(C.LIVENESS,)),
        Planned("redlock-slow-network", "", uses=(C.NETWORK,)),
        Planned("redlock-restart", "Redlock: a restarted node forgets the lock",
                uses=(C.PERSISTENCE, C.STALE_WRITE)),
        Planned("redlock-restart-fsync", "Redlock: the same restart, with fsync",
                teaches=(C.FSYNC,)),
        Planned("redlock-clock-jump", "", teaches=(C.CLOCKS,), uses=(C.STALE_WRITE,)),
        Planned("redlock-slow-clock", "", uses=(C.STALE_WRITE,)),
    )),
    Plan("zookeeper", "ZooKeeper", "Sessions, sequential nodes and watches: a queue the server "
         "keeps.", "zookeeper", (
        Planned("zk-happy", "", teaches=(C.ZK_SESSION,), uses=(C.TOKEN,)),
        Planned("zk-contention", "", teaches=(C.WATCH,)),
        Planned("zk-herd", "The herd effect", teaches=(C.HERD,), uses=(C.WATCH,)),
        Planned("zk-no-herd", "No herd: watch only the node before yours",
                uses=(C.WATCH, C.HERD)),
        Planned("zk-partition", "", uses=(C.SILENT_FAILURE, C.TOKEN)),
        Planned("zk-ensemble-partition", "", teaches=(C.ENSEMBLE,), uses=(C.QUORUM, C.TOKEN)),
        Planned("zk-session-survives", "A session survives its server",
                teaches=(C.SESSION_MOVES,), uses=(C.TOKEN,)),
        Planned("zk-leader-crash", "The leader crashes", uses=(C.SESSION_MOVES, C.TOKEN)),
    )),
    Plan("postgres", "PostgreSQL", "Advisory locks held by a database session, with no lease: "
         "a holder that crashes frees its lock, but one that is frozen or silently cut off keeps "
         "it, and everyone else waits (safe, not live) until a server timeout ends the session "
         "and turns the lock into a lease.", "postgres", (
        Planned("pg-happy", "", teaches=(C.SESSION_LOCK,), uses=(C.TOKEN,)),
        Planned("pg-contention", ""),
        Planned("pg-crash-frees", "", uses=(C.LEASE,)),
        Planned("pg-restart-frees", "", uses=(C.TOKEN,)),
        Planned("pg-pause-blocks", "", uses=(C.LEASE, C.LIVENESS, C.TOKEN)),
        Planned("pg-ghost-holder", "", uses=(C.LIVENESS,)),
        Planned("pg-ghost-holder-timeout", "", teaches=(C.IDLE_TIMEOUT,), uses=(C.LEASE,)),
        Planned("pg-ghost-holder-reset", "", uses=(C.SILENT_FAILURE,)),
        Planned("pg-pooled-leak", "", teaches=(C.POOLING,), uses=(C.TOKEN,)),
        Planned("pg-pooled-xact", "PostgreSQL: the pooling fix, a transaction lock",
                teaches=(C.TXN_LOCK,)),
    )),
    Plan("etcd", "etcd", "A lease, a queue of keys and a cluster-wide revision.", "etcd", (
        Planned("etcd-happy", "etcd: a lease, a lock, a revision", teaches=(C.KEEPALIVE,),
                uses=(C.TOKEN,)),
        Planned("etcd-contention", "etcd: waiters queue", uses=(C.TOKEN,)),
        Planned("etcd-renew-pause", "etcd: the keepalive freezes too", uses=(C.WATCHDOG,)),
        Planned("etcd-leader-crash", "etcd: the leader crashes", uses=(C.TOKEN, C.REPLICATION)),
    )),
    Plan("storage", "What the storage checks", "Updates lost with no lock at all, and "
         "compare-and-set; then one story, the fencing hole, told with each kind of storage; "
         "then a retry made safe.", None, (
        Planned("storage-lost-update", "Storage: no lock, a lost update",
                teaches=(C.LOST_UPDATE,)),
        Planned("storage-lost-update-cas", "Storage: no lock, compare-and-set",
                teaches=(C.CAS,)),
        Planned("storage-hole-fenced", "Storage: the fencing hole", teaches=(C.FENCING_HOLE,),
                uses=(C.TOKEN,)),
        Planned("storage-hole-plain", "Storage: the hole, on a plain storage",
                uses=(C.FENCING_HOLE,)),
        Planned("storage-hole-fenced-reads", "Storage: a read that carries the token closes "
                "the hole", teaches=(C.FENCED_READ,), uses=(C.FENCING_HOLE, C.TOKEN)),
        Planned("storage-hole-sequencer", "Storage: a sequencer check closes the hole",
                teaches=(C.SEQUENCER,), uses=(C.FENCING_HOLE,)),
        Planned("storage-hole-cas", "Storage: compare-and-set checks versions, not locks",
                uses=(C.FENCING_HOLE,)),
        Planned("storage-retry-duplicate", "Storage: a retried write, applied twice",
                teaches=(C.RETRY,)),
        Planned("storage-retry-idempotent", "Storage: an idempotency key applies it once",
                teaches=(C.IDEMPOTENCY,), uses=(C.RETRY,)),
    )),
    Plan("fencing", "One pause, every lock service", "The GC pause again, on ZooKeeper, "
         "PostgreSQL and etcd: every lease can expire under a paused holder, and a token "
         "checked by the storage saves the data. Then Redlock, which has no token: both sides "
         "of the debate, each shown live.", None, (
        Planned("zk-gc-pause-fenced", "ZooKeeper: a session expires, fencing still saves the "
                "data", uses=(C.TOKEN,)),
        Planned("pg-gc-pause-fenced", "", uses=(C.TOKEN,)),
        Planned("etcd-gc-pause-fenced", "etcd: a lease expires, the revision fences",
                uses=(C.TOKEN,)),
        Planned("redlock-gc-pause", "Why Redlock cannot fence", uses=(C.TOKEN,)),
        Planned("redlock-gc-pause-sequencer", "Redlock: the random value, checked by the storage",
                uses=(C.TOKEN,)),
    )),
    Plan("beyond", "Beyond one lock", "Leader election and its epochs; last-write-wins and a "
         "CRDT instead of a lock; the mistakes people write with a lock in hand.", None, (
        Planned("leader-etcd-pause-plain", "Leader election: the deposed leader, on a plain "
                "storage", teaches=(C.ELECTION,), uses=(C.WATCHDOG,)),
        Planned("leader-etcd-pause-fenced", "Leader election: a deposed leader, refused by its "
                "epoch", uses=(C.TOKEN,)),
        Planned("leader-zk-partition-fenced", "Leader election on ZooKeeper: a partitioned "
                "leader", uses=(C.WATCH, C.TOKEN)),
        Planned("lww-clock-behind", "Last-write-wins: a slow clock loses a newer write",
                teaches=(C.LWW,)),
        Planned("crdt-clock-behind", "A CRDT: no update lost", teaches=(C.CRDT,),
                uses=(C.LWW,)),
        Planned("pitfall-write-after-failed-acquire", "Pitfall: writing after a failed "
                "acquire"),
        Planned("pitfall-slow-write", "Pitfall: a critical section that outlives its lease"),
        Planned("pitfall-read-outside-lock", "Pitfall: the read outside the lock",
                uses=(C.CAS, C.TOKEN)),
    )),
)  # fmt: skip
