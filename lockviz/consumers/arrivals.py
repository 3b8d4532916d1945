"""Viewers arriving at a run's stream, a class at a time: what they read together, what they count.

A room's followers open the stream of the presenter's run in the same second, by the hundred.
Each stream is accepted at once (lockviz.consumers.runs) and then needs what the database says:
the run (its status, its scenario, whether this viewer may see it), the checkpoints whose answers
are still withheld from this viewer (lockviz.teaching.reveals), and the first page of its events
with their words. Read viewer by viewer, on the one thread Channels runs database work on, 300
arrivals were 300 trips queued on that thread, each with a write, beside the lab host's writes to
the same SQLite file: a third of a class never connected.

:func:`arrive` shares the reading. The viewers of one run that arrive while a read for that run
is under way wait for the next read, together: one trip to the database for the run, its
events from the earliest any of them lacks, and each one's own checks; each takes from it what
it may see after what it has. A read begins only once its viewers have joined the run's audience
(they hold what is published meanwhile), so nothing published between the two is lost.

What a viewer changes, the run's ``watchers`` count (a queued run nobody watches is cancelled:
lockviz.runs.recovery), is counted here in memory and written by a thread of its own every
:data:`FLUSH_S`, one UPDATE per run that changed: a write waits for SQLite's writer lock while
the lab host stores events, and must keep neither the event loop nor the database thread.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from channels.db import database_sync_to_async
from django.db import close_old_connections
from django.db.models import F

from lockviz.library import access
from lockviz.live.frames import Frame
from lockviz.models import Run
from lockviz.narrator import Told
from lockviz.runs.recorder import queue_position
from lockviz.teaching import reveals

log = logging.getLogger(__name__)

PAGE = 500  # events read in one go: a stream's first page, shared by the viewers of a wave
FLUSH_S = 0.5  # how often the watcher counts are written


@dataclass(frozen=True)
class Arrived:
    """What one viewer of ``run`` is told as it arrives."""

    run: Run
    hidden: frozenset[int]  # checkpoints whose answers it may not read yet
    told: list[Told]  # the first stored events after what it has, as it may see them
    more: bool  # the page was full: more may be stored after the last of ``told``
    position: int | None  # a queued run's place in line
    frame: Frame | None = None  # ``told`` as one message, made once for its wave (None: none)


def read(run_id: str, asks: list[tuple[int, str]]) -> list[Arrived | None]:
    """For each viewer ``(after, who)`` of ``run_id``: what it is told as it arrives, or None
    if there is no such run or it may not see it (a private saved run is as if there were
    none). One read of the run and of its events, however many ask."""
    run = Run.objects.filter(pk=run_id).first()
    if run is None:
        return [None] * len(asks)
    low = min(after for after, _ in asks)
    events = run.said_after(low, PAGE)
    full = len(events) == PAGE
    position = queue_position(run.pk) if run.status == Run.Status.QUEUED else None
    seen: dict[str, tuple[bool, frozenset[int]]] = {}
    pages: dict[tuple[int, frozenset[int]], tuple[list[Told], Frame | None]] = {}
    found: list[Arrived | None] = []
    for after, who in asks:
        if who not in seen:
            seen[who] = (access.may_see(who, run), reveals.hidden(run, who))
        visible, hidden = seen[who]
        if not visible:
            found.append(None)
            continue
        if (after, hidden) not in pages:  # the same page for the same view: encoded once
            mine = [e for e in events if isinstance(e["seq"], int) and e["seq"] > after]
            if hidden:
                mine = [reveals.event(e, hidden, run.scenario) for e in mine]
            pages[after, hidden] = (mine, page_frame(mine))
        mine, frame = pages[after, hidden]
        found.append(Arrived(run, hidden, mine, full, position, frame))
    return found


def page_frame(told: list[Told]) -> Frame | None:
    """Stored events as the stream sends them: one event's message, or a batch of them."""
    if not told:
        return None
    frames = [{"type": "event", "event": event} for event in told]
    return Frame(
        json.dumps(frames[0] if len(frames) == 1 else {"type": "events", "frames": frames})
    )


@dataclass
class _Wave:
    """The viewers of one run waiting for the next read: (after, who they are, answer)."""

    asks: list[tuple[int, Callable[[], str], asyncio.Future[Arrived | None]]]


