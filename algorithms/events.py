"""How algorithms report what they do.

A lock takes an :data:`EventSink`: a callable receiving ``(kind, details)`` for every protocol
step (see docs/events.md for the kinds). The sink stamps and forwards the event; the lock never
knows who listens. :func:`discard` is the sink for a lock used outside the lab, and
:func:`json_line` the encoding a client process writes (one JSON object per line).

:data:`Event` is a recorded event as this library reads one back (the checker, the write judge,
lost updates): decoded JSON, read by field name. It is declared here and nowhere else in
``algorithms/``; the app validates the same events into its typed models
(``lockviz.lab.events.Event``), which this library may not import.
"""

from __future__ import annotations

import itertools
import json
import json.encoder
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NoReturn

Event = Mapping[str, Any]  # a recorded event, read back by field name (see the module's docstring)
EventSink = Callable[[str, dict[str, object]], None]


def discard(kind: str, details: dict[str, object]) -> None:
    """An event sink that drops everything."""


def _unserializable(value: object) -> NoReturn:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def _make_encoder() -> Callable[[object, int], Iterator[str]] | None:
    """json.dumps builds a new C encoder for every call, half of its cost on a small dict; this
    one is built once, with json.dumps's defaults (ASCII, ", " and ": ", NaN allowed). Events
    are flat dicts of names, numbers and short lists: there are no cycles to check for."""
    make = getattr(json.encoder, "c_make_encoder", None)  # typeshed does not list it
    if make is None:  # an interpreter without json's C accelerator
        return None
    ascii_string = json.encoder.encode_basestring_ascii
    encoder: Callable[[object, int], Iterator[str]] = make(
        None, _unserializable, ascii_string, None, ": ", ", ", False, False, True
    )
    return encoder


_encode = _make_encoder()


def json_line(t_ns: int, kind: str, details: Mapping[str, object]) -> str:
    """``json.dumps({"t_ns": t_ns, "kind": kind, **details})``, the same text at half the cost."""
    event = {"t_ns": t_ns, "kind": kind, **details}
    if _encode is None:
        return json.dumps(event)
    return "".join(_encode(event, 0))


_calls = itertools.count(1)


class Reporter:
    """Turns a lock's protocol steps into events for an :data:`EventSink`.

    A request and its reply share a ``call`` id, so a viewer can draw them as one exchange
    even when other events arrive in between.
    """

    def __init__(self, sink: EventSink = discard) -> None:
        self._sink = sink

    def emit(self, kind: str, **details: object) -> None:
        self._sink(kind, details)

    def request(self, to: str, op: str, **args: object) -> int:
        call = next(_calls)
        self._sink("request", {"to": to, "call": call, "op": op, **args})
        return call

    def asking(self, to: str, op: str, **args: object) -> Asked:
        """A request reported later: as it is on its way, its event encoded while the server
        works on it (:class:`Asked`), not before it is sent."""
        return Asked(self, to, op, args)

    def reply(self, call: int, frm: str, op: str, ok: bool, **result: object) -> None:
        self._sink("reply", {"from": frm, "call": call, "op": op, "ok": ok, **result})


class Asked:
    """A request, reported once (:meth:`call`): once it is sent, or before its failure is. Its
    event's time is a few microseconds after the bytes left, never after the reply's."""

    __slots__ = ("_args", "_call", "_op", "_report", "_to")

    def __init__(self, report: Reporter, to: str, op: str, args: dict[str, object]) -> None:
        self._report, self._to, self._op, self._args = report, to, op, args
        self._call = 0

    def call(self) -> int:
        """Its call id, reporting it first if it was not yet."""
        if not self._call:
            self._call = self._report.request(self._to, self._op, **self._args)
        return self._call
