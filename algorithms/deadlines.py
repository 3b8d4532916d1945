"""Client-side deadlines for calls that a library cannot bound by itself.

Some stalls no socket option ends: a server whose kernel keeps acknowledging while the server
process is frozen, or a blackholed link. A call guarded here runs an ``abandon`` callback (which
typically shuts the socket down, so the blocked read fails) if it has not finished in time.

One daemon thread serves every deadline of the process, so arming one costs a heap push, not a
thread start (a ``threading.Timer`` per call doubled a PostgreSQL lock's latency). Like every
thread of a client, it stops when the process is frozen: a deadline cannot fire during a pause.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable


class Deadlines:
    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._cancelled: set[int] = set()
        self._ids = itertools.count()
        self._cv = threading.Condition(threading.Lock())  # not reentrant: cheaper
        self._thread: threading.Thread | None = None

    def arm(self, seconds: float, abandon: Callable[[], None]) -> int:
        """Call ``abandon`` in ``seconds`` unless :meth:`disarm` comes first."""
        with self._cv:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="deadlines", daemon=True)
                self._thread.start()
            ident = next(self._ids)
            heapq.heappush(self._heap, (time.monotonic() + seconds, ident, abandon))
            if self._heap[0][1] == ident:
                self._cv.notify()
            return ident

    def disarm(self, ident: int) -> None:
        # One set operation is atomic under the GIL; the thread finds it at the deadline.
        self._cancelled.add(ident)

    def _run(self) -> None:
        while True:
            with self._cv:
                while True:
                    if not self._heap:
                        self._cv.wait()
                        continue
                    at, ident, abandon = self._heap[0]
                    if ident in self._cancelled:
                        heapq.heappop(self._heap)
                        self._cancelled.discard(ident)
                        continue
                    wait = at - time.monotonic()
                    if wait > 0:
                        self._cv.wait(wait)
                        continue
                    heapq.heappop(self._heap)
                    break
            abandon()


deadlines = Deadlines()
