"""What the servers did, as the lab's watchers observe it: leases ended, keys deleted, restarts,
roles, a Sentinel's votes and suspicions, replication."""

from __future__ import annotations

from typing import Literal

from lockviz.jsontypes import Number
from lockviz.lab.events.base import BaseEvent, Key, is_, may


class _Server(BaseEvent):
    group = "What the servers did (observed by the lab's watchers)"
    recorded_by = "node"


class Expired(_Server):
    """The server expired the holder's lease (or session)."""

    kind: Literal["expired"]
    key: Key = is_("the lock's key, or ZooKeeper node")
    holder: str | None = is_("whose it was")
    holding: bool | None = may("ZooKeeper: whether it was the node holding the lock")


class Deleted(_Server):
    """The key was deleted (a release, or someone else's plain `DEL`)."""

    kind: Literal["deleted"]
    key: Key = is_("the lock's key (a PostgreSQL advisory lock's is a number), or node")
    holder: str | None = is_("whose it was")
    holding: bool | None = may("ZooKeeper: whether it was the node holding the lock")


class Restarted(_Server):
    """The server was started again."""

    kind: Literal["restarted"]
    persistence: str | None = is_("`none`: it comes back empty; `fsync`: it replays its log")
    boot_ms: Number | None = may("how long it took to answer again (older runs lack it)")
    starved_ms: Number | None = may(
        "how much of that its process waited for a core: the busy machine's part of the boot"
    )


class Role(_Server):
    """A server of a group took a new part: a replica promoted to primary by Sentinel (or an
    old primary turned into a replica), a new etcd leader, or a ZooKeeper leader elected. The
    parts as the run starts are in `run_started`'s `roles`."""

    kind: Literal["role"]
    role: str = is_("`primary`, `replica`, `leader` or `follower`")
    previous: str | None = may("the server that had the part before")
    of: str | None = may("a replica's primary")
    by: str | None = may("the Sentinel that made the change (elected by the others' votes)")
    term: int | None = may("the Sentinel configuration epoch, or the Raft term, of the change")
    leases: dict[str, int] | None = may(
        "etcd: each lock holder's lease as the new leader has it (ms to live)"
    )


class Voted(_Server):
    """A Sentinel voted for the Sentinel that should lead a failover (one vote per epoch; the
    first to ask gets it; a majority of the Sentinels elects)."""

    recorded_by = "Sentinel"
    kind: Literal["voted"]
    leader: str = is_("the Sentinel it voted for (itself, when it asks for votes)")
    term: int = is_("the epoch of the vote")


class Suspected(_Server):
    """A Sentinel thinks a node is down: no valid answer for `down-after-milliseconds`
    (`objective: false`, SDOWN), or a quorum of Sentinels agree (`objective: true`, ODOWN: a
    failover may start); `cleared: true` when it thinks so no more."""

    recorded_by = "Sentinel"
    kind: Literal["suspected"]
    node: str = is_("the node it thinks is down")
    objective: bool = is_("whether a quorum agrees (ODOWN)")
    cleared: bool | None = may("it answers again")
    quorum: str | None = may("how many Sentinels agree, of how many are needed (`2/2`)")


class Replicated(_Server):
    """A replica received a lock key from its primary (asynchronous replication: after the
    primary answered the client)."""

    kind: Literal["replicated"]
    key: Key = is_("the lock's key")
    holder: str | None = is_("whose it is")
