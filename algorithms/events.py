"""How algorithms report what they do.

A lock takes an :data:`EventSink`: a callable receiving ``(kind, details)`` for every protocol
step (see docs/events.md for the kinds). The sink stamps and forwards the event; the lock never
knows who listens. :func:`discard` is the sink for a lock used outside the lab.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

EventSink = Callable[[str, dict[str, Any]], None]


def discard(kind: str, details: dict[str, Any]) -> None:
    """An event sink that drops everything."""


_calls = itertools.count(1)


class Reporter:
    """Turns a lock's protocol steps into events for an :data:`EventSink`.

    A request and its reply share a ``call`` id, so a viewer can draw them as one exchange
    even when other events arrive in between.
    """

    def __init__(self, sink: EventSink = discard) -> None:
        self._sink = sink

    def emit(self, kind: str, **details: Any) -> None:
        self._sink(kind, details)

    def request(self, to: str, op: str, **args: Any) -> int:
        call = next(_calls)
        self._sink("request", {"to": to, "call": call, "op": op, **args})
        return call

    def reply(self, call: int, frm: str, op: str, ok: bool, **result: Any) -> None:
        self._sink("reply", {"from": frm, "call": call, "op": op, "ok": ok, **result})
