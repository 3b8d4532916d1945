"""The lock services (the scenario's ``backend``): each one's names, variants and node counts,
the settings only it takes, whether it can fence or be asked about a writer's lock (and why
not), and what its lease is called and what its server ends."""

from __future__ import annotations

from dataclasses import dataclass, field

from lockviz.catalogue.servers import ETCD, POSTGRES, REDIS, SENTINEL, ZOOKEEPER, ServerKind


@dataclass(frozen=True)
class Variant:
    name: str
    label: str  # as a learner reads it beside the backend: "plain DEL release"
    no_sequencer: str = ""  # why the storage cannot check this variant's lock ("" when it can)
    # The words for the scenario's ``ttl_ms`` on this lock: what the server counts down while
    # the holder is silent ("lease", "session timeout"...); "" when ttl_ms plays no part.
    ttl: str = "lease"
    # What the server ends when it takes the lock from a holder: "lease", "session"; "" if it
    # never does by itself (no TTL).
    ends: str = "lease"
    election: bool = False  # a leader election: acquire campaigns, release resigns, the token
    # is the leader's epoch, and a client may ask who leads (the "leader" verb)


IDLE_IN_TRANSACTION = "idle-in-transaction timeout"  # a PostgreSQL transaction lock's ttl_ms


def session(
    name: str,
    label: str,
    ttl: str = "session timeout",
    no_sequencer: str = "",
    election: bool = False,
) -> Variant:
    """A lock the server ends with its holder's session (ZooKeeper's, PostgreSQL's): what
    ``ttl_ms`` is called is the session timeout's name, unless said otherwise."""
    return Variant(name, label, no_sequencer, ttl=ttl, ends="session", election=election)


@dataclass(frozen=True)
class Backend:
    """A lock service: how it is named, what it runs on, which scenario settings it takes."""

    name: str  # the scenario's "backend"
    label: str  # short, as a learner names it: "Redlock"
    title: str  # a heading: "Redlock over independent Redis nodes"
    summary: str  # a choice in a form: "Redlock, five Redis nodes"
    server: ServerKind | None  # None: no lock service (the backend "none")
    variants: tuple[Variant, ...]  # the first is the default
    node_counts: tuple[int, ...] = (1,)  # how many lock servers it may run on; first: default
    node_count_field: str | None = None  # the scenario field that chooses among node_counts
    # Servers of another kind beside the lock servers, and how many (Redis's Sentinels).
    beside: tuple[ServerKind, int] | None = None
    # From how many lock servers they form one group whose servers talk to each other and can
    # be cut off from each other (0: never): an ensemble, a cluster, a primary and its replicas.
    group_from: int = 0
    options: frozenset[str] = field(default_factory=frozenset)  # settings only it takes
    no_fencing: str = ""  # why it cannot give fencing tokens ("" when it can)
    no_sequencer: str = ""  # why the storage cannot ask it about a writer's lock ("" when it can)
    sequencer: str = ""  # what the storage asks it at each write, when it can ask
    # What keeps a grant alive with no end fixed in advance ("" when a grant is a lease of its
    # ttl, renewed only by an extend): its countdown starts only once that stops
    # (lockviz.lab.story).
    kept_alive_by: str = ""

    @property
    def fencing(self) -> bool:
        return not self.no_fencing

    @property
    def lock(self) -> bool:
        """Whether there is a lock service at all (the backend ``none`` has none)."""
        return self.server is not None

    def why_no_sequencer(self, variant: str | None = None) -> str:
        """Why a sequencer check cannot be made with this lock ('' when it can)."""
        chosen = self.variant(variant)
        return self.no_sequencer or (chosen.no_sequencer if chosen is not None else "")

    @property
    def default_variant(self) -> str:
        return self.variants[0].name

    def variant(self, name: str | None) -> Variant | None:
        return next((v for v in self.variants if v.name == (name or self.default_variant)), None)

    def nodes(self, count: int | None = None) -> list[str]:
        """The lock servers' names, ``redis-1`` .. ``redis-5``, and the servers beside them
        (``sentinel-1`` ..); the storage comes on top."""
        if self.server is None:
            return []
        found = [f"{self.server.prefix}-{i}" for i in range(1, (count or self.node_counts[0]) + 1)]
        if self.beside is not None:
            kind, many = self.beside
            found += [f"{kind.prefix}-{i}" for i in range(1, many + 1)]
        return found

    def grouped(self, count: int | None = None) -> bool:
        """Whether its servers (``count`` lock servers) talk to each other: one group."""
        return 0 < self.group_from <= (count or self.node_counts[0])

    def describe(self, variant: str | None = None, count: int | None = None) -> str:
        """The lock as a learner names it: "Redlock (5 nodes)", "Redis, plain DEL release"."""
        text = self.label
        if len(self.node_counts) > 1 and (count or self.node_counts[0]) > 1:
            text += f" ({count or self.node_counts[0]} nodes)"
        chosen = self.variant(variant)
        if chosen is not None and chosen.name != self.default_variant:
            text += f", {chosen.label}"
        return text


