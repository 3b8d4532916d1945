"""How many runs the machine can take at once: measured, not fixed.

A run is cheap while it plays (its servers and clients mostly wait) and dearer while it starts
(servers, a proxy, client processes, watchers). Too many at
once and the machine falls behind every run's schedule, and stories come out bunched or
inconclusive; too few and a class waits for nothing. So :class:`Machine` watches two things:

* **how busy the machine is**: the share of all its cores at work (``/proc/stat``, every
  0.25 s, smoothed over about a second) — everything on the machine counts, other work too;
* **how late the runs are**: every engine reports each step's lateness and each client's
  (:meth:`Machine.late`).

and adapts how many runs may play at once (:attr:`Machine.limit`, from :data:`MIN_RUNS` to the
ceiling, ``LOCKVIZ_MAX_RUNS``): one fewer than are playing when a step comes later than
:data:`LATE_MS` (well inside the 50 ms at which a schedule shifts), half as many when one comes
later than that or the cores are saturated, and one more when the machine is comfortable, every
slot is taken and runs are waiting: in its own line, or, for a lab host, in the stream it reads
only when it has a free slot (:meth:`Machine.wanted`; without it a lab host's limit would never
pass :data:`MIN_RUNS`, whatever its ceiling). A new ceiling holds at once. A queued run
starts (:meth:`Machine.enter`) in its turn, when the limit has room, no other run is starting,
and the cores are not saturated or fewer than :data:`MIN_RUNS` runs play (a lone user never
waits for a busy machine): starts are the bursts, one at a time keeps them from piling up.

A presenter's run (:meth:`Machine.join` with ``first``) goes ahead of the line, into a slot
kept for it (:data:`RESERVED`), and does not wait for other starts or saturated cores; while
one is queued or playing, the other runs' processes yield the CPU to it
(:func:`lockviz.lab.procs.yield_from`).

What a set of servers costs the machine while it runs, in processes and resident memory
(:func:`cost`, from :data:`SERVER_COST`, measured here), is counted here too: the warm spares
(:mod:`lockviz.lab.spares`) start none that the machine's memory could not hold. A group of
servers that talk to each other (a ZooKeeper ensemble, an etcd cluster, Redis with its replicas
and Sentinels) has one more process, its proxy (:data:`MESH_COST`).

One module past the usual ~300 lines, on purpose: how many runs the machine takes and what the
servers of one cost it are one question, asked of one machine.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass
from typing import Protocol

from lockviz.catalogue import BACKENDS, STORAGE, server_kind
from lockviz.lab.scheduler import TOLERANCE_MS

log = logging.getLogger(__name__)
SAMPLE_S = 0.25
LATE_MS = 25.0  # a step this late means the machine is full: take one fewer
BEHIND_MS = TOLERANCE_MS  # this late, a schedule shifts: take half as many
LATE_WINDOW_S = 2.0  # lateness counts this long
ADAPT_EVERY_S = 0.5
COOL_DOWN_S = 2.0  # after taking fewer, wait this long for it to show before taking fewer again
MIN_RUNS = 2  # runs that may always play at once: a lone user never waits for a busy machine
FULL = 0.92  # of all cores busy: saturated
COMFORTABLE = 0.70  # of all cores busy: room for one more run
RESERVED = 1  # runs past the limit that only a presenter's run may take


class Machine:
    def __init__(self, ceiling: int, start_limit: int = MIN_RUNS, sample: bool = True) -> None:
        self._changed = threading.Condition()
        self._ceiling = max(1, ceiling)
        self.limit = min(self._ceiling, start_limit)
        self.busy = 0.0  # share of all cores at work, smoothed
        self.running: set[object] = set()  # runs admitted, starting or playing
        self.starting: set[object] = set()  # runs admitted and not yet playing
        self._queue: deque[object] = deque()
        self._first: set[object] = set()  # presenters' runs (see join)
        self._lateness: deque[tuple[float, float]] = deque()  # (monotonic s, ms)
        self._last_cut = 0.0
        self._last_adapt = 0.0
        self._elsewhere = 0  # runs waiting for this machine outside its line (see wanted)
        self._sampler: threading.Thread | None = None
        self._sample = sample

    @property
    def ceiling(self) -> int:
        return self._ceiling

    @ceiling.setter
    def ceiling(self, ceiling: int) -> None:
        """The most runs at once (``LOCKVIZ_MAX_RUNS``): the limit never stays above it."""
        with self._changed:
            self._ceiling = max(1, ceiling)
            self.limit = min(self.limit, self._ceiling)

    def wanted(self, count: int) -> None:
        """``count`` runs wait for this machine outside its own line: a lab host's requests in
        the stream (lockviz.runs.host), which it reads only when it has a free slot. While
        they wait and every slot is taken, a comfortable machine takes one more, as it does for
        runs waiting in its line."""
        with self._changed:
            self._elsewhere = max(0, count)
            self._adapt()

    # -- what the runs report ---------------------------------------------------------------

    def late(self, ms: float) -> None:
        """A step, a thaw or a client's command began ``ms`` after it could have."""
        if ms > LATE_MS:
            with self._changed:
                self._lateness.append((time.monotonic(), ms))

    # -- admission --------------------------------------------------------------------------

    def join(self, ticket: object, first: bool = False) -> None:
        """Put ``ticket`` in line now (admission counts it from here); :meth:`enter` waits.

        ``first`` (a presenter's run, which the class watches on the projector): ahead of every
        ticket not first, and it may start past the limit by :data:`RESERVED`, on saturated
        cores and while another run starts (no run not first starts while it does): its story
        is the one that must be kept."""
        with self._changed:
            if ticket in self._queue:
                return
            if first:
                self._first.add(ticket)
                ahead = sum(1 for t in self._queue if t in self._first and t != ticket)
                self._queue.insert(ahead, ticket)
            else:
                self._queue.append(ticket)

    def enter(self, ticket: object, timeout_s: float) -> bool:
        """Wait (at most ``timeout_s``) for ``ticket``'s turn to start a run; True once it may.

        Tickets start in the order they first asked. A ticket that gives up keeps its place:
        ask again, or :meth:`forget` it.
        """
        self._ensure_sampling()
        deadline = time.monotonic() + timeout_s
        with self._changed:
            if ticket not in self._queue:
                self._queue.append(ticket)
            while not self._may_start(ticket):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(min(left, SAMPLE_S))
            self._queue.remove(ticket)
            self.running.add(ticket)
            self.starting.add(ticket)
            self._changed.notify_all()
            return True

    def started(self, ticket: object) -> None:
        """``ticket``'s run has started playing: the next one may start."""
        with self._changed:
            self.starting.discard(ticket)
            self._changed.notify_all()

    def leave(self, ticket: object) -> None:
        """``ticket``'s run has ended (or never will start)."""
        with self._changed:
            self.running.discard(ticket)
            self.starting.discard(ticket)
            self._first.discard(ticket)
            if ticket in self._queue:
                self._queue.remove(ticket)
            self._changed.notify_all()

    forget = leave

    def position(self, ticket: object) -> int | None:
        """1 for the next run to start; None when not waiting."""
        with self._changed:
            return self._queue.index(ticket) + 1 if ticket in self._queue else None

    def queued(self) -> list[str]:
        """The tickets waiting for their turn, in order."""
        with self._changed:
            return [str(ticket) for ticket in self._queue]

    @property
    def waiting(self) -> int:
        with self._changed:
            return len(self._queue)

    # -- inside -----------------------------------------------------------------------------

    def _may_start(self, ticket: object) -> bool:
        self._adapt()
        if not self._queue or self._queue[0] != ticket:
            return False
        if ticket in self._first:  # a presenter's run: the reserved room, whatever the load
            return len(self.running) < self.limit + RESERVED
        return (
            len(self.running) < self.limit
            and not self.starting  # a presenter's run may be starting: this one waits too
            and (self.busy < FULL or len(self.running) < MIN_RUNS)
        )

    def _recently_late(self) -> float:
        """The most any step was late lately, beyond :data:`LATE_MS` (0: none was)."""
        cutoff = time.monotonic() - LATE_WINDOW_S
        while self._lateness and self._lateness[0][0] < cutoff:
            self._lateness.popleft()
        return max((ms for _, ms in self._lateness), default=0.0)

    def _adapt(self) -> None:
        """Fewer runs when late or saturated, one more when comfortable and runs wait."""
        now = time.monotonic()
        if now - self._last_adapt < ADAPT_EVERY_S:
            return
        self._last_adapt = now
        before, late = self.limit, self._recently_late()
        if late or self.busy >= FULL:
            if now - self._last_cut >= COOL_DOWN_S:
                room = min(self.limit, len(self.running))
                # Behind schedule or saturated: half as many. A little late: one fewer.
                fewer = room // 2 if late > BEHIND_MS or self.busy >= FULL else room - 1
                self.limit = min(self.ceiling, max(MIN_RUNS, fewer))
                self._last_cut = now
        elif (
            self.busy < COMFORTABLE
            and (self._queue or self._elsewhere)
            and len(self.running) >= self.limit
        ):
            self.limit = min(self.ceiling, self.limit + 1)
        if self.limit != before:
            log.info(
                "runs at once: %d (was %d); %d running, %d waiting, cores %.0f%% busy%s",
                self.limit, before, len(self.running), len(self._queue), 100 * self.busy,
                ", runs late" if self._lateness else "",
            )  # fmt: skip

    def _ensure_sampling(self) -> None:
        with self._changed:
            if self._sample and self._sampler is None:
                self._sampler = threading.Thread(
                    target=self._sampling, name="machine-sampler", daemon=True
                )
                self._sampler.start()

    def _sampling(self) -> None:
        last = _cpu_ticks()
        while True:
            time.sleep(SAMPLE_S)
            now = _cpu_ticks()
            busy_ticks, all_ticks = now[0] - last[0], now[1] - last[1]
            last = now
            share = busy_ticks / all_ticks if all_ticks > 0 else 0.0
            with self._changed:
                self.busy = 0.5 * self.busy + 0.5 * min(1.0, share)  # about a second's memory
                self._adapt()
                self._changed.notify_all()


