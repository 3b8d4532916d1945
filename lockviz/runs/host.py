"""One lab host: take run requests while there is room, run them, drain on SIGTERM.

The loop (:meth:`LabHost.serve`) asks the machine (lockviz.lab.capacity, as adaptive as ever,
up to this process's ``LOCKVIZ_MAX_RUNS``) whether it has a free slot; only then does it read
a request (lockviz.labhost.stream: a presenter's first, and now and then one a dead host left
pending). It marks the run started in the database with a conditional UPDATE (queued →
running, ``host`` = this host) that only one host can make, acknowledges the request, and
starts the run as lockviz.runs.recorder always has: its servers and clients are this
process's children, its events go to the database and the channel layer, its ``alive_at`` is
touched every two seconds, and clicks relayed to this host's identity are answered
(lockviz.runs.relay).

Every :data:`DEMAND_EVERY_S` the host tells its machine how many requests wait in the stream
unread: a host whose slots are all taken while runs wait takes one more when its cores allow,
up to its ceiling, as a web process running its own runs does for its own queue. Each host
reads only when it has a free slot, so a burst is shared in proportion to the hosts' slots
(docs/deploy.md, "Sizing a lab host").

Beside it a thread beats (lockviz.labhost.heartbeat). SIGTERM *drains*: no request is read
any more, the heartbeat says so (no free slot), the runs here play to their verdict, then the
process exits. SIGINT (Ctrl-C, or the web process that started this host stopping) ends at
once: this host's runs are marked interrupted, saying so, and their servers die with it.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
from concurrent.futures import Future

import redis
from django.db import close_old_connections
from django.utils import timezone

from lockviz.errors import LabError, ScenarioError
from lockviz.lab.capacity import RESERVED
from lockviz.labhost import heartbeat, stream
from lockviz.models import Run
from lockviz.runs import admission, recorder, recovery
from lockviz.scenarios.schema import startable

log = logging.getLogger(__name__)

READ_BLOCK_MS = 500  # how long one read waits for a request (a presenter's waits at most this)
RECLAIM_EVERY_S = 1.0
DEMAND_EVERY_S = 0.5  # how often the host tells its machine how many requests wait unread
STOPPED = "the lab host running it was stopped (Ctrl-C) before it ended"


class LabHost:
    def __init__(self, checked: Future[None] | None = None) -> None:
        """``checked``: the lab's self-test, still under way as the host starts taking runs (the
        first learner need not wait for it); it beats once it passed, and stops if it failed."""
        self.identity = recovery.process_id()
        self.draining = threading.Event()
        self.checked = checked
        self.broken: BaseException | None = None  # the self-test's failure
        self._ended = threading.Event()
        self._redis = heartbeat.client(timeout_s=READ_BLOCK_MS / 1000 + 5)

    # -- the loop ---------------------------------------------------------------------------

    def serve(self) -> None:
        """Take and run requests until drained (SIGTERM); KeyboardInterrupt ends at once."""
        stream.prepare(self._redis)
        recorder.keep_forever()  # per-run alive_at, a dead sibling's runs, relayed clicks
        threading.Thread(target=self._beating, name="labhost-heartbeat", daemon=True).start()
        signal.signal(signal.SIGTERM, lambda *_: self.drain())
        # Ctrl-C (or serve stopping it) ends it even when it was started from a shell that
        # ignores SIGINT in background jobs: an ignored signal is inherited, a handler is not.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        log.info(f"lab host {self.identity}: taking runs")
        try:
            self._taking()
            log.info(f"lab host {self.identity}: draining {len(recorder.here())} run(s)")
            while recorder.here():
                time.sleep(0.2)
            log.info(f"lab host {self.identity}: drained, every run ended")
        except KeyboardInterrupt:
            recorder.interrupt_all(STOPPED)
            raise
        except LabError as exc:  # its self-test failed: no run can play here
            recorder.interrupt_all(f"the lab does not work here: {exc}")
            raise
        finally:
            self._ended.set()
            with contextlib.suppress(redis.RedisError):
                heartbeat.stop(self._redis, self.identity)

    def drain(self) -> None:
        self.draining.set()

    def _taking(self) -> None:
        reclaimed_at = asked_at = 0.0
        while not self.draining.is_set():
            if time.monotonic() - asked_at >= DEMAND_EVERY_S:
                asked_at = time.monotonic()
                self.demand()
            room, first_room = self.room()
            if not first_room:
                time.sleep(0.1)
                continue
            try:
                requests: list[stream.Request] = []
                if time.monotonic() - reclaimed_at >= RECLAIM_EVERY_S:
                    reclaimed_at = time.monotonic()
                    requests = stream.reclaim(self._redis, self.identity, not room)
                if not requests:
                    got = stream.take(self._redis, self.identity, READ_BLOCK_MS, not room)
                    requests = [got] if got else []
            except redis.RedisError as exc:  # Redis is away for a moment: ask again soon
                log.warning("lab host: could not read run requests: %s", exc)
                time.sleep(1)
                continue
            if requests and self.draining.is_set():  # SIGTERM came while it read: not ours
                log.info("run %s: left for another host (draining)", requests[0].run_id)
                break  # unacknowledged, another host claims it (stream.CLAIM_IDLE_S)
            for request in requests:
                try:
                    self.take(request)
                except Exception:  # the database is away for a moment: the request stays
                    log.exception("lab host: could not take run %s", request.run_id)
                    time.sleep(1)  # pending, and is claimed again (stream.CLAIM_IDLE_S)

    def room(self) -> tuple[bool, bool]:
        """Whether this host would take a run now, and a presenter's run (the reserved slot).

        Not while a run it took waits here for its turn to start (starts are one at a time,
        lockviz.lab.capacity): a request left in the stream goes to whichever host is free
        first, instead of waiting behind this one's starts."""
        if self.draining.is_set():
            return False, False
        machine = admission.machine()
        busy = len(machine.running) + machine.waiting
        return busy < machine.limit and not machine.waiting, busy < machine.limit + RESERVED

    def demand(self) -> None:
        """Tell the machine how many requests wait in the stream, read by no host yet
        (LabError, first, if the lab's self-test failed: no run can play here)."""
        if self.broken is not None:
            raise LabError(str(self.broken)) from self.broken
        try:
            admission.machine().wanted(stream.waiting(self._redis))
        except redis.RedisError as exc:  # unknown for now: as if none waited
            log.warning("lab host: could not count the run requests waiting: %s", exc)
            admission.machine().wanted(0)

    # -- one request ------------------------------------------------------------------------

    def take(self, request: stream.Request) -> bool:
        """Start ``request``'s run here if it is still queued (no other host started it):
        whether it did. The request is acknowledged either way (unacknowledged, as when Redis
        blinks, it is claimed again later and skipped: the database says it started)."""
        try:
            started = Run.objects.filter(pk=request.run_id, status=Run.Status.QUEUED).update(
                status=Run.Status.RUNNING,
                host=self.identity,
                alive_at=timezone.now(),
                started=timezone.now(),
            )
            with contextlib.suppress(redis.RedisError):
                stream.ack(self._redis, request)
            run = Run.objects.filter(pk=request.run_id).first() if started else None
            if run is None:
                log.info("run %s: started, ended or gone already: skipped", request.run_id)
                return False
            log.info("run %s: started here (%s)", run.pk, request.stream)
            try:
                scenario = startable(run.parsed_scenario, run.open_ended)
                recorder.start(run, scenario, run.open_ended, first=request.first)
            except ScenarioError as exc:
                recovery.interrupt(run, f"the lab host could not read its scenario: {exc}")
                return False
            except Exception as exc:  # marked started here: it must not read "running" forever
                log.exception("run %s: could not start", run.pk)
                recovery.interrupt(run, f"the lab host could not start it: {exc}")
                return False
            return True
        finally:
            close_old_connections()

    # -- the heartbeat ----------------------------------------------------------------------

    def slots(self) -> heartbeat.Slots:
        machine = admission.machine()
        busy = len(machine.running) + machine.waiting
        free = 0 if self.draining.is_set() else max(0, machine.limit - busy)
        return heartbeat.Slots(self.identity, machine.limit, busy, free, self.draining.is_set())

    def _beating(self) -> None:
        if self.checked is not None:  # beats (serve's check: "its lab host … ok") once it passed
            try:
                self.checked.result()
            except BaseException as exc:
                self.broken = exc
                return
        beater = heartbeat.client()
        while not self._ended.is_set():
            try:
                heartbeat.beat(beater, self.slots())
            except redis.RedisError as exc:
                log.warning("lab host: no heartbeat: %s", exc)
            self._ended.wait(heartbeat.BEAT_S)
