"""Costly answers made once: the first request computes, the others wait for its result.

A finished run's Mermaid export is made from every event and kept in the shared cache. Before
this, two first requests at once each made it (the cache is filled by whichever finishes), and
a class's worth of them at once made it that many times. :func:`single_flight` takes a lock in
the shared cache (``add``: only one caller, in any app process, gets it) before computing; the
others poll the cache for the value. A lock outlives its holder by at most ``wait_s`` (a process
killed mid-compute), after which another caller computes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from django.core.cache import cache

from lockviz.errors import Busy

log = logging.getLogger(__name__)
POLL_S = 0.05


def single_flight(key: str, compute: Callable[[], str], keep_s: int, wait_s: float = 60.0) -> str:
    """The cached value at ``key``, computed by one caller at a time (kept ``keep_s``);
    :class:`Busy` if another caller has been computing it for longer than ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while True:
        found = cache.get(key)
        if found is not None:
            return str(found)
        if cache.add(f"{key}:computing", 1, int(wait_s) + 1):
            try:
                value = compute()
                cache.set(key, value, keep_s)
                return value
            finally:
                cache.delete(f"{key}:computing")
        if time.monotonic() > deadline:
            raise Busy("This export is being made for another request: try again in a minute.")
        time.sleep(POLL_S)
