"""What an exercise asks of a run, read from the run's own verdict (algorithms.checker).

Pure functions of a stored verdict: nothing here asks a server or trusts a client. A goal is
met or not; a verdict that is *inconclusive* (the machine could not keep the schedule) meets
and misses nothing: :func:`judge` says so, and the learner runs again.

Break it asks for damage, each a reading of the verdict:

* ``two_holders``: the checker found two clients believing they held the lock at once
  (``mutual_exclusion: violated``);
* ``stale_write``: the storage accepted a stale write (``stale_writes_accepted`` ≥ 1);
* ``lost_update``: the checker found an update lost (``data_corrupted``): an accepted write
  overwrote an update its writer never saw, or a replica dropped an acknowledged one. Someone's
  work is gone, not only late. The rule is the checker's (algorithms.checker,
  ``overwrites_unseen`` and algorithms.lost_updates), read here and written nowhere else.

Fix it asks for ``safe``: no stale write accepted (so no update lost: every stale write was
refused by the storage, or never sent because its client checked its lease), and still live:
no acquire gave up and nobody waited in vain for a crashed holder. Two holders whose overlap
harmed no data are safe by this reading: the storage is what a lock protects.

Predict it asks which :data:`OUTCOMES` the run shows: the first that applies, in that order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

BreakGoal = Literal["two_holders", "stale_write", "lost_update"]
Goal = Literal["two_holders", "stale_write", "lost_update", "safe"]
Outcome = Literal["stuck", "corrupted", "refused", "two_holders", "held"]
Verdict = Mapping[str, object]

# What each goal asks, as the exercise page says it.
GOALS: dict[str, str] = {
    "two_holders": "two clients hold the lock at once (the checker finds mutual exclusion "
    "violated)",
    "stale_write": "the storage accepts a stale write",
    "lost_update": "an update is lost: the storage accepts a write that overwrites another "
    "client's update its writer never saw (the checker finds the data corrupted)",
    "safe": "the data is safe (no stale write accepted, no update lost) and the run is still "
    "live (every acquire succeeds, nobody waits in vain)",
}

# The outcomes a prediction chooses among, in the order :func:`outcome` tries them.
OUTCOMES: dict[str, str] = {
    "stuck": "A client waits in vain: the lock stays with a holder that crashed",
    # "corrupted" names any accepted stale write; the verdict's data_corrupted is the narrower lost
    # update (docs/algorithms.md, "Stale writes"): the words say only what both mean.
    "corrupted": "The storage accepts a stale write",
    "refused": "The storage refuses a stale write, and accepts none",
    "two_holders": "Two clients hold the lock at once, but no stale write reaches the storage",
    "held": "The lock does its job: one holder at a time, and no stale write",
}


@dataclass(frozen=True)
class Judged:
    """What a run's verdict makes of an attempt: ``met`` is None when it was inconclusive."""

    met: bool | None
    why: str  # one sentence: what the run showed, or why it could not be judged


def _count(verdict: Verdict, key: str) -> int:
    value = verdict.get(key)
    return value if isinstance(value, int) else 0


def two_holders(verdict: Verdict) -> bool:
    return verdict.get("mutual_exclusion") == "violated"


def stale_write(verdict: Verdict) -> bool:
    return _count(verdict, "stale_writes_accepted") > 0


def lost_update(verdict: Verdict) -> bool:
    """The checker's finding: an update was lost (its ``data_corrupted``)."""
    return verdict.get("data_corrupted") is True


def live(verdict: Verdict) -> bool:
    return _count(verdict, "acquire_failures") == 0 and verdict.get("liveness", "ok") == "ok"


def safe(verdict: Verdict) -> bool:
    return not stale_write(verdict) and live(verdict)


CHECKS = {
    "two_holders": two_holders,
    "stale_write": stale_write,
    "lost_update": lost_update,
    "safe": safe,
}


def outcome(verdict: Verdict) -> Outcome:
    """The first of :data:`OUTCOMES` that the verdict shows."""
    if verdict.get("liveness") == "stuck":
        return "stuck"
    if stale_write(verdict):
        return "corrupted"
    if _count(verdict, "stale_writes_rejected") > 0:
        return "refused"
    if two_holders(verdict):
        return "two_holders"
    return "held"


def judge(verdict: Verdict | None, goal: str) -> Judged:
    """Whether ``verdict`` meets ``goal`` (a goal, or ``predict:<outcome>``)."""
    if not verdict:
        return Judged(None, "the run ended without a verdict: run it again")
    why = verdict.get("inconclusive")
    if isinstance(why, str) and why:
        return Judged(None, f"inconclusive: {why}; it counts neither way, so run it again")
    if goal.startswith("predict:"):
        shown = outcome(verdict)
        return Judged(shown == goal.removeprefix("predict:"), f"the run showed: {OUTCOMES[shown]}")
    met = CHECKS[goal](verdict)
    return Judged(
        met, ("it did: " if met else "not this time: it did not show that ") + GOALS[goal]
    )
