"""Which lock services lockviz runs, and what each supports: the one place that says so.

Plain data at the bottom layer: the scenario schema, the lab, the pages, lessons, free play and
comparisons read these entries and keep no list of their own. Adding a backend means one
:class:`Backend` entry here, its lock factory (``lockviz/lab/backends/``), its watcher
(``lockviz/lab/watchers/``) and, for a new kind of server, a :class:`ServerKind` and its module
in ``lockviz/lab/servers/``.

Server names say their kind: ``redis-3``, ``zk-1``, ``pg-1``, ``etcd-1``, and ``storage`` (the
storage node every run writes to, a Redis server).
"""

from __future__ import annotations

from dataclasses import dataclass, field

STORAGE = "storage"


@dataclass(frozen=True)
class ServerKind:
    """One kind of server the lab can start; its servers are named ``<prefix>-<n>``."""

    prefix: str
    label: str
    clock_jumps: bool = False  # its wall clock can be moved (libfaketime under Redis)
    peers: bool = False  # an ensemble's servers talk to each other, and can be cut off


REDIS = ServerKind("redis", "Redis", clock_jumps=True)
ZOOKEEPER = ServerKind("zk", "ZooKeeper", peers=True)
POSTGRES = ServerKind("pg", "PostgreSQL")
ETCD = ServerKind("etcd", "etcd")
SERVER_KINDS: dict[str, ServerKind] = {k.prefix: k for k in (REDIS, ZOOKEEPER, POSTGRES, ETCD)}


def server_kind(name: str) -> ServerKind | None:
    """The kind of the server called ``name`` (``storage`` is Redis); ``None`` if no server."""
    if name == STORAGE:
        return REDIS
    prefix, _, number = name.rpartition("-")
    return SERVER_KINDS.get(prefix) if number.isdigit() and not number.startswith("0") else None


@dataclass(frozen=True)
class Variant:
    name: str
    label: str  # as a learner reads it beside the backend: "plain DEL release"


@dataclass(frozen=True)
class Backend:
    """A lock service: how it is named, what it runs on, which scenario settings it takes."""

    name: str  # the scenario's "backend"
    label: str  # short, as a learner names it: "Redlock"
    title: str  # a heading: "Redlock over independent Redis nodes"
    summary: str  # a choice in a form: "Redlock, five Redis nodes"
    server: ServerKind
    variants: tuple[Variant, ...]  # the first is the default
    node_counts: tuple[int, ...] = (1,)  # how many lock servers it may run on; first: default
    node_count_field: str | None = None  # the scenario field that chooses among node_counts
    options: frozenset[str] = field(default_factory=frozenset)  # settings only it takes
    no_fencing: str = ""  # why it cannot give fencing tokens ("" when it can)

    @property
    def fencing(self) -> bool:
        return not self.no_fencing

    @property
    def default_variant(self) -> str:
        return self.variants[0].name

    def variant(self, name: str | None) -> Variant | None:
        return next((v for v in self.variants if v.name == (name or self.default_variant)), None)

    def nodes(self, count: int | None = None) -> list[str]:
        """The lock servers' names, ``redis-1`` .. ``redis-5`` (the storage comes on top)."""
        return [f"{self.server.prefix}-{i}" for i in range(1, (count or self.node_counts[0]) + 1)]

    def describe(self, variant: str | None = None, count: int | None = None) -> str:
        """The lock as a learner names it: "Redlock (5 nodes)", "Redis, plain DEL release"."""
        text = self.label
        if len(self.node_counts) > 1 and (count or self.node_counts[0]) > 1:
            text += f" ({count or self.node_counts[0]} nodes)"
        chosen = self.variant(variant)
        if chosen is not None and chosen.name != self.default_variant:
            text += f", {chosen.label}"
        return text


BACKENDS: dict[str, Backend] = {
    b.name: b
    for b in (
        Backend(
            "redis",
            "Redis",
            "Single Redis node",
            "Redis, one node (SET NX PX)",
            REDIS,
            (
                Variant("safe", "SET NX PX, compare-and-delete"),
                Variant("unsafe_release", "plain DEL release"),
                Variant("no_ttl", "no TTL"),
            ),
        ),
        Backend(
            "redlock",
            "Redlock",
            "Redlock over independent Redis nodes",
            "Redlock, five Redis nodes",
            REDIS,
            (Variant("safe", "majority of independent nodes"),),
            node_counts=(5, 3, 7),
            node_count_field="redis_nodes",
            options=frozenset({"redis_nodes", "node_timeout_ms"}),
            no_fencing="Redlock cannot fence: its lock values are random, so a resource cannot "
            "tell an older holder from a newer one, and there is no counter that a majority of "
            "independent nodes could agree on (Kleppmann, 'How to do distributed locking').",
        ),
        Backend(
            "zookeeper",
            "ZooKeeper",
            "ZooKeeper",
            "ZooKeeper (ephemeral sequential nodes)",
            ZOOKEEPER,
            (
                Variant("recipe", "watch the predecessor"),
                Variant("herd", "every waiter watches the lock"),
            ),
            node_counts=(1, 3),
            node_count_field="zk_nodes",
            options=frozenset({"zk_nodes"}),
        ),
        Backend(
            "postgres",
            "PostgreSQL",
            "PostgreSQL advisory locks",
            "PostgreSQL advisory locks",
            POSTGRES,
            (
                Variant("session", "session lock"),
                Variant("xact", "transaction lock"),
                Variant("pooled", "through PgBouncer"),
            ),
            options=frozenset({"idle_session_timeout_ms"}),
        ),
        Backend(
            "etcd",
            "etcd",
            "etcd leases",
            "etcd (lease + revision)",
            ETCD,
            (Variant("lease", "lease + lock"),),
        ),
    )
}
# Each backend-only setting, with the backends that take it.
OPTIONS: dict[str, list[str]] = {
    option: [b.name for b in BACKENDS.values() if option in b.options]
    for b in BACKENDS.values()
    for option in b.options
}
