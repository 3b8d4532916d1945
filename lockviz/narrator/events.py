"""Events that are not messages and whose words need what came before: a grant (its lease and
token by the backend's own names), a lost lock (when the server ended the session), a key a
server ended (whose, and whether its own release did it), a note that undoes a refused round, a
click that cut several links, and the run's end. Each reads its kind's model (a row of
:mod:`.sayers`); the events whose own fields decide their words are in :mod:`.phrases`."""

from __future__ import annotations

from lockviz.lab.events import (
    Deleted,
    Expired,
    Granted,
    Link,
    Lost,
    Note,
    RunFinished,
    Session,
    Step,
    Woken,
    as_json,
)
from lockviz.narrator.memory import Memory
from lockviz.narrator.phrases import link_phrase, session_words
from lockviz.narrator.steps import click, step_number
from lockviz.narrator.words import Said, duration, seconds


def say_granted(memory: Memory, e: Granted) -> Said:
    who = str(e.actor)
    label, short = _granted_label(memory, e)
    return Said(_granted(memory, e), f"{who} {_granted(memory, e)}", label, short=short)


def _granted(memory: Memory, e: Granted) -> str:
    token = memory.token(e.token)
    token = "no fencing token" if token == "no token" else token
    valid = f", valid {e.validity_ms} ms" if e.validity_ms else ""
    held = _held(memory, e, exact=True)
    if memory.election:
        return f"is elected and believes it leads ({token}, {held})"
    return f"believes it holds the lock ({token}, {held}{valid})"


def _held(memory: Memory, e: Granted, exact: bool = False) -> str:
    """What the server counts down for this grant, in the catalogue's words for the lock:
    "lease 2 s", "session timeout 1.5 s", "idle-in-transaction timeout 2 s", "no lease" (in
    milliseconds, ``exact``, as a sentence gives them)."""
    ttl, lock = e.ttl_ms, memory.lock
    words = lock.ttl if lock is not None else "lease"
    if not ttl or not words:
        return "no lease"
    return f"{words} {ttl} ms" if exact else f"{words} {duration(ttl)}"


def _granted_label(memory: Memory, e: Granted) -> tuple[str, str]:
    if memory.backend == "redlock" or e.nodes:
        nodes = e.nodes or []
        got = f"{len(nodes)} of {len(memory.nodes) or '?'}"
        return f"{_held(memory, e)} on {got}\nno fencing token", got
    held = _held(memory, e)
    token = memory.token(e.token)
    if memory.election:
        return f"leads · {token}\n{held}", f"leads · {token}"
    return f"{held} · {token}", token if token != "no token" else held


def say_session(memory: Memory, e: Session) -> Said:
    """A ZooKeeper session's state. A run recorded before the client told RECONNECTED apart
    says CONNECTED for it: after SUSPENDED (no LOST between) that is the same session."""
    who, state = str(e.actor), str(e.state)
    if state == "CONNECTED" and memory.sessions.get(who) == "SUSPENDED":
        state = "RECONNECTED"
    phrase, label = session_words(state, e.server, e.keeps)
    return Said(phrase, f"{who} {phrase}", label)


def say_woken(memory: Memory, e: Woken) -> Said:
    text = f"woken by its watch: {e.by}"
    who = str(e.actor)
    return Said(text, f"{who} {text}", f"watch fired: {e.by}", short="watch fired")


def say_step(memory: Memory, e: Step) -> Said:
    words = click(as_json(e), memory.election)  # a click is said from a step as scenarios hold it
    text = f"step {step_number(e.index)}: {words}"
    if e.say:
        text += f" — {e.say}"
    return Said(text, text, words)


def say_note(memory: Memory, e: Note) -> Said:
    """A client's note; the one that undoes a refused round says why it was refused."""
    text, who = str(e.text), str(e.actor)
    full = text if text.startswith(f"{who} ") else f"{who}: {text}"  # its subject said once
    state = memory.rounds.get(who)
    if state is None or not state.open or "undoing" not in text:
        return Said(text, full, text)
    nodes = len(memory.nodes)
    quorum = nodes // 2 + 1 if memory.nodes else 0
    label = (
        f"{state.yes} of {nodes} said yes, {quorum} needed: undo everywhere"
        if state.yes < quorum
        else "a majority said yes, too late: undo everywhere"
    )
    return Said(text, full, label, short=f"{state.yes} of {nodes}",
                round=state.number, fold=memory.fold(who))  # fmt: skip


