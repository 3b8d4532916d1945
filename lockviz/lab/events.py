"""How the lab records what happens in a run (docs/events.md has every kind).

Everything that happens (a client's protocol step, a server ending a lease, a fault) is
*recorded* once, where it happens, through a :class:`Record`: the engine gives the event its
``seq`` and its time on the reference clock (the host's CLOCK_MONOTONIC, stamped where the
event happened when ``t_ns`` is given), keeps it, and hands the finished event to the run's
:data:`Sink`, which stores and broadcasts it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

Event = dict[str, Any]  # {"seq", "t_ms", "actor", "kind", ...details}
Sink = Callable[[Event], None]  # where finished events go (the store and the viewers)


class Record(Protocol):
    def __call__(
        self, actor: str, kind: str, details: dict[str, Any], t_ns: int | None = None
    ) -> None:
        """Record that ``actor`` did or saw ``kind`` (stamped now, or at ``t_ns``)."""
