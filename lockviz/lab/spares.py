"""Warm spares: servers started ahead of the runs that will take them, each used once.

One module past the usual ~300 lines, on purpose: the pool's stock, its sizing and its one
filling thread share one lock and one state, read top to bottom.

A learner who presses Run should not watch three JVMs boot. The process that runs labs keeps a
:class:`SparePool`: for each *set* a run asks of one kind of server (``redis-1`` + ``storage``,
the five Redlock nodes + ``storage``, ``zk-1``, the ensemble ``zk-1``..``zk-3``, ``pg-1`` with
its PgBouncer, ``etcd-1``, the cluster ``etcd-1``..``etcd-3``, the three Redis nodes with their
three Sentinels + ``storage``; with the options those servers read: :class:`SpareKey`) it keeps
a few sets started and ready, in a dir of their own under the lab base (``lockviz-spare-*``,
recorded in its ``lab.json`` like a run's, so a killed app's spares are swept like its runs).

* **Used once, never reset.** :meth:`SparePool.take` hands a ready set to one run and forgets
  it: the run's :class:`~lockviz.lab.labs.ServerSet` owns it from then on, stops it and removes
  its dir when the run ends. Nothing is wiped or reused, so a run starts from a server no one
  has written to: Redis's fencing counter, etcd's revision, ZooKeeper's lock sequence and
  PostgreSQL's fencing sequence start where a fresh server's do (the readiness checks only
  read, except PostgreSQL's ``CREATE SEQUENCE``, which a fresh server's start runs too, and
  ZooKeeper's warm-up, below, whose few transactions move only the zxids on).
* **Warmed before it is handed out.** A set joins the stock once its servers are ready *and*
  have each served a client once (:meth:`~lockviz.lab.servers.base.Server.warm_up`: a
  ZooKeeper JVM's first session and requests run its request path cold, which the run's own
  first session then need not wait for; the other kinds serve their first client as fast as
  their next and do nothing). A set whose warm-up fails is stocked all the same, cold: a
  run on it starts as it did before there was a warm-up (stopping it instead left a class's
  next runs to boot their own ensemble, 5-7 s, while the set's start waited out its pause).
* **Faults as on a fresh server.** A spare is started exactly as a run's own server is (the
  same ``create``/``launch``/``wait_ready``): Redis under libfaketime reading its own clock file
  (a clock jump rewrites the file, whenever the process started), a restart relaunches it on the
  same port and data dir, a kill is kill -9 of the same child. Client links are proxied per run
  (:mod:`lockviz.lab.provision` starts them on the servers it is given); an ensemble's own mesh
  of proxies is the spare's, as it is a fresh ensemble's.
* **Sized by demand and memory.** From the start only the set free play and the first lessons
  ask for (``redis-1`` + ``storage``: :func:`first_keys`) is kept, at ``per_kind``
  (``LOCKVIZ_SPARES``, default 1; 0 turns the pool off); any other set is kept once a run has
  asked for it, for as long as one did in the last :data:`DEMAND_WINDOW_S`; a set that ran dry
  lately (asks that found no spare in the last :data:`BUSY_WINDOW_S`: a class pressing at once,
  not one learner pressing again) gets one more per such ask, up to ``most``
  (``LOCKVIZ_SPARES_MOST``, default 4). A set nobody asked for that long is **released**: its
  spares stop, and an app nobody uses holds one Redis set, not a lab's worth of JVMs
  (docs/performance.md, "Memory"). Every spare kept costs the machine's cores to start (a JVM
  ensemble: seconds of CPU), so a stock that keeps up does not grow. No spare starts while the
  machine has less than :data:`RESERVE_MB` of memory available beyond what the spare costs
  (:func:`lockviz.lab.capacity.cost`).
* **Never before a learner's run.** No spare starts while a run is waiting for the lab or
  starting, nor within :data:`SETTLE_S` of a take: a run's own start, and its first events, come
  first. One spare starts at a time, in the pool's own thread, and where this process may raise
  a priority back (:func:`lockviz.lab.procs.may_restore`) its servers boot at the low priority
  of a run that yields (:data:`lockviz.lab.procs.LOW_NICENESS`): a run that comes while a JVM
  boots gets the cores first. A spare taken is raised back before its run plays on it.
* **Stopped with its process.** :meth:`SparePool.stop` (registered with :mod:`atexit` for the
  process's pool) stops every spare and removes its dir; a process killed outright takes its
  spares with it (``PR_SET_PDEATHSIG``, :mod:`lockviz.lab.procs`) and the next start-up's sweep
  removes their dirs.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import time
from collections import deque
from dataclasses import dataclass

from lockviz.lab import capacity, procs, registry
from lockviz.lab.errors import LabError
from lockviz.lab.labs import ServerSet, each_at_once, start_group
from lockviz.lab.servers import module_for
from lockviz.lab.servers.base import ServerOptions
from lockviz.lab.sparekeys import SpareKey, first_keys, key_for

log = logging.getLogger(__name__)

DEMAND_WINDOW_S = 300.0  # a set asked for this recently is kept warm
BUSY_WINDOW_S = 60.0  # asks this recent that found no spare make a set's stock grow
RESERVE_MB = 1024  # memory a spare must leave available
SETTLE_S = 1.0  # after a take: the run that took a spare draws its first events first
FAILED_PAUSE_S = 30.0  # after a spare failed to start, its set waits this long


def available_mb() -> float:
    """MemAvailable (``/proc/meminfo``), MiB; infinite where it cannot be read."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("inf")


