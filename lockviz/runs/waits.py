"""How long a run waited for the lab, and behind which runs: read from the runs' own rows.

A run is queued when it is made (``created``) and leaves the queue when the lab takes it
(``started``: set by admission, lockviz.runs.admission, or by the lab host that took it,
lockviz.runs.host). The runs it waited behind are those that held the lab or went into it
first while it waited: taken before it, and not finished before it was made (a presenter's run
that went ahead of the queue counts too). Each is named by whose share of the lab it took
(lockviz.shares.runs): the class of a room (its allowance), the same owner, the same address,
or other visitors; an address itself is never said. The run page says it under the verdict
(templates/lockviz/_verdict.html, through the ``waited`` filter).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from django.db.models import Q

from lockviz.models import Run

MIN_S = 1.0  # a shorter wait is not told: the lab took it at once
MAX_AHEAD = 500  # runs read to say whose they were (a lab holds far fewer at once)


@dataclass(frozen=True)
class Waited:
    """How long a run waited for the lab, and whose runs were ahead of it: (whose, how many),
    the most first."""

    seconds: float
    behind: tuple[tuple[str, int], ...]

    @property
    def sentence(self) -> str:
        took = f"It waited {self.seconds:.0f} s for the lab"
        if not self.behind:
            return f"{took}; no other run was in it or ahead of it (the machine was busy)."
        n = sum(count for _, count in self.behind)
        parts = ", ".join(f"{count} {whose}" for whose, count in self.behind)
        return f"{took}, behind {n} run{'s' * (n != 1)}: {parts}."


def _whose(run: Run, owner: str, address: str, allowance: str) -> str:
    if allowance:
        return f"of the class in room {allowance}"
    if run.owner and owner == run.owner:
        return "started by the same browser"
    if run.address and address == run.address:
        return "from the same address"
    return "of other visitors"


def of(run: Run) -> Waited | None:
    """How long ``run`` waited and behind whom; None if it has not left the queue, left it at
    once, or ran before the lab kept when runs left it."""
    if run.started is None or run.created is None:
        return None
    seconds = (run.started - run.created).total_seconds()
    if seconds < MIN_S:
        return None
    ahead = (
        Run.objects.filter(started__isnull=False, started__lt=run.started)
        .filter(Q(finished__isnull=True) | Q(finished__gt=run.created))
        .exclude(pk=run.pk)
        .values_list("owner", "address", "allowance")[:MAX_AHEAD]
    )
    counted = Counter(_whose(run, *row) for row in ahead)
    return Waited(seconds, tuple(counted.most_common()))