POOLED_CHECK = (
    "Through PgBouncer in transaction mode clients share server sessions, and pg_locks names the "
    "pooled session, not the client: a check would answer yes for every client that passes "
    "through the holder's session, so it proves nothing about the writer."
)

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
                Variant("no_ttl", "no TTL", ttl="", ends=""),
            ),
            sequencer="GET on the lock key: does it still hold the writer's random value?",
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
            sequencer="GET on every node: does a majority still hold the writer's random value?",
            no_fencing="Redlock cannot fence: its lock values are random, so a resource cannot "
            "tell an older holder from a newer one, and there is no counter that a majority of "
            "independent nodes could agree on (Kleppmann, 'How to do distributed locking').",
        ),
        Backend(
            "redis-sentinel",
            "Redis + Sentinel",
            "Redis with replicas and Sentinel",
            "Redis primary, two replicas, three Sentinels (failover)",
            REDIS,
            (
                Variant("async", "asynchronous replication"),
                Variant("wait", "WAIT 1 after each grant"),
                Variant("min_replicas", "min-replicas-to-write 1"),
            ),
            node_counts=(3,),
            beside=(SENTINEL, 3),
            group_from=1,
            no_sequencer="A check would ask whichever node Sentinel names primary at the time of "
            "the write, and after a failover that node may never have seen the writer's key: its "
            "answer says nothing about the lock the writer was granted.",
        ),
        Backend(
            "zookeeper",
            "ZooKeeper",
            "ZooKeeper",
            "ZooKeeper (ephemeral sequential nodes)",
            ZOOKEEPER,
            (
                session("recipe", "watch the predecessor"),
                session("herd", "every waiter watches the lock"),
                session("session", "keeps the lock while the session lives"),
                session("election", "leader election (kazoo's Election recipe)", election=True),
            ),
            node_counts=(1, 3),
            node_count_field="zk_nodes",
            group_from=3,
            options=frozenset({"zk_nodes"}),
            sequencer="sync, then exists on the writer's lock node: is it there, with its czxid?",
            kept_alive_by="its session, which the client's heartbeats keep alive in the "
            "background: it ends a session timeout after they stop",
        ),
        Backend(
            "postgres",
            "PostgreSQL",
            "PostgreSQL advisory locks",
            "PostgreSQL advisory locks",
            POSTGRES,
            (
                session("session", "session lock", ttl=""),
                session("xact", "transaction lock", ttl=IDLE_IN_TRANSACTION),
                session("pooled", "through PgBouncer", ttl="", no_sequencer=POOLED_CHECK),
                session(
                    "pooled_xact",
                    "transaction lock through PgBouncer",
                    ttl=IDLE_IN_TRANSACTION,
                    no_sequencer=POOLED_CHECK,
                ),
            ),
            options=frozenset({"idle_session_timeout_ms"}),
            sequencer="pg_locks: does the writer's own session (its pid and name) still hold the "
            "advisory lock?",
        ),
        Backend(
            "etcd",
            "etcd",
            "etcd leases",
            "etcd (lease + revision)",
            ETCD,
            (
                Variant("lease", "lease + lock"),
                Variant("election", "leader election (campaign, resign)", election=True),
            ),
            node_counts=(1, 3),
            node_count_field="etcd_nodes",
            group_from=3,
            options=frozenset({"etcd_nodes"}),
            sequencer="the lease's time to live, then a transaction: does the writer's key still "
            "exist with its create revision and its lease?",
        ),
        Backend(
            "none",
            "no lock",
            "No lock service",
            "No lock: clients go straight to the storage",
            None,
            (Variant("direct", "clients go straight to the storage", ttl="", ends=""),),
            no_fencing="There is no lock service, so there are no fencing tokens to check.",
            no_sequencer="There is no lock service for the storage to ask.",
        ),
    )
}
# Each backend-only setting, with the backends that take it.
OPTIONS: dict[str, list[str]] = {
    option: [b.name for b in BACKENDS.values() if option in b.options]
    for b in BACKENDS.values()
    for option in b.options
}
