"""A run's outcome in words: its headline and tone, what became of the scenario's prediction,
the verdict's findings and the stale writes that did damage; and the labels of a What if…? fork
beside its original."""

from __future__ import annotations

from collections.abc import Mapping

from algorithms.summary import clock_time
from lockviz.narrator.words import items, number

# What stopped a stale write, by the kind of storage (see lockviz.catalogue.STORAGE_KINDS).
SAVED_BY = {
    "fenced": "fencing",
    "fenced_reads": "fencing (with fenced reads)",
    "sequencer": "the sequencer check",
    "cas": "compare-and-set",
    "plain": "the storage",
}
# What it stops, in docs/algorithms.md's words: a fenced or sequencer storage refuses late
# writes (their writer's lock had passed on), compare-and-set writes based on an old read.
STOPS = {
    "fenced": ("late write", "late writes"),
    "sequencer": ("late write", "late writes"),
    "cas": ("write based on an out-of-date read", "writes based on an out-of-date read"),
    "plain": ("stale write", "stale writes"),
}


def _stopped(verdict: Mapping[str, object], storage: str) -> str:
    """ "fencing stopped 1 late write"."""
    n = int(number(verdict.get("stale_writes_rejected") or 0))
    one, many = STOPS.get(storage, STOPS["plain"])
    return f"{SAVED_BY.get(storage, 'the storage')} stopped {n} {one if n == 1 else many}"


def no_lock_headline(verdict: Mapping[str, object], storage: str) -> tuple[str, str]:
    """A run without a lock service: did an update get lost?"""
    if verdict.get("data_corrupted"):
        return "✖ No lock, and an update was lost", "bad"
    if verdict.get("stale_writes_rejected"):
        return f"✔ No lock, but {SAVED_BY.get(storage, 'the storage')} kept every update", "good"
    return "✔ No lock, and no update was lost", "good"


# -- What if…? forks -------------------------------------------------------------------------


def fork_label(diverged_ms: float) -> str:
    """A fork's lane, beside its original: "What if…? (from 2.80 s)"."""
    return f"What if…? (from {diverged_ms / 1000:.2f} s)"


def divergence(diverged_ms: float) -> str:
    """The mark across both lanes where a fork parts from its original."""
    return f"what if…? parts from here ({diverged_ms / 1000:.2f} s)"


# -- verdicts ------------------------------------------------------------------------------


# Runs that ended without a verdict, by status: their headline.
_NOT_JUDGED = {
    "interrupted": ("⏹ The run was interrupted: the app stopped before it ended", "bad"),
    "cancelled": ("⏹ The run was cancelled: nobody watched it while it waited", "pending"),
    "failed": ("✖ The run failed", "bad"),
}


def _exclusion(violated: bool, election: bool) -> str:
    """Mutual exclusion, as a headline says it: in an election, whether two clients both
    believed they led."""
    if election:
        return "Two leaders at once" if violated else "One leader at a time"
    return "Mutual exclusion violated" if violated else "Mutual exclusion held"


def headline(
    verdict: Mapping[str, object] | None,
    error: str = "",
    status: str = "",
    storage: str = "fenced",
    election: bool = False,
) -> tuple[str, str]:
    """A run's outcome in one line, and its tone (good, warn, bad, pending); ``storage`` is the
    kind of storage the run wrote to (what saved the data, when something did); ``election``:
    the run was a leader election (lockviz.narrator.steps.electing): its clients lead."""
    if status in _NOT_JUDGED:
        return _NOT_JUDGED[status]
    if error:
        return _NOT_JUDGED["failed"]
    if not verdict:
        return ("… waiting for the lab" if status == "queued" else "… running live"), "pending"
    if verdict.get("inconclusive"):
        return f"⚠ Inconclusive: {verdict['inconclusive']}", "warn"
    if verdict.get("mutual_exclusion") == "none":
        return no_lock_headline(verdict, storage)
    return lock_headline(verdict, storage, election)


def lock_headline(
    verdict: Mapping[str, object], storage: str, election: bool = False
) -> tuple[str, str]:
    """A judged run with a lock in play: did mutual exclusion hold (in an election: was there
    one leader at a time), was an update lost (data corrupted, docs/algorithms.md), and what
    stopped the stale writes that did not land."""
    violated = verdict.get("mutual_exclusion") == "violated"
    said = _exclusion(violated, election)
    if verdict.get("data_corrupted"):  # an update was lost (docs/algorithms.md)
        if violated:
            return f"✖ {said}, data corrupted", "bad"
        return f"✖ {said}, but data corrupted", "bad"  # a write outside the lock
    through = verdict.get("stale_writes_accepted")  # landed, but lost no update
    if violated:
        if verdict.get("stale_writes_rejected"):
            saved = SAVED_BY.get(storage, "the storage")
            return f"⚠ {said} — {saved} saved the data", "warn"
        if through:
            return f"⚠ {said} — a stale write got through, no update lost", "warn"
        return f"⚠ {said}", "warn"
    if verdict.get("liveness") == "stuck":
        return f"⚠ {said}, but the lock is stuck", "warn"
    if verdict.get(
        "stale_writes_rejected"
    ):  # the old holder still wrote: only the check stopped it
        return f"✔ {said} — {_stopped(verdict, storage)}", "good"
    if through:
        return f"⚠ {said}, but a stale write got through (no update lost)", "warn"
    return f"✔ {said}", "good"