def say_lost(memory: Memory, e: Lost) -> Said:
    who = str(e.actor)
    reason = str(e.reason or "lock gone")
    ended = memory.expired.get(who)
    if memory.backend == "zookeeper" and ended is not None:
        text = (
            f"learned it lost the lock: ZooKeeper had expired its session at "
            f"{seconds(ended)} (it noticed: {reason.split(':')[0]})"
        )
        return Said(text, f"{who} {text}", "lost: session expired", short="lost")
    if "suspended" in reason:  # the client's own words: "connection suspended: my lock may be gone"
        gives = "gives up leading" if memory.election else "gives the lock up"
        text = f"{gives}: its connection is suspended, and it cannot tell whether its session lives"
        return Said(text, f"{who} {text}", "lost: connection suspended", short="lost")
    if "expired" in reason:
        label = "lost: " + ("session expired" if "session" in reason else "lease expired")
    else:
        label = f"lost: {reason.split(':')[0]}"
    lost = "no longer leads" if memory.election else "lost the lock"
    text = f"learned it {lost}: {reason}"
    return Said(text, f"{who} {text}", label, short="lost")


def say_server_end(memory: Memory, e: Expired | Deleted) -> Said:
    """A server ended a holder's key: ``expired`` or ``deleted``."""
    who, holder = str(e.actor), str(e.holder or "?")
    ends = memory.lock.ends if memory.lock is not None else "lease"
    believes = "believes it leads" if memory.election else "believes it holds"
    gap = f"{believes}\n({ends or 'lock'} gone)"
    state = memory.rounds.get(holder)  # a key left by a round of an acquire still going on
    rounds = state.number if state is not None else 0
    if isinstance(e, Expired):
        what = ends or "lease"
        phrase = f"{what} of {holder} EXPIRED on the server"
        return Said(phrase, f"{who}: {phrase}", f"{holder}'s {what} expired", gap, round=rounds)
    zk = memory.backend == "zookeeper"
    node = "lock node" if zk else "key"
    phrase = f"{node if zk else 'lock key'} of {holder} deleted"
    if memory.election:
        phrase = f"leader {'node' if memory.backend == 'zookeeper' else 'key'} of {holder} deleted"
    mine = holder in memory.releasing  # its own release: the mark is enough
    label = "" if mine else f"deleted {holder}'s {node}"
    return Said(phrase, f"{who}: {phrase}", label, gap, round=rounds)


def say_link(memory: Memory, e: Link) -> Said:
    """A link changed; one click that cut (or healed) several is labelled once, with them all."""
    who = str(e.actor)
    phrase, label = link_phrase(e)
    nodes = memory.linking.get(who) or []
    node, mode = e.node, e.mode
    if not e.peers and node in nodes and len(nodes) > 1:  # one click, several links
        names = ", ".join(nodes)
        label = {
            "pass": f"{who} ⇹ {names} healed",
            "delay": f"{who} ⇹ {names} delayed {e.ms} ms",
        }.get(str(mode), f"✂ {who} ⇹ {names} cut ({mode})")
    elif mode in ("blackhole", "reset") and not e.peers:
        label = "✂ " + label
    return Said(phrase, f"{who} {phrase}", label)


def say_finished(memory: Memory, e: RunFinished) -> Said:
    """The run's end; its verdict's overlaps, one line each, beside it."""
    overlaps = [
        f"two holders: {' & '.join(o['clients'])} ({seconds(o['end_ms'] - o['start_ms'])})"
        for o in (e.verdict or {}).get("overlaps", [])
    ]
    end = f"run end {seconds(e.t_ms)}"
    return Said("run finished", "run finished", end, "\n".join(overlaps))
