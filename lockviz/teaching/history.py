"""A run's events as a lesson's questions read them: when a step was dispatched, what a client
was granted, what the storage did with a step's write, who was woken. Plain reading of recorded
events (docs/events.md), for the checkpoints' claims (:mod:`lockviz.teaching.claims`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from algorithms.checker import check
from algorithms.verdict import Verdict
from lockviz.jsontypes import JsonValue
from lockviz.lab.events import EventJson

FOREVER = float("inf")


@dataclass(frozen=True)
class Finding:
    """Whether a run agrees with a checkpoint's answer, and what in the run says so."""

    agrees: bool
    why: str


def finding(agrees: bool, why: str) -> Finding:
    return Finding(bool(agrees), why)


def ms(e: EventJson | None, default: float = FOREVER) -> float:
    """An event's time (``default`` for no event)."""
    t = e.get("t_ms") if e is not None else None
    return float(t) if isinstance(t, int | float) else default


class History:
    """One run's events, in the order the recorder received them."""

    def __init__(self, events: Sequence[EventJson]) -> None:
        self.events = list(events)

    def step(self, index: int) -> float:
        """When step ``index`` was dispatched (its ``step`` event); never, if it was not."""
        return ms(self.first("step", index=index))

    def of(
        self,
        kind: str,
        actor: str | None = None,
        after: float = -FOREVER,
        before: float = FOREVER,
        **fields: JsonValue,
    ) -> list[EventJson]:
        """The events of ``kind`` (by ``actor``), between two times, with these fields."""
        return [
            e
            for e in self.events
            if e.get("kind") == kind
            and (actor is None or e.get("actor") == actor)
            and after <= ms(e) <= before
            and all(e.get(k) == v for k, v in fields.items())
        ]

    def first(self, kind: str, actor: str | None = None, **rest: JsonValue) -> EventJson | None:
        found = self.of(kind, actor, **rest)  # type: ignore[arg-type]
        return found[0] if found else None

    def granted(
        self, who: str, after: float = -FOREVER, before: float = FOREVER
    ) -> EventJson | None:
        found = self.of("granted", who, after, before)
        return found[0] if found else None

    def replies(
        self, who: str, op: str, after: float = -FOREVER, before: float = FOREVER
    ) -> list[EventJson]:
        return [e for e in self.of("reply", who, after, before) if e.get("op") == op]

    def requests(
        self, who: str, op: str, after: float = -FOREVER, before: float = FOREVER
    ) -> list[EventJson]:
        return [e for e in self.of("request", who, after, before) if e.get("op") == op]

    def wrote(self, index: int) -> EventJson | None:
        """What the storage answered to step ``index``'s write (None: no answer): the reply to
        its client's first write request, after the step was dispatched, with the step's value
        (a client runs its steps in turn, so a write queued behind a slow one is sent later)."""
        step = self.first("step", index=index)
        if step is None:
            return None
        who = str(step.get("client"))
        sent = [
            e
            for e in self.requests(who, "write", after=ms(step))
            if "value" not in step or e.get("value") == step.get("value")
        ]
        if not sent:
            return None
        found = [e for e in self.replies(who, "write") if e.get("call") == sent[0].get("call")]
        return found[0] if found else None

    def verdict(self) -> Verdict:
        """The checker's verdict on these events (a pure function of them)."""
        return check(self.events)

    def stale(self, reply: EventJson | None) -> bool:
        """Whether the checker judges the write that ``reply`` answers stale."""
        seq = reply.get("seq") if reply is not None else None
        return any(w.seq == seq and w.stale for w in self.verdict().writes)

    def token(self, who: str, after: float = -FOREVER) -> int | None:
        """The token of ``who``'s first grant after ``after`` (None: no grant, or no token)."""
        grant = self.granted(who, after)
        token = grant.get("token") if grant is not None else None
        return token if isinstance(token, int) else None

    def believes(self, who: str, at: float) -> bool:
        """Whether ``who`` believed it held the lock at ``at`` (granted, not yet let go)."""
        grants = [ms(e) for e in self.of("granted", who, before=at)]
        if not grants:
            return False
        ends = [
            e
            for kind in ("releasing", "released", "lost", "crashed")
            for e in self.of(kind, who, after=grants[-1], before=at)
        ]
        return not ends

    def rounds(self, who: str, after: float = -FOREVER, before: float = FOREVER) -> list[int]:
        """A Redlock client's acquire rounds: how many nodes said yes in each."""
        found: list[int] = []
        asked: set[JsonValue] = set()
        for e in self.events:
            if e.get("actor") != who or not after <= ms(e) <= before or e.get("op") != "acquire":
                continue
            if e.get("kind") == "request":
                if not found or e.get("to") in asked:  # a node asked again: the next round
                    found.append(0)
                    asked = set()
                asked.add(e.get("to"))
            elif e.get("kind") == "reply" and e.get("ok") and found:
                found[-1] += 1
        return found
