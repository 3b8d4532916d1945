"""What every part of the narrator shares: :class:`Said`, an event's words (see the package
docstring), and how a value is read aloud: a lease, a clock jump, a time, a client library's
error, a ZooKeeper queue node."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

Told = dict[str, object]  # an event as viewers get it: its fields and its words (``said``)


@dataclass(frozen=True)
class Said:
    phrase: str  # what happened, without its subject (the terminal prints the actor apart)
    text: str  # a sentence with its subject
    label: str = ""  # the diagram's label
    mark: str = ""  # a second mark's words (see the package docstring)
    short: str = ""  # the label cut short, for where it does not fit
    tone: str = ""  # "damage": an accepted stale write
    round: int = 0  # the acquire round this event belongs to (0: none)
    fold: str = ""  # on the event that settles a refused round: what the diagram folds

    def as_data(self) -> dict[str, str | int]:
        """What the browser gets with each event (optional words only when there are some)."""
        data: dict[str, str | int] = {"text": self.text, "label": self.label, "mark": self.mark}
        for key in ("short", "tone", "round", "fold"):
            if getattr(self, key):
                data[key] = getattr(self, key)
        return data


def items(value: object) -> list[object]:
    """A list an event holds (``nodes``, ``peers``), as it is iterated: an imported event's odd
    value raises TypeError here, which the narrator says as plainly as it can."""
    if isinstance(value, Iterable):
        return list(value)
    raise TypeError(f"not a list: {value!r}")


def number(value: object) -> float:
    """A number an event holds (a time, a lease), as ``float`` reads it."""
    if isinstance(value, int | float | str):
        return float(value)
    raise TypeError(f"not a number: {value!r}")


def signed_ms(ms: object) -> str:
    """``+20 s``, ``−500 ms``: a clock jump's size as a learner reads it."""
    if not isinstance(ms, int | float):
        return "?"
    sign = "\u2212" if ms < 0 else "+"
    return f"{sign}{abs(ms) / 1000:g} s" if abs(ms) >= 1000 else f"{sign}{abs(ms):g} ms"


def duration(ms: object) -> str:
    """``2 s``, ``1.5 s``, ``500 ms``: a lease or a pause as a learner reads it."""
    if not isinstance(ms, int | float):
        return "?"
    return f"{ms / 1000:g} s" if abs(ms) >= 1000 else f"{ms:g} ms"


def seconds(ms: object) -> str:
    return f"{ms / 1000:.2f} s" if isinstance(ms, int | float) else "?"


def plain_error(error: object) -> str:
    """A client library's error as a learner reads it: "connection reset", not errno 104."""
    raw = str(error or "").strip()
    low = raw.lower()
    for needle, words in (
        ("reset by peer", "connection reset"),
        ("connection refused", "connection refused"),
        ("closed the connection", "connection closed by the server"),
        ("closed by server", "connection closed by the server"),
        ("idle-in-transaction", "session ended (idle in transaction too long)"),
        ("lease not found", "lease not found"),
    ):
        if needle in low:
            return words
    found = re.match(r"no reply within (\d+) ms", raw)
    if found:
        return f"no reply within {found.group(1)} ms"
    if "timed out" in low or "timeout" in low:
        return "timed out"
    raw = re.sub(r"\s*\((?:Error|errno) [^)]*\)", "", raw)
    raw = re.sub(r"\b\d{1,3}(?:\.\d{1,3}){3}:\d+\b", "the server", raw)
    return raw[:80] or "error"


def queue_name(name: object) -> str:
    """``alice.d5ad8ba2.lock-0000000003`` (or an election's ``alice.d5ad8ba2.__lock__0000000003``)
    as a learner reads it: ``alice #3``."""
    text = str(name).rsplit("/", 1)[-1]
    found = re.match(r"([^.]+)\..*(?:lock-|__lock__)0*(\d+)$", text)
    return f"{found.group(1)} #{found.group(2)}" if found else text