def _cpu_ticks() -> tuple[int, int]:
    """(busy, all) clock ticks of every core since boot."""
    with open("/proc/stat") as f:
        fields = [int(n) for n in f.readline().split()[1:9]]
    user, nice, system, idle, iowait, irq, softirq, steal = fields
    busy = user + nice + system + irq + softirq + steal
    return busy, busy + idle + iowait


class Ticket:
    """One run's place at the machine, as its engine reports to it (a :class:`Meter`)."""

    def __init__(self, machine: Machine, key: str) -> None:
        self.machine = machine
        self.key = key

    def late(self, ms: float) -> None:
        self.machine.late(ms)

    def started(self) -> None:
        self.machine.started(self.key)

    def crowded(self) -> bool:
        return self.machine.waiting > 0


class Meter(Protocol):
    """What a run engine tells the machine: how late it is, and when it has started; and what
    it asks: whether other runs wait for a slot (an idle free-play session then ends sooner)."""

    def late(self, ms: float) -> None: ...

    def started(self) -> None: ...

    def crowded(self) -> bool: ...


DEFAULT_CEILING = 24
_machine: Machine | None = None
_machine_lock = threading.Lock()


def machine() -> Machine:
    """This process's view of the machine. The app sets its ceiling (``LOCKVIZ_MAX_RUNS``)."""
    global _machine
    with _machine_lock:
        if _machine is None:
            _machine = Machine(DEFAULT_CEILING)
        return _machine


