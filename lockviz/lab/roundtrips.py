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
    """A reply that came ``took_ms`` after its request, with no fault in the way."""

    client: str
    op: str
    server: str
    sent_ms: float
    replied_ms: float
    gave_up: bool  # no reply came: the client's own timeout ended the call

    @property
    def took_ms(self) -> float:
        return self.replied_ms - self.sent_ms

    @property
    def what(self) -> str:
        answered = "went unanswered for" if self.gave_up else "was answered after"
        return f"{self.client}'s {self.op} on {self.server} ({answered} {self.took_ms:.0f} ms)"


class RoundTrips:
    """The calls of one run in flight, and the clients and servers a fault has touched."""

    def __init__(self, clients: list[str], tolerance_ms: float, ensemble: bool = False) -> None:
        self.clients = set(clients)
        self.tolerance_ms = tolerance_ms
        self.ensemble = ensemble  # the lock service's nodes share one fate (ZooKeeper)
        self.sent: dict[tuple[str, int], events.Request] = {}
        self.touched: set[str] = set()  # clients and servers a fault touched
        self.nodes_touched = False  # a fault on a node of an ensemble

    def see(self, event: events.Event) -> Slow | None:
        """Follow ``event``; a reply that came late with no fault in the way is returned."""
        if isinstance(event, events.Request):
            if event.actor in self.clients:
                self.sent[(event.actor, event.call)] = event
        elif isinstance(event, events.Reply):
            request = self.sent.pop((event.actor, event.call), None)
            if request is not None:
                return self._judged(request, event)
        elif isinstance(event, _FAULTS):
            self._touch(event.actor)
            if isinstance(event, events.Link):
                for other in [event.node or "", *(event.peers or [])]:
                    self._touch(other)
        return None

    def _touch(self, who: str) -> None:
        if not who:
            return
        self.touched.add(who)
        if self.ensemble and who not in self.clients and who != STORAGE:
            self.nodes_touched = True

    def _judged(self, request: events.Request, reply: events.Reply) -> Slow | None:
        client, server = request.actor, request.to
        if request.op in WAITING_OPS or request.wait_ms is not None:
            return None
        if client in self.touched or server in self.touched:
            return None
        if server != STORAGE and self.nodes_touched:
            return None
        gave_up = (reply.error or "").startswith(GAVE_UP)
        sent, replied = float(request.t_ms), float(reply.t_ms)
        if not gave_up and replied - sent <= self.tolerance_ms:
            return None
        return Slow(client, request.op, server, sent, replied, gave_up)


_FAULTS = (
    events.Paused,
    events.Resumed,
    events.Crashed,
    events.Restarted,
    events.ClockJumped,
    events.ClockRate,
    events.Link,
)
