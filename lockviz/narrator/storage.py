"""The storage in words: what it did with a write (stored, rejected, a stale write's damage),
judged by the checker's own rule as it lands, and its other kinds (reads, sequencer checks,
idempotency keys). :mod:`.messages` says the messages these belong to."""

from __future__ import annotations

from collections.abc import Callable

from lockviz.narrator.memory import TOKEN_NAMES, Memory
from lockviz.narrator.words import Event


def write_mark(memory: Memory, request: Event, e: Event) -> tuple[str, str]:
    """(what the storage did with a write, its tone) beside its mark on the storage."""
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


def compared(memory: Memory, e: Event) -> str:
    """A rejected write's tokens, compared: ``1 < 2``, ``czxid 6 < 8``."""
    token, highest = e.get("token"), e.get("highest")
    lower = isinstance(token, int) and isinstance(highest, int) and token < highest
    if not lower:  # refused for another reason (compare-and-set: "read v0, now v1")
        return str(e.get("reason") or "")
    name = TOKEN_NAMES.get(str(memory.backend))
    return f"{name + ' ' if name else ''}{token} < {highest}"


def _paren_token(memory: Memory, token: object) -> str:
    return f" ({memory.token(token)})" if token is not None and memory.fences else ""


def write_basis(e: Event) -> list[str]:
    """What a write is based on besides its token: the version read, its idempotency key."""
    basis = []
    if e.get("read") is not None:
        basis.append(f"read v{e['read']}")
    if e.get("key") is not None:
        basis.append(f"key {e['key']}")
    return basis


def check_subject(e: Event) -> str:
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


def duplicate(e: Event) -> str:
    first = "accepted" if e.get("accepted") else "rejected"
    return f"duplicate: the first result ({first}), not applied again"


def _read_result(e: Event) -> str:
    value = e.get("value")
    return f"v{e.get('version')}: {value!r}" if value is not None else f"v{e.get('version')}: empty"


def _check_result(e: Event) -> str:
    return "✔ current" if e.get("current") else f"✖ {e.get('why') or 'not current'}"


STORAGE_REQUESTS: dict[str, Callable[[Event], str]] = {
    "read": lambda e: "read",
    "check": lambda e: f"check {e.get('holder')}'s lock",
}
STORAGE_RESULTS: dict[str, Callable[[Event], str]] = {
    "read": _read_result,
    "check": _check_result,
}
