"""A presenter's run comes first: the class watches it on the projector, so its story is the one
that must be kept when the lab is busy.

A run started by a room's presenter (:func:`presents`) is *first*: it goes ahead of the queue
into a slot kept for it (:meth:`lockviz.lab.capacity.Machine.join`), and while one is queued or
playing every other run *yields*: its processes (servers, proxy, clients) and its own thread in
the app run at a lower CPU priority, those running when the first run arrived lowered then,
those started later started low (:func:`lockviz.lab.procs.yield_from`); and no other run starts
(the burst of a start) while a first run starts (:meth:`lockviz.lab.capacity.Machine.join`). A
yielding run stays low until it ends (see lockviz.lab.procs on why niceness, and why never
raised back).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from lockviz.lab import procs
from lockviz.shares import runs as shares


def presents(owner: str) -> bool:
    """Whether ``owner`` presents a room with a presenter's standing (lockviz.shares.runs.
    presenting: a teacher's open room with its class there): their runs are on a projector."""
    return shares.presenting(owner) is not None


class Priorities:
    """Which runs are first, and the thread executing each queued or live run."""

    def __init__(self, pids: Callable[[str], list[int]]) -> None:
        self._pids = pids  # a live run's processes now
        self._threads: dict[str, int] = {}
        self._firsts: set[str] = set()
        self._lock = threading.Lock()

    def first(self, run_id: str) -> None:
        """``run_id`` is a presenter's, about to be queued: every other run yields from now."""
        with self._lock:
            self._firsts.add(run_id)
            others = [
                (run, thread) for run, thread in self._threads.items() if run not in self._firsts
            ]
        for run, thread in others:
            procs.yield_from(thread, self._pids(run))

    def executing(self, run_id: str) -> None:
        """In the run's own thread, before it waits for the lab: it yields if a first run is
        queued or playing."""
        here = threading.get_native_id()
        with self._lock:
            self._threads[run_id] = here
            yields = bool(self._firsts) and run_id not in self._firsts
        if yields:
            procs.yield_from(here, [])

    def ended(self, run_id: str) -> None:
        """In the run's own thread: it will execute nothing more."""
        with self._lock:
            self._threads.pop(run_id, None)
            self._firsts.discard(run_id)
        procs.stop_yielding(threading.get_native_id())

    def is_first(self, run_id: str) -> bool:
        with self._lock:
            return run_id in self._firsts
