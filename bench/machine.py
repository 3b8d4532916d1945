"""What the benchmarks read of the machine: CPU ticks from /proc, of processes and of all, and
the words every table's summary gives the machine and the time it was measured."""

from __future__ import annotations

import os
import platform
import time
from datetime import UTC, datetime

TICK = os.sysconf("SC_CLK_TCK")


def cores() -> str:
    """The machine as a summary names it: ``2 cores (x86_64, Python 3.11.2)``."""
    return f"{os.cpu_count()} cores ({platform.machine()}, Python {platform.python_version()})"


def now() -> str:
    """When, as a summary says it: ``2026-11-29 12:00 UTC``."""
    return f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"


def busy_ticks() -> int:
    """Ticks every core of the machine has spent busy since boot (anything but idle)."""
    with open("/proc/stat") as f:
        user, nice, system, _idle, _iowait, irq, softirq, steal = f.readline().split()[1:9]
    return sum(int(n) for n in (user, nice, system, irq, softirq, steal))


def cpu_ticks(pids: list[int]) -> int:
    """User + system ticks of the processes ``pids`` (those gone by now count nothing)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError):
            continue
    return total


class MachineCpu:
    """How busy the whole machine was since this was made, as % of all its cores."""

    def __init__(self) -> None:
        self.start = (time.monotonic(), busy_ticks())

    def percent(self) -> float:
        seconds = time.monotonic() - self.start[0]
        return 100 * (busy_ticks() - self.start[1]) / TICK / seconds / (os.cpu_count() or 1)