class Arrivals:
    """This event loop's waves, by run: one read under way per run, the next one gathering."""

    def __init__(self) -> None:
        self._gathering: dict[str, _Wave] = {}
        self._reading: dict[str, asyncio.Task[None]] = {}

    async def arrive(self, run_id: str, after: int, who: Callable[[], str]) -> Arrived | None:
        """What a viewer that has every event up to ``after`` is told as it arrives (``who``
        says who it is, on the database's thread: it may read the session), read with the
        others of its wave."""
        answer: asyncio.Future[Arrived | None] = asyncio.get_running_loop().create_future()
        wave = self._gathering.setdefault(run_id, _Wave([]))
        wave.asks.append((after, who, answer))
        if run_id not in self._reading:
            self._reading[run_id] = asyncio.ensure_future(self._read(run_id))
        return await answer

    async def _read(self, run_id: str) -> None:
        try:
            while run_id in self._gathering:
                await asyncio.sleep(0)  # those arriving in this very moment come along
                wave = self._gathering.pop(run_id)
                asks = [(after, who) for after, who, _ in wave.asks]
                try:
                    found = await database_sync_to_async(_read_with_whom)(run_id, asks)
                except Exception as exc:  # each viewer is told; the next wave tries again
                    for _, _, answer in wave.asks:
                        if not answer.done():
                            answer.set_exception(exc)
                    continue
                for (_, _, answer), arrived in zip(wave.asks, found, strict=True):
                    if not answer.done():  # a viewer that left meanwhile was cancelled
                        answer.set_result(arrived)
        finally:
            self._reading.pop(run_id, None)


def _read_with_whom(run_id: str, asks: list[tuple[int, Callable[[], str]]]) -> list[Arrived | None]:
    return read(run_id, [(after, who()) for after, who in asks])


_arrivals: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Arrivals] = (
    weakref.WeakKeyDictionary()
)


async def arrive(run_id: str, after: int, who: Callable[[], str]) -> Arrived | None:
    """:meth:`Arrivals.arrive` on the running loop's waves (the server's; a test's own)."""
    loop = asyncio.get_running_loop()
    if loop not in _arrivals:
        _arrivals[loop] = Arrivals()
    return await _arrivals[loop].arrive(run_id, after, who)


# -- who watches -------------------------------------------------------------------------------


class _Watchers:
    """Changes to runs' ``watchers`` not written yet, and the thread that writes them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.writing = threading.Lock()  # one flush at a time: a flush returns once written
        self.changes: dict[str, int] = {}
        self.thread: threading.Thread | None = None

    def add(self, run_id: str, change: int) -> None:
        with self.lock:
            self.changes[run_id] = self.changes.get(run_id, 0) + change
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._writing, name="watchers", daemon=True)
                self.thread.start()

    def flush(self) -> None:
        """Write what has changed now (tests, and the thread). A flush that starts while the
        thread is writing waits for that write, so what was counted before it is written when it
        returns (a count taken by the thread used to be still on its way)."""
        with self.writing:
            self._flush()

    def _flush(self) -> None:
        with self.lock:
            changes, self.changes = self.changes, {}
        try:
            for run_id, change in changes.items():
                if change:
                    Run.objects.filter(pk=run_id).update(watchers=F("watchers") + change)
        except Exception as exc:  # the database is away for a moment: counted again next time
            log.warning("could not write how many watch %d run(s): %s", len(changes), exc)
            with self.lock:
                for run_id, change in changes.items():
                    self.changes[run_id] = self.changes.get(run_id, 0) + change
        finally:
            close_old_connections()

    def _writing(self) -> None:
        while True:
            time.sleep(FLUSH_S)
            with self.lock:
                if not self.changes:
                    self.thread = None  # nothing to write: the next change starts another
                    return
            self.flush()


_watchers = _Watchers()


def watch(run_id: str) -> None:
    """One more viewer watches ``run_id`` (written within :data:`FLUSH_S`)."""
    _watchers.add(run_id, +1)


def unwatch(run_id: str) -> None:
    """One viewer fewer watches ``run_id``."""
    _watchers.add(run_id, -1)


def flush_watchers() -> None:
    """Write every watcher count changed so far, now."""
    _watchers.flush()
