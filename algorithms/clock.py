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


class ClockFile:
    """The writer's side of a :class:`SkewedClock`: a client's offset and rate, in one file.

    The file holds ``{"offset_ms", "rate", "since_ns", "base_ns"}``: the wall clock is the
    host's plus ``offset_ms``; the monotonic clock read ``base_ns`` at host time ``since_ns``
    and runs at ``rate`` since, so a change of rate is continuous. It is written whole and
    renamed, so a reader never sees half a file.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.offset_ms = 0.0
        self.rate = 1.0
        self.since_ns = time.monotonic_ns()
        self.base_ns = self.since_ns  # the client's monotonic reading at since_ns
        self.write()

    def write(self) -> None:
        state = {
            "offset_ms": self.offset_ms,
            "rate": self.rate,
            "since_ns": self.since_ns,
            "base_ns": self.base_ns,
        }
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(state, f)
        os.replace(tmp, self.path)  # whole or not at all

    def jump(self, ms: float) -> float:
        """Move the wall clock by ``ms`` (cumulative); returns the total offset."""
        self.offset_ms += ms
        self.write()
        return self.offset_ms

    def set_rate(self, rate: float) -> None:
        now = time.monotonic_ns()
        self.base_ns += int((now - self.since_ns) * self.rate)
        self.since_ns, self.rate = now, rate
        self.write()

    def reset(self) -> None:
        self.offset_ms, self.rate = 0.0, 1.0
        self.write()


class SkewedClock:
    """A client's own clock as the lab sets it through a :class:`ClockFile`: offset and rate.

    The file is read on every call, so a change applies at once, even to a client blocked in
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
