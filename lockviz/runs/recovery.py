"""Nothing lingers: runs whose app died are marked interrupted, and old runs are pruned.

Each app process says which live runs it executes: it stamps them with its identity
(``host:pid:start ticks``, so a reused pid is not mistaken for the same process) and touches
their ``alive_at`` every few seconds while it runs them. A live (queued or running) run is
*orphaned* when its process is gone: on this host, its pid is dead or now names another
process; anywhere, it has not been touched for :data:`STALE_S`. :func:`recover` marks orphans
``interrupted`` and says so in an event, so their pages tell the truth; ``serve`` calls it at
start-up and every app process calls it now and then, so a dead sibling's runs are found too.

:func:`prune` removes runs (and imported runs) older than the retention period; the app calls
it at start-up, and ``manage.py prune`` on demand.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
from functools import cache

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from lockviz.lab import procs
from lockviz.models import Run, RunEvent

HEARTBEAT_S = 5.0
STALE_S = 30.0  # a live run untouched this long has no process running it


@cache
def process_id() -> str:
    """This app process, unmistakably: host, pid and when the kernel started it."""
    stat = procs.stat(os.getpid())
    return f"{socket.gethostname()}:{os.getpid()}:{stat.start_ticks if stat else 0}"


def claim(run_ids: list[str]) -> None:
    """Say that this process runs these (live) runs, now."""
    if run_ids:
        Run.objects.filter(pk__in=run_ids).update(host=process_id(), alive_at=timezone.now())


def _orphaned(run: Run, stale: dt.datetime) -> bool:
    """Whether the process that ran ``run`` is gone: on this host, ask the kernel; elsewhere,
    it has not touched the run for a while."""
    parts = run.host.rsplit(":", 2)
    if len(parts) != 3 or parts[0] != socket.gethostname():
        return run.alive_at is None or run.alive_at < stale
    try:
        pid, ticks = int(parts[1]), int(parts[2])
    except ValueError:
        return True
    stat = procs.stat(pid)
    return stat is None or not stat.alive or stat.start_ticks != ticks


def running(run: Run) -> bool:
    """Whether a live run's process is still there to run it."""
    stale = timezone.now() - dt.timedelta(seconds=STALE_S)
    return run.host == process_id() or not _orphaned(run, stale)


def settle(run: Run) -> Run:
    """``run``, marked interrupted first if it is live and its process is gone (a page about
    it must not say "running" for a run nobody runs)."""
    if run.live and not running(run):
        interrupt(run, "the app that ran it stopped before it ended (it was killed or restarted)")
        run.refresh_from_db()
    return run


def recover() -> int:
    """Mark every orphaned live run interrupted, with an event saying why; how many."""
    stale = timezone.now() - dt.timedelta(seconds=STALE_S)
    live = Run.objects.filter(status__in=Run.LIVE).exclude(host=process_id())
    orphans = [run for run in live if _orphaned(run, stale)]
    for run in orphans:
        interrupt(run, "the app that ran it stopped before it ended (it was killed or restarted)")
    return len(orphans)


@transaction.atomic
def interrupt(run: Run, why: str, status: str = Run.Status.INTERRUPTED) -> None:
    """End a live run that will never be judged: its status, and an event saying why."""
    updated = Run.objects.filter(pk=run.pk, status__in=Run.LIVE).update(
        status=status, error=why, finished=timezone.now()
    )
    if not updated:
        return  # it ended meanwhile
    last = run.events.aggregate(last=Max("seq"))["last"] or 0
    t_ms = run.events.aggregate(t=Max("t_ms"))["t"] or 0.0
    kind = "run_interrupted" if status == Run.Status.INTERRUPTED else "run_cancelled"
    data = {"seq": last + 1, "t_ms": t_ms, "actor": "lab", "kind": kind, "why": why}
    RunEvent.objects.create(run=run, seq=last + 1, t_ms=t_ms, actor="lab", kind=kind, data=data)


def prune(days: int) -> int:
    """Remove runs (imported ones too) created more than ``days`` ago; how many."""
    cutoff = timezone.now() - dt.timedelta(days=days)
    old = Run.objects.filter(created__lt=cutoff).exclude(status__in=Run.LIVE)
    count = old.count()
    old.delete()
    return count