def expectation(
    verdict: Mapping[str, object] | None, expect_met: bool | None, mismatches: list[str]
) -> tuple[str, str] | None:
    """What became of the scenario's prediction, and its tone (met, missed, unjudged); None
    when there is nothing to say (no verdict, or no prediction)."""
    if verdict and verdict.get("inconclusive"):
        return (
            "⚠ Not judged: the machine fell behind and this run could not keep the story the "
            "scenario predicts. Run it again when the lab is quieter.",
            "unjudged",
        )
    if expect_met is None:
        return None
    if expect_met:
        return "✔ As the scenario predicted.", "met"
    return f"✖ Not what the scenario predicted: {'; '.join(mismatches)}", "missed"


def facts(verdict: Mapping[str, object], storage: str = "fenced") -> list[tuple[str, str]]:
    """The verdict's findings, each as (what, how much), in the order the pages list them."""
    overlaps = "; ".join(
        f"{' & '.join(map(str, items(o['clients'])))} from {number(o['start_ms']):.0f} to "
        f"{number(o['end_ms']):.0f} ms"
        for o in items(verdict.get("overlaps") or [])
        if isinstance(o, Mapping)
    )
    found = [
        ("Two holders at once", overlaps or "never"),
        ("Stale writes accepted", str(verdict.get("stale_writes_accepted", 0))),
        (f"Stale writes rejected by {SAVED_BY.get(storage, 'the storage')}",
         str(verdict.get("stale_writes_rejected", 0))),
    ]  # fmt: skip
    if verdict.get("mutual_exclusion") == "none":
        found[0] = ("Two holders at once", "no lock in play")
    if verdict.get("lost_updates"):
        found.append(("Updates lost", _lost_facts(verdict)))
    if verdict.get("acquire_failures"):
        found.append(("Acquires that gave up", str(verdict["acquire_failures"])))
    if verdict.get("stuck_clients"):
        stuck = ", ".join(map(str, items(verdict["stuck_clients"])))
        found.append(("Stuck behind a crashed holder", stuck))
    if verdict.get("wakeups"):
        found.append(("Wake-ups of waiting clients", str(verdict["wakeups"])))
    return found


def _lost_facts(verdict: Mapping[str, object]) -> str:
    """The lost updates, each with whose write took its place (and both stamps, when stamped)."""
    told = []
    for lost in items(verdict.get("lost") or []):
        if not isinstance(lost, Mapping):
            continue
        words = f"{lost.get('client')}'s {lost.get('value')} for "
        words += f"{lost.get('by')}'s {lost.get('by_value')}"
        if isinstance(lost.get("stamp"), int) and isinstance(lost.get("by_stamp"), int):
            words += f" (stamped {clock_time(lost['stamp'])} < {clock_time(lost['by_stamp'])})"
        told.append(words)
    return "; ".join(told) or str(verdict.get("lost_updates"))


def damage(verdict: Mapping[str, object] | None) -> list[dict[str, object]]:
    """Each stale write the storage accepted, and each update a last-write-wins storage dropped,
    as a link to the moment it happened."""
    found: list[dict[str, object]] = []
    for lost in items((verdict or {}).get("lost") or []):
        if isinstance(lost, Mapping) and lost.get("why") == "stamp":
            found.append(
                {
                    "seq": lost.get("seq"),
                    "text": f"{lost.get('client')}'s newer {lost.get('value')!s} was dropped for "
                    f"{lost.get('by')}'s {lost.get('by_value')!s}, stamped later by a clock "
                    "that ran ahead: see it at the replica",
                }
            )
    for w in items((verdict or {}).get("writes") or []):
        if isinstance(w, Mapping) and w.get("stale") and w.get("accepted"):
            after = f" after {w['superseded_by']} took the lock" if w.get("superseded_by") else ""
            found.append(
                {
                    "seq": w.get("seq"),
                    "text": f"{w.get('client')}'s stale write {w.get('value')!s} landed{after}: "
                    "see it at the storage",
                }
            )
    return found
