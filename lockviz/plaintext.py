"""What text lockviz takes: no NUL, and no control character in a name, title or id.

PostgreSQL refuses NUL in text (and ``\\u0000`` in JSON), so a NUL anywhere would be a 500 on a
shared database; a control character in a name, title or id (a line break, an escape, a
backspace) has no business on a projector or in an address. Each refusal is a sentence naming
the character. Nothing here imports Django: the scenario schema uses it too.
"""

from __future__ import annotations

import re

CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # C0, DEL, C1, the line separators
NUL = re.compile("\x00")


def problem(value: str, lines: bool = False) -> str | None:
    """Why ``value`` cannot be a name, title or id (``lines``: a text of several lines, where
    only NUL is refused), or None when it can."""
    found = (NUL if lines else CONTROL).search(value)
    if found is None:
        return None
    what = "a NUL character" if found[0] == "\x00" else "a control character"
    where = "text" if lines else "name, title or id"
    return f"holds {what} (U+{ord(found[0]):04X}), which no {where} may contain"


def printable(value: str) -> str:
    """``value``, or ValueError with the sentence (a pydantic validator)."""
    said = problem(value)
    if said is not None:
        raise ValueError(said)
    return value


def no_nul(value: str) -> str:
    """``value``, or ValueError if it holds a NUL (a pydantic validator for texts)."""
    said = problem(value, lines=True)
    if said is not None:
        raise ValueError(said)
    return value
