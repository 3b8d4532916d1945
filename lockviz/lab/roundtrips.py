"""Replies that came late: a machine too busy to answer in time, seen from the clients' side.

The schedule (:mod:`lockviz.lab.scheduler`) sees the lab fall behind when a step or a client's
command *begins* late. A busy machine can also delay what happens after a command began: the
server, or the client reading its answer, starved of the CPU. On loopback a lock service
answers in a millisecond or two, so a reply that comes hundreds of milliseconds after its
request means the command's effect happened somewhere in between, at a time nobody saw. If
another client's step was taken in that window, the order of the story is no longer known
("Carol is granted the lock, then Bob writes" may have been "Bob writes, then Carol is
granted"), and a verdict drawn from it could tell a story with confidence that the run did not
play. A reply a client gave up waiting for ("no reply within 100 ms", a Redlock node) changes
the story whatever else happened: the node counts as failed.

:class:`RoundTrips` follows a run's events and names such replies (:class:`Slow`); the engine
asks the story whether anything was in the way (:meth:`lockviz.lab.story.Story.crossing`) and,
if so, records the run as not keeping its story: inconclusive, never wrong.

Only calls no fault touched are judged: a paused, crashed, clock-moved or cut-off client or
server answers late by design (a SIGSTOPped server, a link that drops bytes, a ZooKeeper
session coming back), and so do calls that wait by design (a PostgreSQL lock with a wait, an
etcd lock): once a fault touched a client or a server, its calls are not judged for the rest of
the run; in a ZooKeeper ensemble, a fault on one node exempts the calls to every node (the
others elect a leader again, and sync the one that comes back).
"""

from __future__ import annotations

from dataclasses import dataclass

from lockviz.lab import events

STORAGE = "storage"
WAITING_OPS = frozenset({"lock"})  # an etcd lock waits on the server for the holder to go
GAVE_UP = ("no reply within", "no reply before")  # a client's own timeout for a reply


@dataclass(frozen=True)
class Slow:
    """A reply that came ``took_ms`` after its request, with no fault in the way; or a call
    that had been in flight that long when a pause or a crash of its client landed on it."""

    client: str
    op: str
    server: str
    sent_ms: float
    replied_ms: float  # or when the fault landed
    gave_up: bool  # no reply came: the client's own timeout ended the call
    landed: str = ""  # "pause" or "crash": done to the client while the call was held up

    @property
    def took_ms(self) -> float:
        return self.replied_ms - self.sent_ms

    @property
    def what(self) -> str:
        if self.landed:
            return (
                f"{self.client}'s {self.op} on {self.server} (unanswered for "
                f"{self.took_ms:.0f} ms when the {self.landed} landed)"
            )
        answered = "went unanswered for" if self.gave_up else "was answered after"
        return f"{self.client}'s {self.op} on {self.server} ({answered} {self.took_ms:.0f} ms)"


NEVER = float("inf")


class RoundTrips:
    """The calls of one run in flight, and when a fault first touched each client and server.

    A fault that touched a call's client or server *before* the call was sent makes it slow by
    design (a frozen server, a cut link): not judged. A pause or a crash of the client that
    lands on a call already held up past the tolerance is judged: the story assumed the call
    was answered before the fault (alice is granted, *then* frozen), and the machine made it
    otherwise. Every other fault during the call explains its delay."""

    def __init__(self, clients: list[str], tolerance_ms: float, ensemble: bool = False) -> None:
        self.clients = set(clients)
        self.tolerance_ms = tolerance_ms
        self.ensemble = ensemble  # the lock service's nodes share one fate (ZooKeeper)
        self.sent: dict[tuple[str, int], events.Request] = {}
        self.first_fault: dict[str, float] = {}  # who -> when a fault first touched them
        self.nodes_from = NEVER  # when a fault first touched a node of an ensemble
        self.faults: list[tuple[float, str, str]] = []  # (when, who, kind), every fault

    def see(self, event: events.Event) -> Slow | None:
        """Follow ``event``; a call the machine held up, with no fault in its way by design."""
        if isinstance(event, events.Request):
            if event.actor in self.clients:
                self.sent[(event.actor, event.call)] = event
        elif isinstance(event, events.Reply):
            request = self.sent.pop((event.actor, event.call), None)
            if request is not None:
                return self._judged(request, float(event.t_ms), event.error or "")
        elif isinstance(event, _FAULTS):
            t = float(event.t_ms)
            who = [event.actor]
            if isinstance(event, events.Link):
                who += [event.node or "", *(event.peers or [])]
            kind = _KINDS.get(type(event), "fault")
            for one in filter(None, who):
                self._touch(one, t, kind)
            if isinstance(event, events.Crashed) and event.actor in self.clients:
                return self._crashed_on(event.actor, t)  # no reply will come
        return None

    def _touch(self, who: str, t: float, kind: str) -> None:
        self.first_fault[who] = min(self.first_fault.get(who, NEVER), t)
        self.faults.append((t, who, kind))
        if self.ensemble and who not in self.clients and who != STORAGE:
            self.nodes_from = min(self.nodes_from, t)

    def _by_design(self, request: events.Request) -> bool:
        """Whether the call was slow by design: one that waits, or sent after a fault touched
        its client or its server."""
        sent = float(request.t_ms)
        if request.op in WAITING_OPS or request.wait_ms is not None:
            return True
        if request.to != STORAGE and self.nodes_from <= sent:
            return True
        return any(self.first_fault.get(who, NEVER) <= sent for who in (request.actor, request.to))

    def _judged(self, request: events.Request, replied: float, error: str) -> Slow | None:
        if self._by_design(request):
            return None
        client, server, sent = request.actor, request.to, float(request.t_ms)
        during = sorted(
            f for f in self.faults if sent < f[0] < replied and f[1] in (client, server)
        )
        if during:  # a fault came while the call was in flight
            t, who, kind = during[0]
            if who == client and kind != "fault" and t - sent > self.tolerance_ms:
                return Slow(client, request.op, server, sent, t, False, kind)  # held up before
            return None
        gave_up = error.startswith(GAVE_UP)
        if not gave_up and replied - sent <= self.tolerance_ms:
            return None
        return Slow(client, request.op, server, sent, replied, gave_up)

    def _crashed_on(self, client: str, t: float) -> Slow | None:
        for (who, _), request in list(self.sent.items()):
            sent = float(request.t_ms)
            if who == client and t - sent > self.tolerance_ms and not self._by_design(request):
                return Slow(client, request.op, request.to, sent, t, False, "crash")
        return None


_FAULTS = (
    events.Paused,
    events.Resumed,
    events.Crashed,
    events.Restarted,
    events.ClockJumped,
    events.ClockRate,
    events.Link,
)
_KINDS: dict[type, str] = {events.Paused: "pause", events.Crashed: "crash"}
