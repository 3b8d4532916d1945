"""Nothing lingers: runs whose app died are marked interrupted, and old runs are pruned.

Each app process says which live runs it executes: it stamps them with its identity
(``host:pid:start ticks``, so a reused pid is not mistaken for the same process) and touches
their ``alive_at`` every few seconds while it runs them. A live (queued or running) run is
*orphaned* when its process is gone: on this host, its pid is dead or now names another
process; anywhere, it has not been touched for :data:`STALE_S`. :func:`recover` marks orphans
``interrupted`` and says so in an event, sent to every open page of the run, so they tell the
truth without a reload; ``serve`` calls it at start-up, and every app process's keeper every
:data:`HEARTBEAT_S`, so a dead sibling's runs are found within about ten seconds (at once on
the same host, where the kernel says the pid is gone). A lab host (lockviz.labhost) also keeps
a heartbeat key in Redis: once it lapses, its runs are orphans at once, and they read "the lab
host stopped answering". A run queued for lab hosts (no ``host`` yet) waits in their stream; it
is an orphan only when no lab host has answered for :data:`UNTAKEN_S`.

:func:`prune` removes runs (and imported runs) older than the retention period, but never a run
a teacher saved in their library. ``manage.py prune`` (idle rooms and expired sessions too) runs
at start-up, every :data:`PRUNE_EVERY_S` while the app serves, and on demand.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from functools import cache

from django.core.management import call_command
from django.db import close_old_connections, transaction
from django.db.models import Max
from django.utils import timezone

from lockviz.lab import events, procs
from lockviz.labhost import heartbeat
from lockviz.live import broadcast
from lockviz.models import Plan, Presence, Run
from lockviz.narrator import narrate
from lockviz.runs import store

log = logging.getLogger(__name__)

HEARTBEAT_S = 2.0  # how often a process touches its runs, and looks for a dead sibling's
PRUNE_EVERY_S = 3600.0  # a serving process prunes this often too, not only at start-up
STALE_S = 7.0  # a live run untouched this long has no process running it
UNWATCHED_S = 20.0  # a run waiting for a lab host that nobody has watched this long is cancelled
UNTAKEN_S = 60.0  # a run queued for lab hosts while none answers this long will not be run
NO_HOST = f"no lab host answered for {UNTAKEN_S:g} s to take it"
APP_GONE = "the app that ran it stopped before it ended (it was killed or restarted)"
LET_GO = "another app process marked this run interrupted: the one running it stopped answering"
_keeper: threading.Thread | None = None
_keeper_lock = threading.Lock()


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
    """Whether a live run's process is still there to run it (or, queued for lab hosts, still
    waiting for one to take it)."""
    stale = timezone.now() - dt.timedelta(seconds=STALE_S)
    if run.host in ("", process_id()):
        return True
    return run.host not in heartbeat.gone([run.host]) and not _orphaned(run, stale)


def settle(run: Run) -> Run:
    """``run``, marked interrupted first if it is live and its process is gone (a page about
    it must not say "running" for a run nobody runs)."""
    if run.live and not running(run):
        interrupt(run, _why(run.host))
        run.refresh_from_db()
    return run


def recover() -> int:
    """Mark every orphaned live run interrupted, with an event saying why; how many."""
    now = timezone.now()
    stale = now - dt.timedelta(seconds=STALE_S)
    live = list(Run.objects.filter(status__in=Run.LIVE).exclude(host=process_id()))
    gone = heartbeat.gone(sorted({run.host for run in live if run.host}))
    untaken = [run for run in live if not run.host]
    unwatched = [run for run in untaken if _unwatched(run, now)]
    for run in unwatched:
        why = f"nobody watched it for {UNWATCHED_S:g} s while it waited for a lab host"
        interrupt(run, why, Run.Status.CANCELLED)
    untaken = [run for run in untaken if run not in unwatched]
    if untaken and not heartbeat.hosts():
        long_ago = now - dt.timedelta(seconds=UNTAKEN_S)
        untaken = [run for run in untaken if run.created < long_ago]
    else:
        untaken = []
    orphans = [run for run in live if run.host and (run.host in gone or _orphaned(run, stale))]
    for run in orphans:
        interrupt(run, _why(run.host))
    for run in untaken:
        interrupt(run, NO_HOST)
    _absent_with_their_process()
    return len(orphans) + len(untaken) + len(unwatched)


def _absent_with_their_process() -> None:
    """A room member's presence is its stream's connection (models.Presence): one held by an
    app process of this machine that is gone (killed with streams open) is gone too."""
    here = f"{socket.gethostname()}:"
    processes = Presence.objects.filter(process__startswith=here).values_list("process")
    for process in {p for (p,) in processes.distinct()} - {process_id()}:
        pid, _, ticks = process.removeprefix(here).partition(":")
        stat = procs.stat(int(pid)) if pid.isdigit() else None
        if stat is None or not stat.alive or str(stat.start_ticks) != ticks:
            Presence.objects.filter(process=process).delete()


def _unwatched(run: Run, now: dt.datetime) -> bool:
    """A run queued for lab hosts with no page open on it, made :data:`UNWATCHED_S` ago (as a
    run waiting in one process's queue is cancelled when nobody watches it: lockviz.runs.
    recorder)."""
    waited = now - dt.timedelta(seconds=UNWATCHED_S)
    return run.status == Run.Status.QUEUED and run.watchers <= 0 and run.created < waited


def _why(host: str) -> str:
    """Why a run of ``host``'s, which is gone, was interrupted."""
    return heartbeat.GONE if heartbeat.lab_host(host) else APP_GONE


