"""What every backend's lock takes from its client process, whatever the backend: one place, so
that no backend forgets the client's clock (each module of :mod:`lockviz.lab.backends` reads
it; the package imports the modules, so this is not in its ``__init__``)."""

from __future__ import annotations

from typing import TypedDict

from algorithms.clock import Clock
from algorithms.events import EventSink
from lockviz.lab.config import ClientConfig


class LockParts(TypedDict):
    """What every backend's lock takes from its client process, whatever the backend."""

    owner: str  # the client's name
    clock: Clock  # the client's clock, which the lab may skew
    on_event: EventSink


def lock_parts(config: ClientConfig, clock: Clock, emit: EventSink) -> LockParts:
    """The arguments every ``make_lock`` passes to its lock: one place, so that no backend
    forgets the client's clock."""
    return {"owner": config.name, "clock": clock, "on_event": emit}
