"""Events that are not messages, in the words their own fields decide: each is a sayer made by
:func:`phrased` from ``(phrase, label)`` out of its kind's model, listed by kind in
:data:`~lockviz.narrator.sayers.SAYERS`; a link's words are :func:`link_phrase`, which
:mod:`.events` adds to when one click cut several links. The events whose words need what came
before (a grant, a lost lock, a key a server ended, a note) are said by :mod:`.events`.

Each reads its kind's model (:mod:`lockviz.lab.events`) as the narrator parsed it: a field an
imported event lacks is ``None`` (see :func:`lockviz.lab.events.lenient`), and is said as such."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import lockviz.lab.events as kinds
from lockviz.catalogue import ZOOKEEPER, server_kind
from lockviz.lab.events import BaseEvent
from lockviz.narrator.memory import Memory
from lockviz.narrator.rows import Typed
from lockviz.narrator.steps import step_number
from lockviz.narrator.words import Said, number, plain_error, signed_ms

M = TypeVar("M", bound=BaseEvent)
Phrase = Callable[[M], tuple[str, str]]  # (what happened, its diagram label)
Saying = Callable[[Memory, M], Said]  # a kind's sayer, from its model


def phrased(words: Phrase[M], own: bool = False) -> Saying[M]:
    """A sayer from an event's own words: the actor is the sentence's subject, but the lab's;
    with ``own``, the phrase is about something the actor has ("redis-3's wall clock …")."""

    def say(memory: Memory, e: M) -> Said:
        phrase, label = words(e)
        who = str(e.actor)
        subject = f"{who}'s" if own else who
        return Said(phrase, phrase if who == "lab" else f"{subject} {phrase}", label)

    say.__doc__ = words.__doc__
    return say


def owned(words: Phrase[M]) -> Saying[M]:
    """:func:`phrased` for a phrase about something the actor has."""
    return phrased(words, own=True)


def worded(
    field: Callable[[M], object], phrase: str, label: str = "", own: bool = False
) -> Saying[M]:
    """A sayer whose words are fixed but for one field of the event, put where ``{}`` is."""

    def words(e: M) -> tuple[str, str]:
        value = field(e)
        return phrase.format(value), label.format(value)

    return phrased(words, own)


def _unknown(memory: Memory, e: BaseEvent) -> Said:
    kind, who = e.kind, str(e.actor)
    return Said(kind, kind if who == "lab" else f"{who} {kind}", "")


# A kind this narrator does not know (an import's): its name, and no label.
unknown: Typed[BaseEvent] = Typed(BaseEvent, _unknown)


def _reason(reason: object) -> str:
    """A client's own reason as it is, a library's error in plain words."""
    text = str(reason or "?")
    return plain_error(text) if "connection" in text or "Error" in text else text


@phrased
def released(e: kinds.Released) -> tuple[str, str]:
    if e.ok:
        return "released", ""
    reason = e.reason if "reason" in e.model_fields_set else "the lock was not ours"
    return f"released, but {reason}", ""


@phrased
def crashed(e: kinds.Crashed) -> tuple[str, str]:
    server = server_kind(str(e.actor)) is not None
    return "CRASHED (kill -9)", "kill -9" if server else "crashed (SIGKILL)"


@phrased
def paused(e: kinds.Paused) -> tuple[str, str]:
    ms = f" {e.ms} ms" if e.ms is not None else ""
    if server_kind(str(e.actor)) is not None:  # a server: SIGSTOP, it answers nothing
        return f"FROZEN (SIGSTOP) for {e.ms} ms: it answers nothing", f"frozen{ms}"
    return f"FROZEN (SIGSTOP) for {e.ms} ms", f"GC pause (SIGSTOP){ms}"


@owned
def clock_jumped(e: kinds.ClockJumped) -> tuple[str, str]:
    total = signed_ms(e.offset_ms)
    return f"wall clock jumped {signed_ms(e.ms)} (offset now {total})", (
        f"clock {signed_ms(e.ms or 0)}"
    )


@phrased
def restarted(e: kinds.Restarted) -> tuple[str, str]:
    """What the server kept, in the catalogue's words for its kind and persistence."""
    kind = server_kind(str(e.actor))
    kept = kind.kept(e.persistence) if kind else None
    if kept is None:
        return "restarted", "restarted"
    return f"restarted: {kept.text}", f"restarted ({kept.label})"


