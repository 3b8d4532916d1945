"""The storage in words: what it did with a write (stored, rejected, a stale write's damage),
judged by the checker's own rule as it lands, and its other kinds (reads, sequencer checks,
idempotency keys). :mod:`.messages` says the messages these belong to."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from algorithms.checker import clock_time
from lockviz.lab.events import EventJson
from lockviz.narrator.memory import TOKEN_NAMES, Memory
from lockviz.narrator.words import items


def write_mark(memory: Memory, request: EventJson, e: EventJson) -> tuple[str, str]:
    """(what the storage did with a write, its tone) beside its mark on the storage."""
    if replicated(e):
        return replica_mark(request, e)
    if e.get("duplicate"):
        return f"repeat of key {request.get('key', '?')}: not applied again", ""
    token = e.get("token", request.get("token"))
    if e.get("accepted") is False:
        return f"REJECTED {compared(memory, e) or memory.token(token)}", ""
    value = request.get("value")
    mine = f"{value if value is not None else ''}{_paren_token(memory, token)}"
    before = memory.stored
    judged = memory.judge(request, e)
    if judged is None or not judged.stale:
        return f"stored {mine}", ""
    if before is not None and before.get("actor") != e.get("actor"):
        old = f"{before.get('value')}{_paren_token(memory, before.get('token'))}"
        return f"{mine} overwrote {old}", "damage"
    if judged.superseded_by:
        return f"{mine} stored after {judged.superseded_by} took the lock", "damage"
    return f"{mine} stored without holding the lock", "damage"


def compared(memory: Memory, e: EventJson) -> str:
    """A rejected write's tokens, compared: ``1 < 2``, ``czxid 6 < 8``."""
    token, highest = e.get("token"), e.get("highest")
    lower = isinstance(token, int) and isinstance(highest, int) and token < highest
    if not lower:  # refused for another reason (compare-and-set: "read v0, now v1")
        return str(e.get("reason") or "")
    name = memory.token_name if memory.election else TOKEN_NAMES.get(str(memory.backend))
    return f"{name + ' ' if name else ''}{token} < {highest}"


def _paren_token(memory: Memory, token: object) -> str:
    return f" ({memory.token(token)})" if token is not None and memory.fences else ""


# -- replicated storage: a last-write-wins register, an add-wins set --------------------------


def replicated(e: EventJson) -> bool:
    """Whether a reply is a replica's (last-write-wins or CRDT), not the single storage's."""
    return any(key in e for key in ("holds", "values", "kept"))


def stamped(write: object, short: bool = False) -> str:
    """A stamped write as a learner reads it: ``alice's A (09:41:07.250)``; ``short``, as a
    label has room for it: ``alice's A @41:07.250``."""
    if not isinstance(write, Mapping):
        return "?"
    if short:
        return f"{write.get('writer')}'s {write.get('value')} @{_stamp(write.get('stamp'), True)}"
    return f"{write.get('writer')}'s {write.get('value')} ({_stamp(write.get('stamp'))})"


def _stamp(ms: object, short: bool = False) -> str:
    """A stamp as a time of day; ``short``: minutes, seconds and ms (``41:07.250``)."""
    if not isinstance(ms, int):
        return "?"
    return clock_time(ms)[3:] if short else clock_time(ms)


def elements(values: object) -> str:
    """A set's elements: ``{A, B}``."""
    return "{" + ", ".join(str(v) for v in items(values or [])) + "}"


def replica_label(e: EventJson) -> str:
    """A replica's answer as its arrow's label: short, the stamps as minutes and seconds."""
    if "values" in e:
        added = f" (new: {elements(e['added'])})" if e.get("added") else ""
        return f"{elements(e['values'])}{added}"
    if e.get("op") == "write":
        return "OK, but dropped" if e.get("kept") is False else "OK"
    if e.get("op") == "merge" and e.get("dropped") is not None:
        return f"keeps {stamped(e.get('holds'), True)}, drops {stamped(e.get('dropped'), True)}"
    return stamped(e.get("holds"), True) if e.get("holds") else "empty"


