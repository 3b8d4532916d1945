"""The points a run's story is made of (:mod:`lockviz.lab.story`): a timer running elsewhere
(a lease on a server, a client's wait), a moment of the schedule already done, a point a shift
does not move, and a moment a shift carried across one (what ``schedule_shifted`` tells)."""

from __future__ import annotations

from dataclasses import dataclass

# An event's time is rounded to 0.1 ms (lockviz.lab.recording.Recording.record): a step recorded at
# 300.5 ms may have been done at 300.46, before a command held up until 300.47 ms. Seen: a crash
# that landed on alice's held-up acquire was judged to come after it, and the run told bob's
# grant as the story's with confidence (about one run in six under a CPU hog).
STEP_RESOLUTION_MS = 0.1


@dataclass(frozen=True)
class Timer:
    kind: str  # "lease" | "wait"
    client: str
    end_ms: float  # on the run's clock: when it ended, or is expected to (KEPT_ALIVE: no end)
    node: str = ""  # where a lease runs (a Redlock grant runs one on each node that said yes)
    ttl_ms: float = 0.0  # a lease's length: a kept-alive one counts it down once it stops
    renewed_ms: float = 0.0  # when it was last renewed: its grant, or a watchdog's extend
    keeper: str = ""  # what keeps it alive: "session", "watchdog", or "" (a lease is a lease)
    early_ms: float = 0.0  # how much sooner than ``end_ms`` it may end (an estimated end)
    released: bool = False  # ended by its client's own release (a command of its own)


@dataclass(frozen=True)
class Mark:
    """A point of the story that a shift does not move: a timer's end, or a step already taken."""

    kind: str  # "lease" | "wait" | "step"
    who: str  # whose lease or wait ("alice"); which step ("step 2 (pause)", "alice's thaw")
    at_ms: float
    early_ms: float = 0.0  # how much sooner it may really be (an estimated end)
    # When it was due, if that is what orders it: only a moment due before it can cross it (one
    # due after it that comes after it is in the script's order, however late both came)
    due_ms: float | None = None


@dataclass(frozen=True)
class Done:
    """A moment of the schedule already done: a step, or a thaw (the timers' own thread)."""

    at_ms: float  # when it was done (a fault: when it landed)
    what: str  # "step 2 (pause)", "alice's thaw"
    index: int | None  # the scenario step it is (None: a thaw)
    actor: str  # who does it or has it done to them: a client, a node, ""
    command: bool  # a client's own command (queued in its process)
    due_ms: float  # when it was due on the run's clock (the shift included)


@dataclass(frozen=True)
class Crossing:
    """A moment of the story that a shift moved across a point that stays where it was."""

    fixed: Mark
    moved: str  # the moment that moved: "step 4 (acquire)", "alice's thaw"
    due_ms: float  # when it was due before the shift
    moved_to_ms: float  # and after it

    def as_details(self) -> dict[str, str | float]:
        return {
            "fixed": self.fixed.kind,
            "fixed_by": self.fixed.who,
            "fixed_ms": round(self.fixed.at_ms, 1),
            "moved": self.moved,
            "moved_from_ms": round(self.due_ms, 1),
            "moved_to_ms": round(self.moved_to_ms, 1),
        }