@phrased
def shifted(e: kinds.ScheduleShifted) -> tuple[str, str]:
    late = f"{number(e.late_ms or 0):.0f} ms"
    own = number(e.own_ms or 0)
    behind = f"the machine fell behind by {number(e.late_ms or 0) - own:.0f} ms"
    behind += f" at {e.what}"
    if own:  # a server's boot after a restart: the step's own time, on any machine
        behind = f"{e.what}, took {late} ({own:.0f} ms of it its server booting)"
    if e.kept is not False:
        return f"{behind}: the rest of the schedule moves {late} later, keeping its intervals", (
            f"schedule +{late}"
        )
    at = f"{number(e.fixed_ms or 0):.0f} ms"
    fixed = {
        "lease": f"{e.fixed_by}'s lease ends at {at}",
        "wait": f"{e.fixed_by}'s wait for the lock ends at {at}",
        "step": f"{e.fixed_by} already came at {at}",
        "timeout": f"{e.fixed_by} stopped waiting for it at {at}",
    }.get(str(e.fixed), f"something came at {at}")
    if e.reply:
        return (
            f"the machine was too busy to answer in time: {e.what}, where a server on "
            f"this machine answers in a few ms. {fixed[0].upper()}{fixed[1:]}, so when it took "
            "effect is not known: this run cannot keep its story",
            "story lost",
        )
    return (
        f"{behind}: the schedule moves {late} later, but {fixed}, and {e.moved} now "
        f"comes after it ({number(e.moved_to_ms or 0):.0f} ms): this run cannot keep its "
        "story",
        "story lost",
    )


def link_phrase(e: kinds.Link) -> tuple[str, str]:
    who, mode = e.actor, e.mode
    if e.peers:
        peers = ", ".join(map(str, e.peers))
        if mode == "pass":
            return f"links to its peers {peers}: healed", f"⇹ {peers} healed"
        return f"links to its peers {peers}: {mode}", f"cut off from {peers} ({mode})"
    node = e.node
    if mode == "pass":
        return f"link to {node} healed", f"{who} ⇹ {node} healed"
    if mode == "delay":
        jitter = f" ± {e.jitter_ms}" if e.jitter_ms else ""
        return f"link to {node} delayed {e.ms}{jitter} ms", (
            f"{who} ⇹ {node} delayed {e.ms}{jitter} ms"
        )
    held = "connections are reset" if mode == "reset" else "bytes are held, nothing arrives"
    return f"link to {node} cut ({mode}): {held}", f"{who} ⇹ {node} cut ({mode})"


def session_words(state: str, server: object, keeps: object) -> tuple[str, str]:
    """A session's state as the client library tells it (see the ``session`` kind)."""
    if state == "SUSPENDED" and keeps is True:
        return (
            "ZooKeeper connection SUSPENDED: the session may still live, and this client keeps "
            "acting as the holder until it learns otherwise",
            "SUSPENDED · keeps the lock",
        )
    if state == "SUSPENDED":
        return (
            "ZooKeeper connection SUSPENDED: it cannot tell whether its session still lives",
            "SUSPENDED",
        )
    if state == "RECONNECTED":
        where = f" to {server}" if server else ""
        return (
            f"RECONNECTED{where}: the same session, so its ephemeral nodes are still there",
            f"RECONNECTED{where}",
        )
    if state == "LOST":
        return "ZooKeeper session LOST: it expired, and its ephemeral nodes are gone", "LOST"
    if state == "CONNECTED":
        return "CONNECTED with a new session (the old one was lost)", "new session"
    return f"ZooKeeper session {state}", state.lower()


