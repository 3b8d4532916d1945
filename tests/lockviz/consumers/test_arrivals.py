"""A class that opens a run's stream at once: a few shared reads, no write on the way in.

A room's followers connect in the same second. Each of them used to take one trip to the
database on the one thread Channels runs database work on, with a write in it (the run's
watcher count) that waited for SQLite's writer lock whenever the lab host was storing events:
a third of a class of 300 never connected (issue 34).
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from django.db import connection

from lockviz.consumers import arrivals
from lockviz.models import Run
from lockviz.routing import websocket_urlpatterns
from tests.communicator import WebsocketCommunicator
from tests.lockviz.consumers.test_runs import frames
from tests.lockviz.teaching.test_forks import stored

pytestmark = pytest.mark.django_db(transaction=True)
app = URLRouter(websocket_urlpatterns)
CLASS = 40


async def follow(run: Run) -> tuple[WebsocketCommunicator, list[int], str]:
    """One viewer connected: the seqs of its catch-up, and the status it was told."""
    ws = WebsocketCommunicator(app, f"/ws/runs/{run.pk}/")
    connected, _ = await ws.connect(timeout=30)
    assert connected
    seqs: list[int] = []
    status = ""
    while not seqs:
        message = await ws.receive_json_from(timeout=30)
        status = message.get("status", status)
        seqs += [f["event"]["seq"] for f in frames(message) if f["type"] == "event"]
    return ws, seqs, status


def finished() -> Run:
    """A finished run stored as the app stores one: its events with their words."""
    run = stored()
    run.narrate()
    return run


@contextlib.contextmanager
def writer_lock_held() -> Iterator[None]:
    """SQLite's writer lock taken by another connection (as the lab host holds it while it
    stores a run's events), until the block ends."""
    other = sqlite3.connect(str(connection.settings_dict["NAME"]), timeout=1)
    try:
        other.execute("BEGIN IMMEDIATE")
        yield
    finally:
        other.rollback()
        other.close()


async def test_a_class_arriving_at_once_shares_a_few_reads_and_each_gets_every_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = await database_sync_to_async(finished)()
    count = await database_sync_to_async(run.events.count)()
    reads: list[int] = []
    read = arrivals.read

    def counted(run_id: str, asks: list[tuple[int, str]]) -> list[Any]:
        reads.append(len(asks))
        return read(run_id, asks)

    monkeypatch.setattr(arrivals, "read", counted)
    arrived = await asyncio.gather(*(follow(run) for _ in range(CLASS)))
    assert sum(reads) == CLASS and len(reads) < CLASS / 4, reads  # waves, not one by one
    for ws, seqs, status in arrived:
        assert seqs == list(range(1, count + 1)) and status == "finished"
        await ws.disconnect()


async def test_viewers_connect_and_catch_up_while_another_holds_the_writer_lock() -> None:
    """Nothing on the way in writes: with the lock held for the whole arrival (the old count
    waited up to its 20 s timeout, one viewer after the other), every viewer is caught up;
    the count is written once the lock is free."""
    run = await database_sync_to_async(finished)()
    count = await database_sync_to_async(run.events.count)()
    with writer_lock_held():
        arrived = await asyncio.wait_for(
            asyncio.gather(*(follow(run) for _ in range(10))), timeout=15
        )
    assert all(seqs == list(range(1, count + 1)) for _, seqs, _ in arrived)
    await database_sync_to_async(arrivals.flush_watchers)()
    assert (await database_sync_to_async(Run.objects.get)(pk=run.pk)).watchers == 10
    for ws, _, _ in arrived:
        await ws.disconnect()
    await database_sync_to_async(arrivals.flush_watchers)()
    assert (await database_sync_to_async(Run.objects.get)(pk=run.pk)).watchers == 0


def test_a_wave_reads_its_events_once_from_the_earliest_any_viewer_lacks() -> None:
    run = finished()
    last = run.events.count()
    everything, resumed, stranger = arrivals.read(run.pk, [(0, ""), (last - 2, ""), (0, "x")])
    assert everything is not None and resumed is not None and stranger is not None
    assert [e["seq"] for e in everything.told] == list(range(1, last + 1))
    assert [e["seq"] for e in resumed.told] == [last - 1, last]
    assert not everything.more and everything.position is None
    assert arrivals.read("no-such-run", [(0, "")]) == [None]


def test_a_flush_returns_once_the_count_the_thread_was_writing_is_written() -> None:
    """The writing thread took the counts and waits for SQLite's writer lock; a flush asked for
    meanwhile (a test, or shutdown) used to find nothing left and return before the count was
    written (a fresh-clone CI run read ``watchers == 10`` after every viewer had left)."""
    run = finished()
    arrivals.watch(run.pk)
    asked = threading.Event()
    seen: list[int] = []

    def flush_then_read() -> None:
        asked.set()
        arrivals.flush_watchers()
        seen.append(Run.objects.get(pk=run.pk).watchers)

    with writer_lock_held():
        writing = threading.Thread(target=arrivals.flush_watchers)
        writing.start()  # takes the count, then waits for the writer lock
        time.sleep(0.3)
        second = threading.Thread(target=flush_then_read)
        second.start()
        asked.wait(10)
        time.sleep(0.5)
    writing.join(30)
    second.join(30)
    assert seen == [1]