def cancel_queued(run_id: str, why: str) -> bool:
    """Cancel a run that has not started (its owner's Finish): False if it is not queued. A
    run waiting in a process's queue sees it within a second (lockviz.runs.admission), a lab
    host takes only a run still queued (lockviz.runs.host)."""
    run = Run.objects.filter(pk=run_id, status=Run.Status.QUEUED).first()
    return run is not None and interrupt(run, why, Run.Status.CANCELLED, (Run.Status.QUEUED,))


@transaction.atomic
def interrupt(
    run: Run, why: str, status: str = Run.Status.INTERRUPTED, only: tuple[str, ...] = Run.LIVE
) -> bool:
    """End a live run (one whose status is one of ``only``) that will never be judged: its
    status, and an event saying why, which every open page of it is sent (once it is stored).
    False when it had ended meanwhile."""
    updated = Run.objects.filter(pk=run.pk, status__in=only).update(
        status=status, error=why, finished=timezone.now()
    )
    if not updated:
        return False  # it ended meanwhile
    t_ms = run.events.aggregate(t=Max("t_ms"))["t"] or 0.0
    kind = "run_interrupted" if status == Run.Status.INTERRUPTED else "run_cancelled"
    # Its seq is the store's to give (lockviz.runs.store.append): the run's writer may still
    # be storing events its engine recorded before it stopped (this process's, at shutdown, is
    # drained first: recorder.interrupt_all), or the host that runs it may be alive after all.
    event = events.parse({"seq": 1, "t_ms": t_ms, "actor": "lab", "kind": kind, "why": why})
    data = events.as_json(event)
    told = narrate([data], run.scenario.get("backend"))[0]
    stored = store.append(run.pk, event, data, told["said"])
    if stored is not None:
        told = {**told, "seq": stored["seq"]}
        transaction.on_commit(lambda: _tell(run.pk, told, status))
    return True


def _tell(run_id: str, event: dict[str, object], status: str) -> None:
    broadcast.publish(run_id, {"type": "run.event", "event": event})
    broadcast.publish(run_id, {"type": "run.status", "status": status, "position": None})


def keep(
    ours: Callable[[], list[str]], let_go: Callable[[str, str], None], forever: bool = False
) -> None:
    """Start this process's keeper (once): every :data:`HEARTBEAT_S` it touches the runs
    ``ours()`` names, marks a dead sibling's runs interrupted, and ``let_go``s a run of ours
    that a sibling gave up on (this process had stopped answering: frozen, cut off). It ends
    when the process has had no run for a while, unless ``forever`` (a serving process)."""
    global _keeper
    with _keeper_lock:
        if _keeper is None or not _keeper.is_alive():
            _keeper = threading.Thread(
                target=_keeping, args=(ours, let_go, forever), name="run-keeper", daemon=True
            )
            _keeper.start()
        elif forever:
            _forever.set()


_forever = threading.Event()


def _keeping(
    ours: Callable[[], list[str]], let_go: Callable[[str, str], None], forever: bool
) -> None:
    if forever:
        _forever.set()
    idle, last_recover, last_prune = 0, 0.0, time.monotonic()  # serve pruned as it started
    while idle < 2 or _forever.is_set():
        try:
            mine = ours()
            idle = 0 if mine else idle + 1
            claim(mine)
            for run_id in given_up(mine):
                let_go(run_id, LET_GO)
            # A serving process looks for a dead sibling's runs at every beat; one that only
            # runs now and then (the CLI, a test) once a minute.
            every = HEARTBEAT_S if _forever.is_set() else 60.0
            if time.monotonic() - last_recover >= every:
                recover()
                last_recover = time.monotonic()
            if _forever.is_set() and time.monotonic() - last_prune >= PRUNE_EVERY_S:
                last_prune = time.monotonic()  # a server up for days: idle rooms go on time
                call_command("prune", verbosity=0)
        except Exception:  # the database is busy or gone for a moment: try again
            log.exception("keeping runs alive")
        finally:
            close_old_connections()
        time.sleep(HEARTBEAT_S)


def given_up(run_ids: list[str]) -> list[str]:
    """Which of these runs (ours) someone else has marked interrupted or cancelled."""
    if not run_ids:
        return []
    return list(
        Run.objects.filter(pk__in=run_ids, status__in=Run.GIVEN_UP).values_list("pk", flat=True)
    )


def prune(days: int) -> int:
    """Remove runs (imported ones too) created more than ``days`` ago, except those a teacher
    saved in their library (lockviz.library: kept until they delete them) and those a lecture
    plan replays (kept as long as the plan); how many."""
    cutoff = timezone.now() - dt.timedelta(days=days)
    old = Run.objects.filter(created__lt=cutoff, saved__isnull=True).exclude(status__in=Run.LIVE)
    old = old.exclude(pk__in=Plan.runs_replayed())
    count = old.count()
    old.delete()
    return count