@phrased
def role(e: kinds.Role) -> tuple[str, str]:
    """A server's new part: promoted, demoted, elected leader."""
    part, previous, term = str(e.role), e.previous, e.term
    if part == "primary":
        by = f", promoted by {e.by}" if e.by else ""
        epoch = f" (epoch {term})" if term is not None else ""
        instead = f" in place of {previous}" if previous else ""
        return f"is the PRIMARY now{instead}{by}{epoch}", f"PRIMARY{epoch}"
    if part == "replica":
        return (
            f"is a replica of {e.of} now: Sentinel reconfigured it, and it copies its new "
            "primary's data: any key of its own that the new primary never had is gone",
            f"replica of {e.of}",
        )
    if part == "leader":
        after = f" after {previous}" if previous else ""
        zk = server_kind(str(e.actor)) is ZOOKEEPER
        group, count = ("ensemble", "epoch") if zk else ("cluster", "term")
        when = f" ({count} {term})" if term is not None else ""
        held = ""
        if e.leases:
            held = "; leases as it has them: " + ", ".join(
                f"{who} {number(ms) / 1000:g} s" for who, ms in sorted(e.leases.items())
            )
        return f"LEADS the {group} now{after}{when}{held}", f"LEADER{when}"
    return f"is {part} now", part


@phrased
def voted(e: kinds.Voted) -> tuple[str, str]:
    leader, term = e.leader, e.term
    if leader == e.actor:
        return (
            f"asks the other Sentinels to elect it to lead the failover, and votes for itself "
            f"(epoch {term})",
            f"votes for itself (epoch {term})",
        )
    return f"votes for {leader} to lead the failover (epoch {term})", f"vote → {leader}"


@phrased
def suspected(e: kinds.Suspected) -> tuple[str, str]:
    node, quorum = e.node, e.quorum
    if e.cleared:
        how = "ODOWN" if e.objective else "SDOWN"
        return f"no longer thinks {node} is down ({how} cleared)", f"{how} {node} cleared"
    if e.objective:
        agree = " ({} agree, {} needed)".format(*str(quorum).split("/", 1)) if quorum else ""
        return (
            f"hears from enough Sentinels{agree} that {node} is down: objectively down (ODOWN), "
            "a failover may start",
            f"ODOWN {node}" + (f" ({quorum})" if quorum else ""),
        )
    return f"thinks {node} is down: no valid answer in time (SDOWN)", f"SDOWN {node}"


@phrased
def replicated(e: kinds.Replicated) -> tuple[str, str]:
    holder = e.holder
    return (
        f"received {holder}'s lock key from its primary, which answered {holder} without waiting "
        "for it (asynchronous replication)",
        f"has {holder}'s key",
    )


@phrased
def acquire_failed(e: kinds.AcquireFailed) -> tuple[str, str]:
    return f"gave up acquiring: {e.reason}", f"gave up: {_reason(e.reason)}"


@phrased
def extended(e: kinds.Extended) -> tuple[str, str]:
    return f"extended to {e.ttl_ms} ms" if e.ok else "extend failed", ""


@phrased
def resumed(e: kinds.Resumed) -> tuple[str, str]:
    return "thawed (SIGCONT)" + (f": {e.why}" if e.why else ""), "resumed (SIGCONT)"


@phrased
def step_refused(e: kinds.StepRefused) -> tuple[str, str]:
    return (
        f"could not take step {step_number(e.index)}: {e.why}",
        f"refused: {e.why}",
    )


@phrased
def releasing(e: kinds.Releasing) -> tuple[str, str]:
    return "leaves its critical section and releases", ""


# Words that are fixed but for one field.
ending: Saying[kinds.Ending] = worded(lambda e: e.why, "the run ends now: {}", "ending: {}")
clock_rate: Saying[kinds.ClockRate] = worded(
    lambda e: e.rate, "own clock now runs at ×{}", "clock ×{}", own=True
)
run_started: Saying[kinds.RunStarted] = worded(lambda e: e.title, "run started: {}")
run_failed: Saying[kinds.RunFailed] = worded(lambda e: e.error, "run FAILED: {}", "run failed: {}")
run_interrupted: Saying[kinds.RunInterrupted] = worded(lambda e: e.why, "run INTERRUPTED: {}")
run_cancelled: Saying[kinds.RunCancelled] = worded(lambda e: e.why, "run cancelled: {}")
renewal_started: Saying[kinds.RenewalStarted] = worded(
    lambda e: e.interval_ms, "watchdog renews every {} ms"
)
