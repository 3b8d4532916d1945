"""CPU-bound work of a request out of the web process: a few niced worker processes, bounded.

Daphne serves every request from one process, and Python runs one thread of it at a time. An
import's parse and words (a second of CPU for the largest) or a long run's first Mermaid export
ran in a request's thread, and every other request waited for the interpreter in turn: another
user's ``/lessons/`` went from 45 to 146 ms at p99 while they ran (docs/reliability.md). Here
that work runs in other processes, which the kernel schedules on the other core, below the web
process:

* **a pool of ``LOCKVIZ_WORK_PROCESSES`` processes** (default 2), started by ``spawn`` (a fork of
  a threaded Daphne could copy a lock some thread holds) on the first job, each with Django set
  up and then its niceness raised to :data:`NICENESS`: when the cores are scarce, the web
  process (niceness 0) runs first (on a machine loaded by others, a job takes longer);
* **bounded**: at most :data:`QUEUED_PER_PROCESS` jobs per process are running or waiting; past
  that, :func:`run` refuses at once with :class:`~lockviz.errors.Busy` (503, "try again in a
  few seconds"), not a queue without end. A job that outlasts :data:`TIMEOUT_S` is refused the same
  way (its process goes on with it; its place stays taken until it ends);
* **no orphan**: a worker ignores Ctrl-C (the app ends it: ``atexit`` in
  :mod:`concurrent.futures` sends each its end and waits) and watches its parent: once the app
  is gone, however it died (``kill -9`` too), the worker exits within :data:`WATCH_S`.
  (``PR_SET_PDEATHSIG`` fires when the *thread* that forked the child ends, and the pool forks
  from whichever request thread submits first, so it would kill a worker at random.)

A job is a module-level function (the child imports it by name) taking and returning values
that pickle; whatever :class:`~lockviz.errors.Refusal` it raises is raised here with its
sentences (:meth:`lockviz.errors.Refusal.__reduce__`). Keep what crosses small: text and
tuples, not thousands of dicts (unpickling holds the interpreter).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from typing import ParamSpec, TypeVar

import django
from django.conf import settings

from lockviz.errors import Busy

log = logging.getLogger(__name__)
NICENESS = 10  # as the lab's lowered work (lockviz.lab.procs.LOW_NICENESS)
QUEUED_PER_PROCESS = 2  # jobs running or waiting per worker process before refusing
WATCH_S = 0.5
TIMEOUT_S = 120.0  # the largest import takes about a second of a worker's CPU
BUSY = "The app is busy with other imports and exports just now: try again in a few seconds."

_P = ParamSpec("_P")
_T = TypeVar("_T")

_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None
_slots: threading.BoundedSemaphore | None = None


def run(job: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """``job(*args, **kwargs)`` in a worker process, this thread waiting for its result; its
    refusals raised here; :class:`Busy` if the pool is full or the job outlasts its time."""
    pool, slots = _started()
    if not slots.acquire(blocking=False):
        raise Busy(BUSY, retry_after_s=5)
    try:
        future = pool.submit(job, *args, **kwargs)
        try:
            return future.result(timeout=TIMEOUT_S)
        except FutureTimeout:
            raise Busy(BUSY, retry_after_s=5) from None
    except BrokenProcessPool:  # a worker died (killed, out of memory): a fresh pool next time
        log.warning("a worker process died; the pool starts again at the next job")
        _forget(pool)
        raise Busy(BUSY, retry_after_s=5) from None
    finally:
        slots.release()


def pids() -> list[int]:
    """The worker processes alive now (none before the first job)."""
    with _lock:
        found = getattr(_pool, "_processes", None) or {}
        return [int(pid) for pid in found]


def capacity() -> int:
    """How many jobs may be running or waiting at once before :func:`run` refuses."""
    return int(settings.LOCKVIZ_WORK_PROCESSES) * QUEUED_PER_PROCESS


def shutdown() -> None:
    """End the workers (they are started again by the next job)."""
    with _lock:
        pool = _pool
    if pool is not None:
        _forget(pool)
        pool.shutdown(wait=True, cancel_futures=True)


def _started() -> tuple[ProcessPoolExecutor, threading.BoundedSemaphore]:
    global _pool, _slots
    with _lock:
        if _slots is None:
            _slots = threading.BoundedSemaphore(capacity())
        if _pool is None:
            _pool = ProcessPoolExecutor(
                max_workers=int(settings.LOCKVIZ_WORK_PROCESSES),
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_worker_start,
                initargs=(os.getpid(), os.environ.get("DJANGO_SETTINGS_MODULE", "")),
            )
        return _pool, _slots


def _forget(pool: ProcessPoolExecutor) -> None:
    global _pool
    with _lock:
        if _pool is pool:
            _pool = None


def _worker_start(parent: int, settings_module: str) -> None:
    """In each worker, once: below the web process, deaf to Ctrl-C, gone with the app, and
    Django set up (a job reads settings, the narrator, the scenarios)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch, args=(parent,), name="watch-parent", daemon=True).start()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", settings_module or "lockviz.settings")
    django.setup()  # at the app's priority: low, a busy machine would stretch it to minutes
    os.nice(max(0, NICENESS - os.nice(0)))  # the jobs: below the web process


def _watch(parent: int) -> None:
    """Exit as soon as the app that started this worker is gone (its pid no longer ours)."""
    stop = threading.Event()
    while not stop.wait(WATCH_S):
        if os.getppid() != parent:
            os._exit(0)
