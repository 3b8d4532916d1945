"""A lease the story has end while its holder is frozen must be over, as its server said, by
her thaw: whatever waited for it by design (another client's grant) would otherwise come after
the thaw with nothing measured (issue 48, docs/fidelity.md). :class:`FrozenLeases` follows what
that end depends on as the run's events come (the story hands it each one and each thaw), and
:meth:`FrozenLeases.outlived` says which lease a server ended only after the thaw."""

from __future__ import annotations

from collections.abc import Iterable

from lockviz.lab import events
from lockviz.lab.moments import STEP_RESOLUTION_MS, Crossing, Done, Mark, Timer

# How long after its estimated end a server may end a lease on a machine that keeps up (etcd
# looks for expired leases every 500 ms; ZooKeeper at its tick, 100 ms): a lease that the story
# has end more than this before its frozen holder's thaw must be over, as the server said, by then.
SERVER_SLACK_MS = 1000.0

# Done to a server: its leases end as the fault decides, not as their ttl says.
_SERVER_FAULTS = (
    events.Paused,
    events.Crashed,
    events.Restarted,
    events.ClockJumped,
    events.ClockRate,
    events.Link,
)


class FrozenLeases:
    """What a server ended while its holder was frozen, from one run's events."""

    def __init__(self) -> None:
        self.pauses: dict[str, float] = {}  # who -> when their latest pause landed
        # At each thaw, the thawed client's leases that the story has end while it was frozen
        self.frozen_leases: list[tuple[Done, Timer]] = []
        self.server_ends: list[tuple[float, str, str]] = []  # (when, holder, server) said ended
        self.grants: list[tuple[float, str, list[str]]] = []  # (when, who, on which servers)
        self.faulted: set[str] = set()  # who a fault was done to, or whose link it cut
        self.new_leaders: list[float] = []  # when a group's leader (or primary) changed
        self.group: set[str] = set()  # the servers of a replicated group: one lock among them

    def see(self, event: events.Event) -> None:
        """Note what the lease's end depends on: pauses, faults, leaders, ends, grants."""
        t = float(event.t_ms)
        if isinstance(event, events.Paused):
            self.pauses[event.actor] = t
        if isinstance(event, _SERVER_FAULTS):
            links = (
                [event.node or "", *(event.peers or [])] if isinstance(event, events.Link) else []
            )
            self.faulted.update([event.actor, *filter(None, links)])
        if isinstance(event, events.RunStarted) and event.roles:
            self.group = set(event.roles)
        if isinstance(event, events.Role) and event.role in ("leader", "primary"):
            self.new_leaders.append(t)
        if isinstance(event, events.Expired | events.Deleted) and event.holder:
            self.server_ends.append((t, event.holder, event.actor))
        elif isinstance(event, events.Granted):
            self.grants.append((t, event.actor, list(event.nodes or [event.node])))

    def thawed(self, thaw: Done, timers: Iterable[Timer]) -> None:
        """``thaw.actor`` thaws: note its leases (of ``timers``, the story's) that the story has
        end while it was frozen (running at its pause, estimated to end well before now)."""
        paused = self.pauses.get(thaw.actor)
        if paused is None:
            return
        for timer in timers:
            if (
                timer.kind == "lease"
                and timer.client == thaw.actor
                and timer.renewed_ms < paused < timer.end_ms
                and timer.end_ms + SERVER_SLACK_MS < thaw.at_ms
            ):
                self.frozen_leases.append((thaw, timer))

    def outlived(self, now_ms: float) -> Crossing | None:
        """A lease the story has end while its holder was frozen that its server ended only
        after the thaw, or not by ``now_ms``: the server (or the watcher that tells of it) fell
        behind, and whatever waited for that end (another client's grant) may have come after
        the thaw. Its end is when the server said so (``expired``, ``deleted``), or another
        client was granted the lock there; in a replicated group, on any of its servers (an etcd
        cluster's leader ends a lease whichever member its client spoke to: a fresh-clone CI run
        of ``etcd-leader-crash`` was judged "fell behind" when the new leader was not alice's
        member). Not judged: a server a fault was done to, and a lease whose group changed leader
        after it was renewed (etcd's new leader counts each lease's time to live again, plus an
        election timeout, from its election)."""
        for thaw, lease in self.frozen_leases:
            after = lease.renewed_ms
            if lease.node in self.faulted or any(after < t <= thaw.at_ms for t in self.new_leaders):
                continue
            servers = self.group if lease.node in self.group else {lease.node}
            ends = [t for t, holder, node in self.server_ends if holder == lease.client and
                    node in servers and t > after]  # fmt: skip
            ends += [t for t, who, nodes in self.grants if servers & set(nodes) and
                     who != lease.client and t > after]  # fmt: skip
            ended = min(ends, default=now_ms)
            if ended > thaw.at_ms + STEP_RESOLUTION_MS:
                fixed = Mark("step", thaw.what, thaw.at_ms, due_ms=thaw.due_ms)
                moved = f"{lease.node}'s end of {lease.client}'s lease"
                return Crossing(fixed, moved, lease.end_ms, ended)
        return None
