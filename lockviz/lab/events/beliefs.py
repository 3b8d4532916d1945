"""What a client believes: granted, released, extended, lost, its ZooKeeper session, woken."""

from __future__ import annotations

from typing import Literal

from lockviz.lab.events.base import BaseEvent, is_, may


class _Belief(BaseEvent):
    group = "What a client believes"
    recorded_by = "client"


class Granted(_Belief):
    """The client now believes it holds the lock."""

    kind: Literal["granted"]
    node: str = is_("the server that granted it (Redlock: those that said yes, joined by `,`)")
    nodes: list[str] | None = may("Redlock: the servers that said yes")
    token: int | None = is_("the fencing token (Redlock: null, it has none)")
    ttl_ms: int | None = is_("the lease (PostgreSQL: null, no lease)")
    validity_ms: int | None = may("Redlock: how long the lock is valid")
    value: str = is_("what identifies the grant: the random value, the node, the key")


class AcquireFailed(_Belief):
    """The client gave up acquiring."""

    kind: Literal["acquire_failed"]
    reason: str = is_('why (e.g. `"timed out after 5000 ms"`)')
    waited_ms: int | None = may("how long it waited")


class Releasing(_Belief):
    """The client's code is done with the lock and sends its release: from here on it no
    longer acts as the holder (the server's answer may arrive after the next holder's grant)."""

    kind: Literal["releasing"]


class Released(_Belief):
    """The release's outcome."""

    kind: Literal["released"]
    ok: bool = is_("false: the server said the lock was no longer ours")
    nodes: list[str] | None = may("Redlock: the servers that released it")
    reason: str | None = may("why not")


class Extended(_Belief):
    """An extend's outcome."""

    kind: Literal["extended"]
    ok: bool = is_("whether the lease was prolonged")
    ttl_ms: int | None = is_("the new lease")
    validity_ms: int | None = may("Redlock: the new validity")
    nodes: list[str] | None = may("Redlock: the servers that said yes")


class Lost(_Belief):
    """The client learned its lock is gone (an extend failed, a session was lost, its own clock
    says the lease ran out)."""

    kind: Literal["lost"]
    reason: str = is_("how it learned")


class Session(_Belief):
    """ZooKeeper's view of the client's session changed, as its client library tells it:
    `SUSPENDED` (the connection dropped: the session may or may not live), `RECONNECTED` (the
    same session, on a server again), `LOST` (the session expired: its ephemeral nodes are
    gone), `CONNECTED` (a new session, after a lost one)."""

    kind: Literal["session"]
    state: str = is_("`SUSPENDED`, `RECONNECTED`, `LOST` or `CONNECTED`")
    server: str | None = may("the server it is connected to again")
    keeps: bool | None = may("SUSPENDED: whether the client keeps acting as the lock's holder")


class Woken(_Belief):
    """A waiting client was woken to re-check (the checker counts them: `wakeups`)."""

    kind: Literal["woken"]
    by: str = is_("what woke it")


class RenewalStarted(_Belief):
    """The watchdog thread will extend the lease every ttl/3."""

    kind: Literal["renewal_started"]
    interval_ms: int = is_("how often")


class Note(_Belief):
    """Something the client noticed (a failed Redlock attempt, a command it ignored)."""

    kind: Literal["note"]
    text: str = is_("what")
