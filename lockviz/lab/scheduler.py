"""A run's schedule: actions at times on the run's clock, done in time order by one thread.

The engine puts each scenario step on the schedule at its ``at_ms``; faults add their own
follow-ups (a pause schedules its thaw, on a schedule of its own so that a slow step never
delays it); clicks on a live run are added for "now". The thread that calls
:meth:`Scheduler.run` sleeps until the next action is due and does it. An action that comes due
while another runs waits for it: actions never overlap, so the order of the steps is the order
of the story.

**Lateness and shifts.** Every action's lateness (when it began − when it was due) is kept
while it runs (:meth:`Scheduler.late_ms`), for the engine to record. A busy machine can wake the
thread late; a story told with its steps bunched together is a different story. So the run's
schedules share a :class:`Timeline`: when an action would begin more than its tolerance late,
the timeline shifts by that lateness, and every action still pending on every schedule of the
run (the rest of the steps, the pending thaws) moves with it, keeping the intervals between
them. ``on_late`` hears each shift (with the times the pending actions were due at) before
the late action runs: what moved cannot be kept in step with what did not — a lease running on
a server — and the engine judges whether the story survived.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

Action = Callable[[], None]
TOLERANCE_MS = 50.0  # an action this late or less runs as it is: beyond, the schedule shifts


@dataclass(frozen=True, eq=False)
class Entry:
    at_ms: float  # on the schedule's own time: due at at_ms + the timeline's shift
    order: int  # equal times keep the order they were added in
    action: Action
    what: str  # its name, for the watchdog and the shift: "step 3 (acquire)"
    index: int | None = None  # the scenario step it is, if it is one

    def __lt__(self, other: Entry) -> bool:
        return (self.at_ms, self.order) < (other.at_ms, other.order)


@dataclass(frozen=True)
class Late:
    """An action about to begin beyond the tolerance, and what moves with it."""

    what: str
    index: int | None  # the scenario step it is, if it is one
    due_ms: float  # when it was due, on the run's clock (before this shift)
    late_ms: float  # how late it begins: the timeline shifts by this much
    shift_ms: float  # the timeline's whole shift after this one
    pending: tuple[tuple[float, str], ...]  # (due on the run's clock before the shift, what)
    client: str = ""  # the client that began its command late (not an action of a schedule)
    until_ms: float | None = None  # the late command was still not done then (a fault came)
    began_ms: float | None = None  # how late the action began, when doing it took the rest
    own_ms: float = 0.0  # of ``late_ms``, the action's own time (a server booting): not lateness


class Timeline:
    """The shift that a run's schedules share, and the tolerance past which it grows.

    ``tolerance_ms=None`` never shifts (a free-play session has no script to keep in step).
    """

    def __init__(
        self,
        now_ms: Callable[[], float],
        tolerance_ms: float | None = TOLERANCE_MS,
        on_late: Callable[[Late], None] | None = None,
    ) -> None:
        self.now_ms = now_ms  # the run's clock: ms since the run started
        self.tolerance_ms = tolerance_ms
        self.on_late = on_late
        self.shift_ms = 0.0
        self._schedules: list[Scheduler] = []
        self._lock = threading.Lock()

    def began(self, entry: Entry) -> float | None:
        """``entry`` is due and about to begin: how late it is. Beyond the tolerance, first
        shift by the lateness of the earliest moment pending on any schedule of the run (the
        one that fell furthest behind); ``None`` when, after that, ``entry`` is not due yet
        (another moment comes first: put it back)."""
        with self._lock:
            now = self.now_ms()
            due = entry.at_ms + self.shift_ms
            if self.tolerance_ms is None or now - due <= self.tolerance_ms:
                return max(0.0, now - due)
            moments = sorted(
                [(due, entry), *(m for s in self._schedules for m in s.pending_due(self.shift_ms))]
            )
            first_due, first = moments[0]
            late = now - first_due
            self.shift_ms += late
            for schedule in self._schedules:
                schedule.wake()  # each sleeps until its next action is due: compute that again
            shifted = Late(
                first.what,
                first.index,
                first_due,
                late,
                self.shift_ms,
                tuple((d, e.what) for d, e in moments[1:]),
            )
        if self.on_late is not None:
            self.on_late(shifted)
        return None if first is not entry else late

    def late_elsewhere(
        self,
        what: str,
        index: int | None,
        due_ms: float,
        late_ms: float,
        client: str,
        until_ms: float | None = None,
        began_ms: float | None = None,
        own_ms: float = 0.0,
    ) -> None:
        """Something the schedule started began late outside it (``client``'s process took its
        command ``late_ms`` after it could have, or was held up that long as it ran it):
        beyond the tolerance, shift what is pending by that much, so the rest keeps its
        intervals to when it really began. ``until_ms``: the command was still not done then
        (a fault was about to be done to its client). ``began_ms``: the lab began the action
        that much late, and doing it (a server's restart) took the rest of ``late_ms``, of
        which ``own_ms`` was its own time on any machine (the server booting)."""
        if self.tolerance_ms is None or late_ms <= self.tolerance_ms:
            return
        with self._lock:
            pending = sorted(m for s in self._schedules for m in s.pending_due(self.shift_ms))
            self.shift_ms += late_ms
            for schedule in self._schedules:
                schedule.wake()
            shifted = Late(
                what,
                index,
                due_ms,
                late_ms,
                self.shift_ms,
                tuple((d, e.what) for d, e in pending),
                client=client,
                until_ms=until_ms,
                began_ms=began_ms,
                own_ms=own_ms,
            )
        if self.on_late is not None:
            self.on_late(shifted)


class Scheduler:
    def __init__(self, now_ms: Callable[[], float] | Timeline) -> None:
        self.timeline = now_ms if isinstance(now_ms, Timeline) else Timeline(now_ms, None)
        self.timeline._schedules.append(self)
        self._queue: list[Entry] = []
        # The action running: (since, what, how late it began in ms, when it was due on the
        # run's clock, the shift included)
        self._running: tuple[float, str, float, float] | None = None
        self._order = itertools.count()
        self._changed = threading.Condition()
        self._closed = False

    def now_ms(self) -> float:
        """Now on the schedule's own time (the run's clock less the timeline's shift)."""
        return self.timeline.now_ms() - self.timeline.shift_ms

    def at(
        self, at_ms: float, action: Action, what: str = "an action", index: int | None = None
    ) -> None:
        """Do ``action`` at ``at_ms`` on the schedule (at once if that has passed);
        ``index``: the scenario step it is."""
        with self._changed:
            heapq.heappush(self._queue, Entry(at_ms, next(self._order), action, what, index))
            self._changed.notify_all()

    def after(self, ms: float, action: Action, what: str = "an action") -> None:
        """Do ``action`` ``ms`` from now, as the schedule counts (a shift moves it too)."""
        self.at(self.now_ms() + ms, action, what)

    def soon(self, action: Action, what: str = "an action", index: int | None = None) -> None:
        self.at(self.now_ms(), action, what, index)

    def busy(self) -> tuple[float, str]:
        """How long the action running now has run (s), and what it is; (0, "") when idle."""
        running = self._running
        return (time.monotonic() - running[0], running[1]) if running is not None else (0.0, "")

    def late_ms(self) -> float:
        """How late the action running now began (0 when idle): for the engine to record."""
        running = self._running
        return running[2] if running is not None else 0.0

    def due_ms(self) -> float | None:
        """When the action running now was due on the run's clock (None when idle)."""
        running = self._running
        return running[3] if running is not None else None

    def pending_due(self, shift_ms: float) -> list[tuple[float, Entry]]:
        """Each pending action, with when it is due on the run's clock were the shift
        ``shift_ms``."""
        with self._changed:
            return [(e.at_ms + shift_ms, e) for e in self._queue]

    def wake(self) -> None:
        with self._changed:
            self._changed.notify_all()

    @property
    def pending(self) -> int:
        with self._changed:
            return len(self._queue)

    def close(self) -> None:
        """Let an open-ended :meth:`run` return once everything scheduled has been done."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def drop_later(self) -> None:
        """Keep what is due now (a click just accepted), drop what was due later, and let
        :meth:`run` return once the kept actions are done."""
        with self._changed:
            now = self.now_ms()
            self._queue = [entry for entry in self._queue if entry.at_ms <= now]
            heapq.heapify(self._queue)
            self._closed = True
            self._changed.notify_all()

    def cancel(self) -> None:
        """Drop every pending action and let :meth:`run` return now."""
        with self._changed:
            self._queue.clear()
            self._closed = True
            self._changed.notify_all()

    def run(self, open_ended: bool = False, deadline_s: float | None = None) -> None:
        """Do each action when it is due, until the schedule is empty (and, when
        ``open_ended``, :meth:`close` was called) or ``deadline_s`` (monotonic) has passed."""
        while (entry := self._next(open_ended, deadline_s)) is not None:
            self._running = (time.monotonic(), entry.what, 0.0, 0.0)
            try:
                late = self.timeline.began(entry)
                if late is None:  # the shift made another moment come first
                    with self._changed:
                        heapq.heappush(self._queue, entry)
                    continue
                due = entry.at_ms + self.timeline.shift_ms
                self._running = (self._running[0], entry.what, late, due)
                entry.action()
            finally:
                self._running = None

    def _next(self, open_ended: bool, deadline_s: float | None) -> Entry | None:
        with self._changed:
            while True:
                if deadline_s is not None and time.monotonic() > deadline_s:
                    return None
                if self._queue:
                    wait = (self._queue[0].at_ms - self.now_ms()) / 1000
                    if wait <= 0:
                        return heapq.heappop(self._queue)
                elif not open_ended or self._closed:
                    return None
                else:
                    wait = 0.5
                self._changed.wait(wait if deadline_s is None else min(wait, 0.5))
