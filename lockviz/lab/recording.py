"""A run's record: each event given its ``seq`` and its time on the reference clock, checked
against its kind's model, kept and handed to the run's sink, in one order; and what a run gives
back (:class:`RunResult`).

The record is the story's, start to end: what a client tells before ``run_started`` (a ZooKeeper
session connecting while the lab provisions) is told right after it, at the start's time, never
at a time from before the run's clock; nothing is kept after the run's end (``run_finished``,
``run_failed``), nor once the process running it has sealed it (it tells of the run's
interruption itself). The engine (:mod:`lockviz.lab.engine`) records through it, under the
engine's own lock, and sees each event kept before the sink does (its story, its round trips).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from lockviz.lab import events
from lockviz.lab.events import Event, EventJson, Sink
from lockviz.lab.verdicts import VerdictJson

log = logging.getLogger(__name__)

ENDS = ("run_finished", "run_failed")  # the last event of a run: nothing is kept after it
# What the engine makes of an event kept, before the sink has it: the shift it shows, if any.
Seen = Callable[[Event], dict[str, object] | None]


@dataclass
class RunResult:
    events: list[EventJson]  # as the store keeps them and a run's export holds them
    verdict: VerdictJson | None = None
    mismatches: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def expect_met(self) -> bool | None:
        """Whether the verdict met ``expect``; None when there is no verdict, or the run could
        not keep its story (its ``expect`` was not judged)."""
        if self.verdict is None or self.inconclusive:
            return None
        return not self.mismatches

    @property
    def inconclusive(self) -> str:
        """Why the run could not keep its story ("" when it did)."""
        return self.verdict.get("inconclusive", "") if self.verdict is not None else ""


class Recording:
    """One run's events, recorded in order (see the module's doc)."""

    def __init__(
        self,
        sink: Sink,
        lock: AbstractContextManager[object],
        t0_ns: Callable[[], int],
        seen: Seen,
    ) -> None:
        self.sink = sink
        self.lock = lock  # the engine's: the run's state and its record change under one lock
        self.t0_ns = t0_ns  # when the run's clock started
        self.seen = seen
        self.events: list[Event] = []
        self.sealed = False  # its process tells of its end instead
        # What a client told before the run's clock started: told at the start, after
        # run_started, not at a raw time.
        self._early: list[tuple[str, str, Mapping[str, object]]] = []

    def record(
        self, actor: str, kind: str, details: Mapping[str, object], t_ns: int | None = None
    ) -> None:
        """Give the event its seq and reference time, check it against its kind's model (a
        field the model does not declare is a bug: it raises), keep it, hand it to the sink."""
        with self.lock:
            if self.sealed or (self.events and self.events[-1].kind in ENDS):
                # Judged (or failed, or interrupted) already: every page and replay ends the
                # story at its end.
                log.info("%s's %s came after the run's end: not kept", actor, kind)
                return
            if not self.events and kind not in ("run_started", "run_failed"):
                # The story starts with run_started (or a failure before it): what a client told
                # before it (a ZooKeeper session connecting while the lab provisions) is told at
                # the start, right after it, never at a time from before the run's clock.
                self._early.append((actor, kind, dict(details)))
                return
            t = time.monotonic_ns() if t_ns is None else t_ns
            lost = self._keep(actor, kind, details, t)
            if kind == "run_started":
                early, self._early = self._early, []
                for told in early:
                    lost = self._keep(*told, t) or lost
        if lost is not None:
            self.record("lab", "schedule_shifted", lost)

    def _keep(
        self, actor: str, kind: str, details: Mapping[str, object], t_ns: int
    ) -> dict[str, object] | None:
        """One event kept and handed on (under the lock); the shift it shows, if any."""
        event = events.parse(
            {
                "seq": len(self.events) + 1,
                "t_ms": round((t_ns - self.t0_ns()) / 1e6, 1),
                "actor": actor,
                "kind": kind,
                **details,
            }
        )
        self.events.append(event)
        lost = self.seen(event)
        self.sink(event)
        return lost
