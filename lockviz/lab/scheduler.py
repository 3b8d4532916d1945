"""A run's schedule: actions at times on the run's clock, done in time order by one thread.

The engine puts each scenario step on the schedule at its ``at_ms``; faults add their own
follow-ups (a pause schedules its thaw); clicks on a live run are added for "now". The thread
that calls :meth:`Scheduler.run` sleeps until the next action is due and does it. An action
that comes due while another runs waits for it: actions never overlap, so the order of the
steps is the order of the story.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable

Action = Callable[[], None]
_Entry = tuple[float, int, Action, str]  # when, order, what, its name (for the watchdog)


class Scheduler:
    def __init__(self, now_ms: Callable[[], float]) -> None:
        self.now_ms = now_ms  # the run's clock: ms since the run started
        self._queue: list[_Entry] = []
        self._busy: tuple[float, str] | None = None  # (since, what): the action running now
        self._order = itertools.count()  # equal times keep the order they were added in
        self._changed = threading.Condition()
        self._closed = False

    def at(self, at_ms: float, action: Action, what: str = "an action") -> None:
        """Do ``action`` at ``at_ms`` on the run's clock (at once if that has passed)."""
        with self._changed:
            heapq.heappush(self._queue, (at_ms, next(self._order), action, what))
            self._changed.notify_all()

    def soon(self, action: Action, what: str = "an action") -> None:
        self.at(self.now_ms(), action, what)

    def busy(self) -> tuple[float, str]:
        """How long the action running now has run (s), and what it is; (0, "") when idle."""
        busy = self._busy
        return (time.monotonic() - busy[0], busy[1]) if busy is not None else (0.0, "")

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
            self._queue = [entry for entry in self._queue if entry[0] <= now]
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
            self._busy = (time.monotonic(), entry[3])
            try:
                entry[2]()
            finally:
                self._busy = None

    def _next(self, open_ended: bool, deadline_s: float | None) -> _Entry | None:
        with self._changed:
            while True:
                if deadline_s is not None and time.monotonic() > deadline_s:
                    return None
                if self._queue:
                    wait = (self._queue[0][0] - self.now_ms()) / 1000
                    if wait <= 0:
                        return heapq.heappop(self._queue)
                elif not open_ended or self._closed:
                    return None
                else:
                    wait = 0.5
                self._changed.wait(wait if deadline_s is None else min(wait, 0.5))
