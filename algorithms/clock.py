"""Clocks that a lock client reads.

A lock never calls ``time`` directly: it receives a :class:`Clock`, so the lab can give a
client a skewed or drifting clock and the diagram can show what the client *believed* the time
was. ``monotonic_ns`` stays the host's ``CLOCK_MONOTONIC`` in every clock: it is the reference
clock that stamps events, shared by all processes on the machine.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def wall(self) -> float:
        """Seconds since the epoch, as this client believes it to be."""

    def monotonic_ns(self) -> int:
        """The reference clock (host CLOCK_MONOTONIC) in nanoseconds."""

    def sleep(self, seconds: float) -> None:
        """Block for ``seconds`` of real time."""


class SystemClock:
    """The host's clocks, unmodified."""

    def wall(self) -> float:
        return time.time()

    def monotonic_ns(self) -> int:
        return time.monotonic_ns()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)
