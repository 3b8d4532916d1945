"""Lease renewal in the background: Redisson's "watchdog".

While the lock is held, a thread extends the lease every ``ttl/3``, so a holder that works
longer than one lease keeps it. What it cannot do: run while its process is frozen. A GC pause
(or SIGSTOP) stops the watchdog thread with everything else, the lease runs out on the server,
and the holder wakes up "renewing" a lock that someone else now holds. The first extend after
the pause fails and the watchdog reports the loss; anything the holder did before noticing is
done without the lock.
"""

from __future__ import annotations

import threading

from algorithms.events import EventSink, Reporter, discard
from algorithms.lock import Lock


class Renewer:
    def __init__(
        self, lock: Lock, ttl_ms: int, mutex: threading.Lock, on_event: EventSink = discard
    ):
        self.lock = lock
        self.interval_s = ttl_ms / 3000
        self.mutex = mutex  # the client's own lock around every operation on ``lock``
        self._report = Reporter(on_event)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self.stop()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(self._stop,), daemon=True)
        self._report.emit("renewal_started", interval_ms=round(self.interval_s * 1000))
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self, stop: threading.Event) -> None:
        while not stop.wait(self.interval_s):
            with self.mutex:
                if stop.is_set() or self.lock.grant is None:
                    return
                if not self.lock.extend():
                    return
