"""The faults the engine performs, each recorded as done: pauses, crashes, clocks, links."""

from __future__ import annotations

from typing import Literal

from lockviz.jsontypes import Number
from lockviz.lab.events.base import BaseEvent, is_, may


class _Fault(BaseEvent):
    group = "Faults (reported by the engine, which performs them)"
    recorded_by = "client"


class Paused(_Fault):
    """SIGSTOP sent: the whole process, timers and heartbeats included, is frozen."""

    kind: Literal["paused"]
    ms: int = is_("for how long")


class Resumed(_Fault):
    """SIGCONT sent."""

    kind: Literal["resumed"]
    why: str | None = may("when it came early because the run was ending")
    late_ms: Number | None = may("when it came on its timer: how late")


class Crashed(_Fault):
    """SIGKILL sent to a client, or kill -9 to a server."""

    recorded_by = "client or node"
    kind: Literal["crashed"]


class ClockJumped(_Fault):
    """A client's own wall clock, or a server's, moved."""

    recorded_by = "client or node"
    kind: Literal["clock_jumped"]
    ms: int = is_("this jump")
    offset_ms: Number = is_("the clock's total offset now")


class ClockRate(_Fault):
    """The client's own clock now runs at another speed."""

    kind: Literal["clock_rate"]
    rate: float = is_("the speed (0.25 = four times slow)")


class Link(_Fault):
    """The proxy on the link between this client and that server changed, or a server was cut
    off from its peers (a ZooKeeper ensemble)."""

    recorded_by = "client, or node"
    kind: Literal["link"]
    node: str | None = may("the server at the link's other end")
    peers: list[str] | None = may("a server's peers, when it is the one cut off")
    mode: str = is_("`pass`, `blackhole`, `reset` or `delay`")
    ms: Number | None = may("a delay")
    jitter_ms: Number | None = may("a delay's jitter")
