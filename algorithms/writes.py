"""The stale-write rule, one event at a time: :class:`WriteJudge`.

A write is stale when, after the writer's most recent grant and before the write was sent, the
lock was granted to someone else (a *rival*); or when it is based on an out-of-date read (the
request's ``read`` is not the version the storage ``found``); or, where a lock is in play, when
its writer was never granted the lock at all. ``superseded_by`` names the last rival, or else
whose write the read did not see.

The judge keeps what the rule needs (every grant in time order, each client's own grants, the
write requests, who made each version) and judges each write's reply in O(log n) as it comes:
the checker's :func:`algorithms.checker.writes` feeds it a whole history in time order, and a
narrator that says a run event by event keeps one and feeds it as the events come, rather than
judging every write so far again at each one (which made a 20,000-event import quadratic).
Pure: no I/O, no clock; events in, :class:`Write` values out.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from dataclasses import dataclass, field

from algorithms.events import Event


@dataclass(frozen=True)
class Write:
    seq: int
    client: str
    token: int | None
    value: str | None
    accepted: bool
    stale: bool
    superseded_by: str | None


@dataclass
class WriteJudge:
    """Judges writes as their replies come (see the module's docstring)."""

    locked: bool = True  # a lock service is in play (``run_started``'s backend is not "none")
    _grants: list[tuple[float, int, str]] = field(default_factory=list)  # (t, seq, who), sorted
    _own: dict[str, list[float]] = field(default_factory=dict)  # who -> its grants' times, sorted
    _requests: dict[tuple[str, object], Event] = field(default_factory=dict)  # (who, call)
    _made: dict[object, str] = field(default_factory=dict)  # version -> whose write made it

    def see(self, e: Event) -> Write | None:
        """Take in ``e``; the judgement of a write's reply, None for any other event."""
        kind = e["kind"]
        if kind == "run_started":
            self.locked = e.get("backend") != "none"
        elif kind == "granted":
            t, who = float(e["t_ms"]), str(e["actor"])
            insort(self._grants, (t, int(e.get("seq", 0)), who))
            insort(self._own.setdefault(who, []), t)
        elif kind == "request" and e.get("op") == "write":
            self._requests[(e["actor"], e["call"])] = e
        elif is_write_reply(e):
            judged = self.judge(e)
            if e["accepted"] and "found" in e:
                self._made[e.get("version")] = e["actor"]
            return judged
        return None

    def judge(self, reply: Event, request: Event | None = None) -> Write:
        """The judgement of a write's ``reply`` on what has been seen so far (``request``: its
        request, if it was not seen), without taking the reply in."""
        client = reply["actor"]
        request = request or self._requests.get((client, reply["call"]), reply)
        t_sent = float(request["t_ms"])
        own = self._own.get(client, [])
        at = bisect_right(own, t_sent)
        since = own[at - 1] if at else float("-inf")
        last = bisect_right(self._grants, (t_sent, float("inf"), ""))
        # Every grant in (since, t_sent] is a rival's (the writer's own last one is at since):
        # there is one exactly when the last grant up to t_sent is later than since.
        rival = self._grants[last - 1][2] if last and self._grants[last - 1][0] > since else None
        outdated = _outdated(request, reply)
        stale = (self.locked and (not at or rival is not None)) or outdated
        superseded = rival if self.locked else None
        if superseded is None and outdated:
            superseded = self._made.get(reply.get("found"))
        return Write(
            seq=int(reply["seq"]),
            client=client,
            token=reply.get("token"),
            value=request.get("value"),
            accepted=bool(reply["accepted"]),
            stale=stale,
            superseded_by=superseded,
        )


def is_write_reply(e: Event) -> bool:
    return e["kind"] == "reply" and e.get("op") == "write" and "accepted" in e


def _outdated(request: Event, reply: Event) -> bool:
    """A write based on a read the storage had moved past when the write arrived."""
    read, found = request.get("read"), reply.get("found")
    return isinstance(read, int) and isinstance(found, int) and found != read
