"""Clocks that a lock client reads.

A lock never calls ``time`` directly: it receives a :class:`Clock`, so the lab can give a
client a skewed or drifting clock and the diagram can show what the client *believed* the time
was. Events are not stamped with this clock: the lab stamps them with the host's
``CLOCK_MONOTONIC``, the one reference clock shared by every process on the machine.
"""

from __future__ import annotations

import json
import os
import time
from typing import Protocol


class Clock(Protocol):
    def wall(self) -> float:
        """Seconds since the epoch, as this client believes it to be."""

    def monotonic_ns(self) -> int:
        """This client's monotonic clock in nanoseconds (for timeouts and elapsed times)."""

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


class SkewedClock:
    """A client's own clock as the lab sets it: offset and rate, read from a small JSON file.

    The file (``{"offset_ms", "rate", "since_ns", "base_ns"}``) is written whole and renamed by
    the lab, and read on every call, so a change applies at once, even to a client blocked in
    a call. ``wall()`` is the host's time plus the offset, running at ``rate`` since
    ``since_ns``; ``monotonic_ns()`` never jumps but runs at ``rate`` too (a slow clock makes
    elapsed times look shorter, which is what fools a Redlock client's validity check).
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._mtime = -1
        self._state = {"offset_ms": 0.0, "rate": 1.0, "since_ns": 0.0, "base_ns": 0.0}

    def _read(self) -> dict[str, float]:
        try:
            mtime = os.stat(self.path).st_mtime_ns
            if mtime != self._mtime:
                with open(self.path) as f:
                    self._state = {k: float(v) for k, v in json.load(f).items()}
                self._mtime = mtime
        except (OSError, ValueError):
            pass  # keep the last good reading: a clock does not stop because a file is busy
        return self._state

    def monotonic_ns(self) -> int:
        s, now = self._read(), time.monotonic_ns()
        if not s["since_ns"]:
            return now
        return int(s["base_ns"] + (now - s["since_ns"]) * s["rate"])

    def wall(self) -> float:
        s = self._read()
        drift_ns = self.monotonic_ns() - time.monotonic_ns()
        return time.time() + s["offset_ms"] / 1000 + drift_ns / 1e9

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)  # sleeping takes real time whatever the clock believes
