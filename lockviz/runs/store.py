"""A run's events, stored and then published in order by a thread of the run's own.

An engine records from many threads: its own, each client's reader, each watcher, the timers
of faults. Stored where they were recorded, each of those threads held a database connection
of its own while the run played (five for a GC pause): twenty runs on two replicas took all 100
of PostgreSQL's connections, and a page got a 500 (seen in tests/deploy/test_class_arrives.py).
And the engine waited for each write, holding its lock: a slow database made the run's steps
late (docs/fidelity.md).

So a run's :class:`Writer` takes each event's work (store it, then publish it) in the order the
engine recorded them, and does it on one thread with one connection: the engine goes on at
once. A viewer still never hears of an event before it is stored, and a run's outcome is stored
after its last event (:meth:`Writer.drain`, before the run's end is written).

Whoever stores an event of a run (this writer, the lab host telling of its own shutdown, a web
process telling that a run's host is gone) takes its sequence number from one place,
:func:`append`: the next after the run's last stored event, under the run's row lock. Two
writers of one run (a host that stopped answering for a while, and the process that marked its
run interrupted meanwhile) are put one after the other, never given the same number: no event
is dropped for a clash. The engine's own numbering is what is stored whenever it is the run's
only writer, which is always, but for such a moment.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

from django.db import connection, transaction
from django.db.models import Max

from lockviz.lab.events import BaseEvent, EventJson
from lockviz.models import Run, RunEvent

log = logging.getLogger(__name__)

Work = Callable[[], None]


def append(run_id: str, event: BaseEvent, data: EventJson, said: object) -> EventJson | None:
    """Store ``event`` (``data``, its JSON; ``said``, its words) as ``run_id``'s next event: its
    JSON as stored, its ``seq`` the run's next; None when the run is gone (pruned, a test's
    database emptied).

    The run's row is locked first (PostgreSQL: ``FOR UPDATE``; SQLite: the write lock each
    transaction takes as it begins, ``transaction_mode`` IMMEDIATE in settings), so the last
    stored number read next is still the last when this one is written."""
    with transaction.atomic():
        if not Run.objects.select_for_update().filter(pk=run_id).values_list("pk").first():
            return None
        last = RunEvent.objects.filter(run_id=run_id).aggregate(last=Max("seq"))["last"] or 0
        if data.get("seq") != last + 1:
            data = {**data, "seq": last + 1}
        RunEvent.objects.create(
            run_id=run_id,
            seq=last + 1,
            t_ms=event.t_ms,
            actor=event.actor,
            kind=event.kind,
            data=data,
            said=said,
        )
    return data


class Writer:
    """One run's events, done in order on a thread of their own (started with the first)."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self._work: queue.SimpleQueue[Work | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def put(self, work: Work) -> None:
        """Do ``work`` after everything put before it; return at once."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name=f"store-{self.run_id}", daemon=True
                )
                self._thread.start()
            self._work.put(work)

    def drain(self, timeout_s: float = 60.0) -> None:
        """Wait until everything put is done, and end the thread (a later put starts another)."""
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is None:
                return
            self._work.put(None)
        thread.join(timeout_s)
        if thread.is_alive():
            log.error("run %s: its events not all stored after %.0f s", self.run_id, timeout_s)

    def _run(self) -> None:
        try:
            while (work := self._work.get()) is not None:
                try:
                    work()
                except Exception:  # one event lost to a database error: the rest still go
                    log.exception("run %s: an event could not be stored", self.run_id)
        finally:
            connection.close()  # this thread's, opened by the first write
