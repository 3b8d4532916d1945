"""Warm processes: a run's client processes and proxy, started before the run needs them.

A Python process that imports a lock client costs ~120 ms of CPU (and as long on the clock)
before it can do anything, and every run needs one per client plus its network proxy. So the
lab keeps a few of each started and idle. A warm process has imported everything it needs, said
so (``{"kind": "_warm"}`` on its stdout) and waits, blocked on its stdin, for the first line
that says what it is for: a client's :class:`~lockviz.lab.config.ClientConfig`
(:mod:`lockviz.lab.worker`), a proxy's links (:mod:`lockviz.lab.proxy`). A run takes one
(:meth:`Pool.take`) and the pool starts another in the background.

A pooled process is spawned like every other child (:func:`lockviz.lab.procs.spawn`, from the
one spawner thread), so it dies with the app even while it waits, killed or not. When the pool
is empty a run starts a process of its own, as cold as before. The pool refills one process at
a time, and only while :data:`may_refill` says the machine has room: a warm start is work a
running run would otherwise get (:mod:`lockviz.lab.capacity` gives it).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
import os
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable

from lockviz.lab import capacity, procs
from lockviz.lab.errors import LabError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WARM = "_warm"  # what a warm process says once it has imported everything
WORKERS, PROXIES = 2, 1  # idle processes kept: a typical run's clients and its proxy

Proc = subprocess.Popen[str]


def announce_warm() -> None:
    """In a pooled process: say it is warm (the pool reads this line before handing it over)."""
    sys.stdout.write(json.dumps({"kind": WARM}) + "\n")
    sys.stdout.flush()


class Pool:
    """Idle warm processes of one module (``python -m <module>``), ``size`` of them kept."""

    def __init__(
        self,
        module: str,
        size: int,
        may_refill: Callable[[], bool] = lambda: True,
        env: dict[str, str] | None = None,
    ) -> None:
        self.module = module
        self.size = size
        self.may_refill = may_refill  # asked before each warm start in the background
        self.env = {**os.environ, "PYTHONPATH": ROOT, "PYTHONUNBUFFERED": "1", **(env or {})}
        self._idle: deque[Proc] = deque()
        self._changed = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None

    def take(self) -> Proc:
        """A warm process, waiting for its first line; a freshly started one if none is idle."""
        self._ensure_refilling()
        with self._changed:
            while self._idle:
                proc = self._idle.popleft()
                self._changed.notify_all()  # one fewer: refill
                if proc.poll() is None:
                    return proc
        return self._start()  # none ready: as cold as a run ever was

    def warm(self) -> None:
        """Start keeping warm processes now (before the first run asks for one)."""
        self._ensure_refilling()

    @property
    def idle(self) -> int:
        with self._changed:
            return len(self._idle)

    def close(self) -> None:
        """Stop the idle processes and the refilling (the app is stopping)."""
        with self._changed:
            self._closed = True
            idle, self._idle = list(self._idle), deque()
            self._changed.notify_all()
        procs.run_each(functools.partial(_stop, proc) for proc in idle)

    def _start(self) -> Proc:
        proc: Proc = procs.spawn(
            [sys.executable, "-m", self.module],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=self.env,
            cwd=ROOT,
        )
        assert proc.stdout is not None
        line = proc.stdout.readline()
        try:
            warm = json.loads(line).get("kind") == WARM
        except (ValueError, AttributeError):
            warm = False
        if not warm:
            _stop(proc)
            raise LabError(f"{self.module} did not start: {line.strip() or 'it exited'}")
        return proc

    def _ensure_refilling(self) -> None:
        with self._changed:
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(
                    target=self._refill, name=f"pool-{self.module}", daemon=True
                )
                self._thread.start()

    def _refill(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._closed or len(self._idle) < self.size, 1.0)
                if self._closed:
                    return
                if len(self._idle) >= self.size:
                    continue
            if not self.may_refill():
                with self._changed:
                    self._changed.wait(0.2)  # the machine is busy: ask again soon
                continue
            try:
                proc = self._start()
            except (LabError, OSError):
                with self._changed:
                    self._changed.wait(1.0)  # cannot start one now: try again later
                continue
            with self._changed:
                if self._closed:
                    _stop(proc)
                    return
                self._idle.append(proc)


def _stop(proc: Proc) -> None:
    if proc.stdin is not None:
        with contextlib.suppress(OSError, ValueError):
            proc.stdin.close()  # a waiting process reads EOF and exits
    procs.stop(proc, grace_s=1.0)
    if proc.stdout is not None:
        proc.stdout.close()


WORKER, PROXY = "lockviz.lab.worker", "lockviz.lab.proxy"
_pools: dict[str, Pool] = {}
_pools_lock = threading.Lock()


def pool(module: str) -> Pool:
    """This process's pool of warm ``module`` processes (:data:`WORKER`, :data:`PROXY`)."""
    with _pools_lock:
        if module not in _pools:
            size = {WORKER: WORKERS, PROXY: PROXIES}[module]
            _pools[module] = Pool(module, size, capacity.machine().has_room)
            if len(_pools) == 1:
                atexit.register(close_all)
        return _pools[module]


def warm_all() -> None:
    """Start warming every pool now: the first run after start-up need not wait either."""
    for module in (WORKER, PROXY):
        pool(module).warm()


def close_all() -> None:
    with _pools_lock:
        found = list(_pools.values())
    procs.run_each(found_pool.close for found_pool in found)