@dataclass
class Spare:
    """A set of one kind's servers, started and ready, in a dir of its own; never used yet."""

    key: SpareKey
    servers: ServerSet
    ready_ns: int

    def alive(self) -> bool:
        """Every process of every server still runs (a spare whose process died is dropped)."""
        return all(
            proc.poll() is None
            for server in self.servers.servers.values()
            for proc in (server.proc, *server.helpers())
            if proc is not None
        )


class SparePool:
    """This process's warm spares (see the module's doc). Thread-safe; :meth:`start` once."""

    def __init__(
        self,
        per_kind: int = 1,
        most: int = 4,
        base_dir: str | None = None,
        warm: list[SpareKey] | None = None,
        reserve_mb: float = RESERVE_MB,
    ) -> None:
        if per_kind < 0 or most < per_kind:
            raise LabError(f"spares: per kind {per_kind} and most {most} (0 <= per kind <= most)")
        self.per_kind, self.most, self.base_dir = per_kind, most, base_dir
        self.reserve_mb = reserve_mb
        self._warm = warm  # None: :func:`first_keys`
        self._ready: dict[SpareKey, list[Spare]] = {}
        self._starting: ServerSet | None = None
        self._asked: deque[tuple[float, SpareKey]] = deque()
        self._dry: deque[tuple[float, SpareKey]] = deque()  # asks that found none ready
        self._failed: dict[SpareKey, float] = {}
        self._changed = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.taken = 0  # spares handed to runs
        self.missed = 0  # asks that found none ready
        self.released = 0  # spares stopped because nobody asked for their set lately
        self._low = procs.may_restore()  # boot spares low: a take raises them back
        self._niceness = os.getpriority(os.PRIO_PROCESS, 0)

    # -- what runs do -----------------------------------------------------------------------

    def take(self, names: list[str], options: ServerOptions | None = None) -> ServerSet | None:
        """A ready set of ``names`` (one kind's servers) for one run, never handed out again;
        None when none is ready (the run starts its own). A replacement starts behind it."""
        key = key_for(names, options)
        with self._changed:
            self._asked.append((time.monotonic(), key))
            stock = self._ready.get(key, [])
            found = None
            while stock and found is None:
                spare = stock.pop(0)
                if spare.alive():
                    found = spare
                else:  # a process of it died while it waited: it is no one's now
                    threading.Thread(target=spare.servers.close, daemon=True).start()
            if found is None:
                self.missed += 1
                self._dry.append((time.monotonic(), key))
            else:
                self.taken += 1
            self._changed.notify_all()
        if found is None:
            log.info("no spare of %s ready: the run starts its own", key)
        else:
            if self._low:  # booted low; its run plays at the app's own priority
                for server in found.servers.servers.values():
                    for pid in server.pids():
                        procs.restore(pid, self._niceness)
            log.info(
                "spare %s taken (ready %.1f s)", key, (time.monotonic_ns() - found.ready_ns) / 1e9
            )
        return found.servers if found is not None else None

    def ready(self, key: SpareKey) -> int:
        with self._changed:
            return len(self._ready.get(key, []))

    def wait_ready(self, key: SpareKey, count: int = 1, timeout_s: float = 60.0) -> bool:
        """Wait until ``count`` spares of ``key`` are ready (tests, benches)."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while len(self._ready.get(key, [])) < count:
                left = deadline - time.monotonic()
                if left <= 0 or self._stopping:
                    return False
                self._changed.wait(left)
            return True

    def pids(self) -> list[int]:
        """Every process of every spare ready or starting."""
        with self._changed:
            sets = [s.servers for stock in self._ready.values() for s in stock]
            sets += [self._starting] if self._starting is not None else []
            return [pid for s in sets for server in s.servers.values() for pid in server.pids()]

    # -- its life ---------------------------------------------------------------------------

    def start(self) -> SparePool:
        with self._changed:
            if self._thread is None and self.per_kind > 0:
                self._thread = threading.Thread(target=self._fill, name="lab-spares", daemon=True)
                self._thread.start()
        return self

    def stop(self, timeout_s: float = 30.0) -> None:
        """Stop every spare (ready, or starting now) and remove its dir; the pool's thread ends."""
        with self._changed:
            self._stopping = True
            sets = [s.servers for stock in self._ready.values() for s in stock]
            self._ready.clear()
            starting = self._starting
            self._changed.notify_all()
        if starting is not None:  # its start fails at once; the thread closes it
            with contextlib.suppress(Exception):
                for server in list(starting.servers.values()):
                    server.kill()
        if self._thread is not None:
            self._thread.join(timeout_s)
        each_at_once(s.close for s in sets)

    # -- inside -----------------------------------------------------------------------------

    def target(self, key: SpareKey, now: float | None = None) -> int:
        """How many spares of ``key`` to keep: by demand (see the module's doc)."""
        now = time.monotonic() if now is None else now
        asked = [t for t, k in self._asked if k == key and now - t <= DEMAND_WINDOW_S]
        lately = sum(1 for t, k in self._dry if k == key and now - t <= BUSY_WINDOW_S)
        if not asked and key not in (self._warm or []):
            return 0
        return min(self.most, self.per_kind + lately)

    def _next(self) -> SpareKey | None:
        """The set most short of its target (None: every set has its spares)."""
        now = time.monotonic()
        while self._asked and now - self._asked[0][0] > DEMAND_WINDOW_S:
            self._asked.popleft()
        while self._dry and now - self._dry[0][0] > BUSY_WINDOW_S:
            self._dry.popleft()
        keys = dict.fromkeys([*(self._warm or []), *(k for _, k in self._asked)])
        short = [
            (self.target(key, now) - len(self._ready.get(key, [])), key)
            for key in keys
            if now - self._failed.get(key, -FAILED_PAUSE_S) >= FAILED_PAUSE_S
        ]
        short = [(n, key) for n, key in short if n > 0]
        return max(short, key=lambda item: item[0])[1] if short else None

    def _fill(self) -> None:
        if self._warm is None:
            self._warm = first_keys()
        if self._low:  # this thread, and the servers it starts, at a yielding run's priority
            procs.yield_from(threading.get_native_id(), [])
        began, stocked = time.monotonic(), False
        while True:
            self._release()
            with self._changed:
                key = None if self._stopping else self._next()
                if key is None and not self._stopping:
                    if not stocked:  # once: how long the first stock took (docs/performance.md)
                        stocked = True
                        log.info("spares: every set stocked after %.1f s", time.monotonic() - began)
                    self._changed.wait(1.0)
                    continue
                if self._stopping:
                    return
            assert key is not None
            cost = capacity.cost(list(key.names)).mb
            if available_mb() - cost < self.reserve_mb:
                self._pause(5.0)  # memory is short: no spare
                continue
            self._quiet()
            self._start_one(key)

    def _pause(self, seconds: float) -> None:
        with self._changed:
            if not self._stopping:
                self._changed.wait(seconds)

    def _quiet(self) -> None:
        """Let every run waiting for the lab or starting start first, and one that just took a
        spare show its first events."""

        def busy() -> bool:
            machine = capacity.machine()
            last_take = self._asked[-1][0] if self._asked else 0.0
            recent = time.monotonic() - last_take < SETTLE_S
            return bool(machine.starting) or machine.waiting > 0 or recent

        while busy() and not self._stopping:
            time.sleep(0.1)

    def _release(self) -> None:
        """Stop the spares of every set beyond what is kept of it now (nobody asked lately)."""
        with self._changed:
            now, gone = time.monotonic(), []
            for key, stock in self._ready.items():
                while len(stock) > self.target(key, now):
                    gone.append(stock.pop())
            self.released += len(gone)
        for spare in gone:
            log.info("spares: %s released (nobody asked for it lately)", spare.key)
        if gone:
            each_at_once(spare.servers.close for spare in gone)

    def _start_one(self, key: SpareKey) -> None:
        """Start one set of ``key``'s servers in a new dir; ready, it joins the stock."""
        started = ServerSet({}, registry.new_run_dir(prefix="lockviz-spare-", base=self.base_dir))
        with self._changed:
            self._starting = started  # what stop() kills if it comes now
        try:
            start_group(started, module_for(key.names[0]), list(key.names), key.options_dict)
        except Exception as exc:
            started.close()
            with self._changed:
                self._starting = None
                self._failed[key] = time.monotonic()
                stopping = self._stopping
            if not stopping:
                log.warning(
                    "spares: %s did not start (%s); again in %.0f s", key, exc, FAILED_PAUSE_S
                )
            return
        try:
            each_at_once(server.warm_up for server in started.servers.values())
        except LabError as exc:  # slower to start a run on, not wrong: stocked cold
            log.warning("spares: %s stocked cold (%s)", key, exc)
        with self._changed:
            self._starting = None
            if not self._stopping:
                self._ready.setdefault(key, []).append(Spare(key, started, time.monotonic_ns()))
                self._changed.notify_all()
                return
        started.close()


_pool: SparePool | None = None
_pool_lock = threading.Lock()


def setting(name: str, default: int) -> int:
    """An integer setting from the environment, with a clear error when it is not one."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        raise LabError(f"{name}={text!r}: give a whole number (0 turns spares off)") from None
    if not 0 <= value <= 16:
        raise LabError(f"{name}={value}: give 0 to 16")
    return value


def process_pool() -> SparePool | None:
    """This process's pool, started on first call and stopped at exit (None when
    ``LOCKVIZ_SPARES=0``)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            per_kind = setting("LOCKVIZ_SPARES", 1)
            if per_kind == 0:
                return None
            most = max(per_kind, setting("LOCKVIZ_SPARES_MOST", 4))
            _pool = SparePool(per_kind, most).start()
            atexit.register(_pool.stop)
        return _pool
