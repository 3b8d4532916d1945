"""The storage in words: what it did with a write (stored, rejected, a stale write's damage),
judged by the checker's own rule as it lands, and its other kinds (reads, sequencer checks,
idempotency keys). :mod:`.messages` says the messages these belong to."""

from __future__ import annotations

from collections.abc import Callable

from algorithms.summary import clock_time
from lockviz.lab.events import Reply, Request, StampedJson
from lockviz.narrator.memory import TOKEN_NAMES, Memory


def write_mark(memory: Memory, request: Request | None, e: Reply) -> tuple[str, str]:
    """(what the storage did with a write, its tone) beside its mark on the storage."""
    if replicated(e):
        return replica_mark(request, e)
    if e.duplicate:
        key = request.key if request is not None and "key" in request.model_fields_set else "?"
        return f"repeat of key {key}: not applied again", ""
    token = e.token if "token" in e.model_fields_set or request is None else request.token
    if e.accepted is False:
        return f"REJECTED {compared(memory, e) or memory.token(token)}", ""
    value = request.value if request is not None else None
    mine = f"{value if value is not None else ''}{_paren_token(memory, token)}"
    before = memory.stored
    judged = memory.judge(request, e)
    if judged is None or not judged.stale:
        return f"stored {mine}", ""
    if before is not None and before.actor != e.actor:
        old = f"{before.value}{_paren_token(memory, before.token)}"
        return f"{mine} overwrote {old}", "damage"
    if judged.superseded_by:
        return f"{mine} stored after {judged.superseded_by} took the lock", "damage"
    return f"{mine} stored without holding the lock", "damage"


def compared(memory: Memory, e: Reply) -> str:
    """A rejected write's tokens, compared: ``1 < 2``, ``czxid 6 < 8``."""
    token, highest = e.token, e.highest
    lower = isinstance(token, int) and isinstance(highest, int) and token < highest
    if not lower:  # refused for another reason (compare-and-set: "read v0, now v1")
        return str(e.reason or "")
    name = memory.token_name if memory.election else TOKEN_NAMES.get(str(memory.backend))
    return f"{name + ' ' if name else ''}{token} < {highest}"


def _paren_token(memory: Memory, token: object) -> str:
    return f" ({memory.token(token)})" if token is not None and memory.fences else ""


# -- replicated storage: a last-write-wins register, an add-wins set --------------------------


def replicated(e: Reply) -> bool:
    """Whether a reply is a replica's (last-write-wins or CRDT), not the single storage's."""
    return bool({"holds", "values", "kept"} & e.model_fields_set)


def stamped(write: StampedJson | None, short: bool = False) -> str:
    """A stamped write as a learner reads it: ``alice's A (09:41:07.250)``; ``short``, as a
    label has room for it: ``alice's A @41:07.250``."""
    if write is None:
        return "?"
    if short:
        return f"{write.get('writer')}'s {write.get('value')} @{_stamp(write.get('stamp'), True)}"
    return f"{write.get('writer')}'s {write.get('value')} ({_stamp(write.get('stamp'))})"


def _stamp(ms: object, short: bool = False) -> str:
    """A stamp as a time of day; ``short``: minutes, seconds and ms (``41:07.250``)."""
    if not isinstance(ms, int):
        return "?"
    return clock_time(ms)[3:] if short else clock_time(ms)


def elements(values: list[str] | None) -> str:
    """A set's elements: ``{A, B}``."""
    return "{" + ", ".join(str(v) for v in values or []) + "}"


def replica_label(e: Reply) -> str:
    """A replica's answer as its arrow's label: short, the stamps as minutes and seconds."""
    if "values" in e.model_fields_set:
        added = f" (new: {elements(e.added)})" if e.added else ""
        return f"{elements(e.values)}{added}"
    if e.op == "write":
        return "OK, but dropped" if e.kept is False else "OK"
    if e.op == "merge" and e.dropped is not None:
        return f"keeps {stamped(e.holds, True)}, drops {stamped(e.dropped, True)}"
    return stamped(e.holds, True) if e.holds else "empty"


def replica_mark(request: Request | None, e: Reply) -> tuple[str, str]:
    """What a replica did with a write (its tone: none; a drop is a loss only if the checker
    finds the write it kept was the older one)."""
    if "values" in e.model_fields_set:
        value = request.value if request is not None else None
        return f"added {value}: now {elements(e.values)}", ""
    if e.kept is False:  # the checker decides whether the drop lost an update
        return f"dropped {stamped(e.dropped)}: keeps {stamped(e.holds)}", ""
    return f"stored {stamped(e.holds)}", ""


def replica_result(e: Reply) -> str:
    """A replica's answer to a write, a read or a merge, in words."""
    if "values" in e.model_fields_set:
        added = f" (new here: {elements(e.added)})" if e.added else ""
        return f"{elements(e.values)}{added}"
    holds = f"holds {stamped(e.holds)}" if e.holds else "empty"
    if e.dropped is not None:
        return f"{holds}; dropped {stamped(e.dropped)}"
    return holds


def replica_request(e: Request, crdt: bool = False, short: bool = False) -> str:
    """A write's or a merge's words towards a replica (a CRDT's write adds to its set);
    ``short``: as its arrow's label."""
    if e.op == "merge":
        sent = stamped(e.holds, short) if e.holds else elements(e.values)
        return f"merge: {sent}"
    if crdt:
        return f"add {e.value}" if short else f"add {e.value} to the set"
    if short:
        return f"write {e.value} @{_stamp(e.stamp, True)}"
    return f"write {e.value} · stamped {_stamp(e.stamp)}"


def write_basis(e: Request) -> list[str]:
    """What a write is based on besides its token: the version read, its idempotency key."""
    basis = []
    if e.read is not None:
        basis.append(f"read v{e.read}")
    if e.key is not None:
        basis.append(f"key {e.key}")
    return basis


def check_subject(e: Request) -> str:
    """What the storage asks the lock service about: whose lock, and how it knows it."""
    if e.path is not None:
        return f"is {e.holder}'s lock node {e.path} still there (czxid {e.token})?"
    if e.lease is not None:
        return f"is {e.holder}'s lease {e.lease} alive?"
    if e.session is not None:
        return f"does {e.holder}'s session (pid {e.session}) still hold the lock?"
    if e.key is not None and e.value is None:
        return f"is {e.holder}'s key {e.key} still there (revision {e.token})?"
    return f"does {e.key} still hold {e.holder}'s value?"


def duplicate(e: Reply) -> str:
    first = "accepted" if e.accepted else "rejected"
    return f"duplicate: the first result ({first}), not applied again"


def _read_result(e: Reply) -> str:
    if replicated(e):
        return replica_result(e)
    if e.accepted is False:
        return f"REFUSED ({e.reason}): a read with an older token"
    value = e.value
    return f"v{e.version}: {value!r}" if value is not None else f"v{e.version}: empty"


def _check_result(e: Reply) -> str:
    return "✔ current" if e.current else f"✖ {e.why or 'not current'}"


STORAGE_REQUESTS: dict[str, Callable[[Request], str]] = {
    "read": lambda e: "read" + (f" with token {e.token}" if e.token is not None else ""),
    "check": lambda e: f"check {e.holder}'s lock",
    "merge": lambda e: replica_request(e, short=True),
}
STORAGE_RESULTS: dict[str, Callable[[Reply], str]] = {
    "read": _read_result,
    "check": _check_result,
    "merge": replica_result,
}
