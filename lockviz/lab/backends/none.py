"""No lock service at all: the clients of a ``"backend": "none"`` scenario go straight to the
storage, and only ``read`` and ``write`` (the schema refuses lock verbs there).

The :class:`NoLock` stands where a lock would, so the client process needs no special case: it
never holds anything, and says so if asked anyway.
"""

from __future__ import annotations

from algorithms.clock import Clock
from algorithms.events import EventSink
from algorithms.lock import Grant, LockBase
from algorithms.sequencer import Sequencer
from lockviz.lab.backends.parts import lock_parts
from lockviz.lab.config import ClientConfig


class NoLock(LockBase):
    """A lock that nobody can take: there is no lock service."""

    def acquire(self, timeout_ms: int = 0) -> Grant | None:
        self._report.emit("note", text="there is no lock service to ask")
        return None

    def release(self) -> bool:
        return False

    def extend(self, ttl_ms: int | None = None) -> bool:
        return False

    def sequencer(self) -> Sequencer | None:
        return None


def make_lock(config: ClientConfig, clock: Clock, emit: EventSink) -> NoLock:
    return NoLock(**lock_parts(config, clock, emit))
