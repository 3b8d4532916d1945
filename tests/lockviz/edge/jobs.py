"""Jobs for the worker processes' tests (lockviz.edge.workers): a worker imports a job by its
module's name, so they live here, light to import, not in the test module."""

from __future__ import annotations

import os
import time
from pathlib import Path


def who() -> tuple[int, int, int]:
    """The worker's pid, its parent's and its niceness."""
    return os.getpid(), os.getppid(), os.nice(0)


def spin(seconds: float) -> float:
    """Busy in Python for ``seconds``, the interpreter held as an import's parse holds it (a
    niced worker on a loaded machine gets what CPU it can): the CPU it used."""
    start, deadline = time.process_time(), time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        n += 1
    return time.process_time() - start


def wait_for(path: str, timeout_s: float = 60) -> bool:
    """Hold a worker until ``path`` exists."""
    deadline = time.monotonic() + timeout_s
    while not Path(path).exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