def replica_mark(request: EventJson, e: EventJson) -> tuple[str, str]:
    """What a replica did with a write (its tone: none; a drop is a loss only if the checker
    finds the write it kept was the older one)."""
    if "values" in e:
        return f"added {request.get('value')}: now {elements(e['values'])}", ""
    if e.get("kept") is False:  # the checker decides whether the drop lost an update
        return f"dropped {stamped(e.get('dropped'))}: keeps {stamped(e.get('holds'))}", ""
    return f"stored {stamped(e.get('holds'))}", ""


def replica_result(e: EventJson) -> str:
    """A replica's answer to a write, a read or a merge, in words."""
    if "values" in e:
        added = f" (new here: {elements(e['added'])})" if e.get("added") else ""
        return f"{elements(e['values'])}{added}"
    holds = f"holds {stamped(e.get('holds'))}" if e.get("holds") else "empty"
    if e.get("dropped") is not None:
        return f"{holds}; dropped {stamped(e.get('dropped'))}"
    return holds


def replica_request(e: EventJson, crdt: bool = False, short: bool = False) -> str:
    """A write's or a merge's words towards a replica (a CRDT's write adds to its set);
    ``short``: as its arrow's label."""
    if e.get("op") == "merge":
        sent = stamped(e.get("holds"), short) if e.get("holds") else elements(e.get("values"))
        return f"merge: {sent}"
    if crdt:
        return f"add {e.get('value')}" if short else f"add {e.get('value')} to the set"
    if short:
        return f"write {e.get('value')} @{_stamp(e.get('stamp'), True)}"
    return f"write {e.get('value')} · stamped {_stamp(e.get('stamp'))}"


def write_basis(e: EventJson) -> list[str]:
    """What a write is based on besides its token: the version read, its idempotency key."""
    basis = []
    if e.get("read") is not None:
        basis.append(f"read v{e['read']}")
    if e.get("key") is not None:
        basis.append(f"key {e['key']}")
    return basis


def check_subject(e: EventJson) -> str:
    """What the storage asks the lock service about: whose lock, and how it knows it."""
    if e.get("path") is not None:
        return f"is {e.get('holder')}'s lock node {e['path']} still there (czxid {e.get('token')})?"
    if e.get("lease") is not None:
        return f"is {e.get('holder')}'s lease {e['lease']} alive?"
    if e.get("session") is not None:
        return f"does {e.get('holder')}'s session (pid {e['session']}) still hold the lock?"
    if e.get("key") is not None and e.get("value") is None:
        return f"is {e.get('holder')}'s key {e['key']} still there (revision {e.get('token')})?"
    return f"does {e.get('key')} still hold {e.get('holder')}'s value?"


def duplicate(e: EventJson) -> str:
    first = "accepted" if e.get("accepted") else "rejected"
    return f"duplicate: the first result ({first}), not applied again"


def _read_result(e: EventJson) -> str:
    if replicated(e):
        return replica_result(e)
    if e.get("accepted") is False:
        return f"REFUSED ({e.get('reason')}): a read with an older token"
    value = e.get("value")
    return f"v{e.get('version')}: {value!r}" if value is not None else f"v{e.get('version')}: empty"


def _check_result(e: EventJson) -> str:
    return "✔ current" if e.get("current") else f"✖ {e.get('why') or 'not current'}"


STORAGE_REQUESTS: dict[str, Callable[[EventJson], str]] = {
    "read": lambda e: "read" + (f" with token {e['token']}" if e.get("token") is not None else ""),
    "check": lambda e: f"check {e.get('holder')}'s lock",
    "merge": lambda e: replica_request(e, short=True),
}
STORAGE_RESULTS: dict[str, Callable[[EventJson], str]] = {
    "read": _read_result,
    "check": _check_result,
    "merge": replica_result,
}