@dataclass(frozen=True)
class Cost:
    """What servers cost the machine while they run."""

    processes: int
    mb: float  # resident memory, MiB

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.processes + other.processes, self.mb + other.mb)


# One server of each kind, resident (measured on the dev machine, rounded up): a redis-server
# under libfaketime 12.5 MiB, a Sentinel 12, a ZooKeeper JVM 60-80, PostgreSQL with PgBouncer
# 60, an etcd member 27-40 (alone it keeps a larger cache).
SERVER_COST: dict[str, Cost] = {
    "redis": Cost(1, 13),
    "sentinel": Cost(1, 12),
    "zk": Cost(1, 80),
    "pg": Cost(2, 60),
    "etcd": Cost(1, 40),
}
MESH_COST = Cost(1, 35)  # a group's proxy process (Python, asyncio): 34 MiB measured


def cost(names: list[str]) -> Cost:
    """What the servers ``names`` cost together: each server, and each group's proxy."""
    counts = Counter(kind.prefix for name in names if (kind := server_kind(name)) is not None)
    total = Cost(0, 0.0)
    for prefix, many in counts.items():
        each = SERVER_COST.get(prefix, Cost(1, 50))
        total += Cost(each.processes * many, each.mb * many)
    locks = Counter(p for name in names if name != STORAGE and (p := _prefix(name)))
    for backend in BACKENDS.values():
        if backend.server is None or not locks[backend.server.prefix]:
            continue
        beside = backend.beside is None or locks[backend.beside[0].prefix] > 0
        if beside and backend.grouped(locks[backend.server.prefix]):
            total += MESH_COST
    return total


def _prefix(name: str) -> str:
    kind = server_kind(name)
    return kind.prefix if kind is not None else ""
