"""A verdict in words a learner can read next to the diagram: one or two sentences, what
saved the data by the kind of storage, a last-write-wins loss with both writers' clocks."""

from __future__ import annotations

from algorithms.lost_updates import LostUpdate
from algorithms.verdict import Verdict

# What stopped the stale writes, by the kind of storage (the summary's second sentence).
SAVED_BY = {
    "fenced": "Fencing saved the data: the storage rejected {n} stale write{s}.",
    "fenced_reads": "Fencing saved the data: a read had carried the new holder's token to the "
    "storage first, and it rejected {n} stale write{s}.",
    "sequencer": "The sequencer check saved the data: the storage asked the lock service and "
    "rejected {n} stale write{s}.",
    "cas": "Compare-and-set saved the data: the storage rejected {n} write{s} based on an "
    "out-of-date read.",
    "plain": "The storage rejected {n} stale write{s}.",
}


# Between an inconclusive summary's why and what the run showed (see :func:`unjudged`).
SHOWED = " What it showed: "


def summarize(verdict: Verdict, storage: str = "fenced") -> str:
    """One or two sentences a learner can read next to the diagram."""
    told = _told(verdict, storage)
    if verdict.inconclusive:
        return (
            f"Inconclusive: {verdict.inconclusive}, so this run could not keep its story and "
            f"the scenario's prediction was not judged.{SHOWED}{told}"
        )
    return told


def unjudged(summary: str) -> tuple[str, str]:
    """A summary cut into why it was not judged ("" for a judged run) and what the run showed;
    the presenter view shows only the second, under a headline that already says the first."""
    why, found, told = summary.partition(SHOWED)
    return (why + found, told) if found else ("", summary)


def _told(verdict: Verdict, storage: str) -> str:
    first = _opening(verdict)
    dropped = [lost for lost in verdict.lost if lost.why == "stamp"]
    if dropped:
        first += " " + _dropped(dropped[0], len(dropped))
    n = verdict.stale_writes_accepted
    if verdict.data_corrupted and n:
        return f"{first} Data corrupted: an update was lost (the storage accepted {n} stale " + (
            f"write{'s' * (n != 1)})."
        )
    if dropped:
        return first
    if verdict.data_corrupted:
        return f"{first} Data corrupted: an update was lost."
    if storage == "crdt" and not verdict.lost:
        return f"{first} No update was lost: the replicas merged every acknowledged write."
    if n:
        first += (
            f" The storage accepted {n} stale write{'s' * (n != 1)}, but no update was lost: "
            "nobody had written since its writer read."
        )
    if verdict.stale_writes_rejected:
        n = verdict.stale_writes_rejected
        saved = SAVED_BY.get(storage, SAVED_BY["plain"])
        return f"{first} {saved.format(n=n, s='s' * (n != 1))}"
    return first


def _opening(verdict: Verdict) -> str:
    """The summary's first sentence: mutual exclusion, and liveness if it failed."""
    if verdict.mutual_exclusion == "none":
        first = "No lock was in play: every client went straight to the storage."
    elif verdict.mutual_exclusion == "held":
        first = "Mutual exclusion held: no two clients ever believed they held the lock at once."
    else:
        worst = max(verdict.overlaps, key=lambda o: o.end_ms - o.start_ms)
        seconds = (worst.end_ms - worst.start_ms) / 1000
        first = (
            f"Mutual exclusion violated: {worst.clients[0]} and {worst.clients[1]} both "
            f"believed they held the lock for {seconds:.2f} s."
        )
    if verdict.stuck_clients:
        who = " and ".join(verdict.stuck_clients)
        first += f" Liveness failed: {who} waited in vain for a lock held by a crashed client."
    return first


def _dropped(lost: LostUpdate, n: int) -> str:
    """A last-write-wins loss in words, with both writers' timestamps."""
    more = f" ({n} updates lost in all)" if n > 1 else ""
    return (
        f"Update lost: {lost.client}'s {lost.value} was acknowledged, then dropped for "
        f"{lost.by}'s {lost.by_value}, written before it but stamped later "
        f"({clock_time(lost.stamp)} < {clock_time(lost.by_stamp)}, by each writer's clock){more}."
    )


def clock_time(ms: int | None) -> str:
    """A wall-clock stamp (ms since the epoch) as a time of day, UTC: ``09:41:07.250``."""
    if ms is None:
        return "?"
    seconds, millis = divmod(int(ms), 1000)
    return f"{seconds // 3600 % 24:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{millis:03d}"
