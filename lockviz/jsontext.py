"""JSON text from outside the app, decoded within bounds: the one door every such text takes.

A page's form (a scenario box, a fork's original, a plan's file), a presenter's room state, a
WebSocket message, an imported run or a library archive's ``library.json`` is text anyone can
write. Python's ``json.loads`` reads any of it: 100,000 brackets deep (a ``RecursionError``, a
500, a dead stream), ``Infinity`` and ``1e999`` (an ``OverflowError`` as soon as something
takes ``int`` of it), a 5,000-digit integer (a ``ValueError`` nobody expected). :func:`loads`
refuses each of these with one sentence naming where, as :class:`lockviz.errors.JsonRefused`
(400), before anything is built from the text:

- size: at most ``max_bytes`` (each caller says its own: a WebSocket message is small, an
  import is megabytes);
- depth: at most :data:`MAX_DEPTH` objects and arrays inside each other (deeper than Python's
  recursion, the decoder stops by itself; below it, the decoded value is measured without
  recursion, and a refusal counts the text's own nesting to say how deep it was);
- numbers: finite (no ``NaN``, ``Infinity``, ``1e999``), and integers of at most
  :data:`MAX_DIGITS` digits (JavaScript's and a database's integers are far shorter);
- text: UTF-8 (bytes), any character JSON allows.

What crosses inside the app (a lab child's line on a pipe, a message the app itself published)
is the app's own and is read with ``json`` directly; the channel Redis is the trust boundary
(docs/deploy.md).
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import NoReturn

from lockviz.errors import JsonRefused
from lockviz.jsontypes import JsonValue

MAX_DEPTH = 32  # the deepest of the app's own JSON (an archive's plan's scenario) is about 8
MAX_DIGITS = 20  # an integer's digits: a 64-bit integer has at most 19 (and a sign)

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def loads(text: str | bytes, *, max_bytes: int, where: str = "JSON") -> JsonValue:
    """``text`` decoded, or :class:`JsonRefused` with the sentence that says why not, the
    problem named by ``where`` (``"scenario"``, ``"library.json"``, ``"message"``)."""
    size = len(text) if isinstance(text, bytes) else len(text.encode(errors="surrogatepass"))
    if size > max_bytes:
        _refuse(where, f"{_size(size)} is too big; the most is {_size(max_bytes)}")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            _refuse(where, f"not UTF-8 text (byte {text[exc.start]:#04x} at position {exc.start})")
    try:
        decoded: JsonValue = json.loads(
            text, parse_constant=_constant, parse_float=_finite, parse_int=_bounded
        )
    except json.JSONDecodeError as exc:
        _refuse(where, f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")
    except RecursionError:  # deeper than Python recurses: far too deep
        _refuse(where, f"nested {_depth(text):,} deep; the most is {MAX_DEPTH}")
    except _NotFinite as exc:
        _refuse(where, f"{exc.args[0]} is not a finite number")
    except _TooLong as exc:
        _refuse(where, f"an integer of {exc.args[0]:,} digits; the most is {MAX_DIGITS}")
    if _deeper_than(decoded, MAX_DEPTH):
        _refuse(where, f"nested {_depth(text):,} deep; the most is {MAX_DEPTH}")
    return decoded


def _deeper_than(value: JsonValue, most: int) -> bool:
    """Whether ``value`` nests more than ``most`` objects and arrays, without recursion (and
    without looking further once it knows)."""
    todo: list[tuple[JsonValue, int]] = [(value, 1)]
    while todo:
        found, depth = todo.pop()
        if depth > most:
            return True
        inner = (
            found.values() if isinstance(found, dict) else found if isinstance(found, list) else ()
        )
        todo.extend((v, depth + 1) for v in inner if isinstance(v, dict | list))
    return False


def _depth(text: str) -> int:
    """How deep brackets nest in ``text``, outside its strings: a running sum counted in C
    (``accumulate``), for a refusal's sentence (5 MB of brackets is a fraction of a second)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub('""', text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


class _NotFinite(ValueError):
    """A number JSON should not have held (NaN, Infinity, one too large for a float)."""


class _TooLong(ValueError):
    """An integer of more than :data:`MAX_DIGITS` digits (``args[0]``: how many)."""


def _bounded(text: str) -> int:
    digits = len(text) - text.startswith("-")
    if digits > MAX_DIGITS:
        raise _TooLong(digits)
    return int(text)


def _constant(name: str) -> NoReturn:
    raise _NotFinite(name)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotFinite(text[:40])
    return value


def _refuse(where: str, problem: str) -> NoReturn:
    raise JsonRefused(f"{where}: {problem}")


def _size(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / 1024 / 1024:.1f}".removesuffix(".0") + " MB"
    if size >= 1024:
        return f"{size / 1024:.1f}".removesuffix(".0") + " KB"
    return f"{size} bytes"
