"""How long a run may take, and the watchdog that holds it to that.

No run can hold the lab hostage. Every run has a hard wall-clock limit; an open-ended run (free
play) also ends after an idle spell without a click, a shorter one while other runs wait for the
lab (a full lab frees the slots that idle sessions hold before it refuses anyone); and a run
whose engine stops moving (one step that never returns) is failed, with the reason, and cleaned
up. The watchdog is a thread of
its own: it looks at the engine from outside, so nothing the engine is stuck in can stop it.

What the watchdog does when a limit is reached is the engine's business (``on_limit``): an
open-ended run that reaches its limit ends and is judged like any other; a scripted run that
overruns its own schedule by that much, or a stuck one, is failed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from lockviz.scenarios.schema import Scenario
from lockviz.scenarios.verbs import DEFAULT_ACQUIRE_TIMEOUT_MS

STEP_LIMIT_S = 60.0  # one step may take this long (a ZooKeeper ensemble restart waits ≤ 30 s)
SCRIPT_MARGIN_S = 30.0  # a scripted run may overrun its schedule and its last waits by this much
OPEN_TOTAL_S = 600.0  # a free-play session lasts at most this long
OPEN_IDLE_S = 180.0  # and ends by itself after this long without a click
CROWDED_IDLE_S = 45.0  # or this long, while other runs wait for a slot (the lab is full)
CLICKED_PAUSE_MS = 60_000  # the longest pause a click may cause
CHECK_S = 0.25


@dataclass(frozen=True)
class Limits:
    total_s: float  # from the run's start to its verdict
    idle_s: float | None = None  # open-ended runs: without a click
    step_s: float = STEP_LIMIT_S

    @classmethod
    def for_run(cls, scenario: Scenario, open_ended: bool) -> Limits:
        if open_ended:
            return cls(OPEN_TOTAL_S, OPEN_IDLE_S)
        waits = [
            s.timeout_ms or DEFAULT_ACQUIRE_TIMEOUT_MS for s in scenario.steps if s.do == "acquire"
        ]
        return cls(scenario.duration_ms / 1000 + max(waits, default=0) / 1000 + SCRIPT_MARGIN_S)

    def clicked_pause_ms(self, elapsed_s: float) -> int:
        """The longest pause a click may cause now: a minute, and never past the run's end."""
        left_ms = int((self.total_s - elapsed_s) * 1000)
        return max(0, min(CLICKED_PAUSE_MS, left_ms - 1000))


class Watchdog:
    """Checks a run's clock, its last click and its current step a few times a second."""

    def __init__(
        self,
        limits: Limits,
        elapsed_s: Callable[[], float],
        idle_s: Callable[[], float],
        busy_s: Callable[[], tuple[float, str]],
        on_limit: Callable[[str, bool], None],
        crowded: Callable[[], bool] = lambda: False,
    ) -> None:
        self.limits = limits
        self.elapsed_s = elapsed_s  # since the run started
        self.idle_s = idle_s  # since the last click (open-ended runs)
        self.busy_s = busy_s  # how long the current step has run, and which it is
        self.on_limit = on_limit  # (why, stuck): stuck means the engine stopped moving
        self.crowded = crowded  # whether other runs wait for a slot now
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="run-watchdog", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not threading.current_thread() and self._thread.ident is not None:
            self._thread.join(timeout=2)

    def _run(self) -> None:
        while not self._stop.wait(CHECK_S):
            why = self.reached()
            if why is not None:
                self.on_limit(*why)
                return

    def reached(self) -> tuple[str, bool] | None:
        """Which limit the run has reached, if any: (why, whether the engine is stuck)."""
        busy, step = self.busy_s()
        if busy > self.limits.step_s:
            return f"the lab is stuck: {step} has not returned for {busy:.1f} s", True
        if self.elapsed_s() > self.limits.total_s:
            return f"the run reached its time limit of {_duration(self.limits.total_s)}", False
        if self.limits.idle_s is None:
            return None
        idle = self.idle_s()
        if idle > self.limits.idle_s:
            return f"no click for {_duration(self.limits.idle_s)}: the session ended itself", False
        if idle > min(CROWDED_IDLE_S, self.limits.idle_s) and self.crowded():
            return (
                f"no click for {_duration(CROWDED_IDLE_S)} while other runs waited for the lab: "
                "the session ended itself to make room",
                False,
            )
        return None


def _duration(seconds: float) -> str:
    if seconds >= 120 and seconds % 60 == 0:
        return f"{seconds / 60:g} minutes"
    return f"{seconds:g} s"
