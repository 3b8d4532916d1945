"""The run engine: one scenario, played on a real-time schedule against real servers.

It has three jobs:

* **provision**: the run's servers from the lab, and on them everything else it plays against
  (:mod:`lockviz.lab.provision`: links, clients, watchers, faults; built whole, undone by one
  path);
* **play**: each step at its time (:mod:`lockviz.lab.scheduler`), routed once by its verb —
  a client's own command to its process, anything else to :mod:`lockviz.lab.faults` — while
  every event is recorded with a sequence number and a time on the reference clock and handed
  to the run's sink (which stores and broadcasts it);
* **judge**: the history, by :mod:`algorithms.checker`, against the scenario's ``expect``.

A run can also take steps while it runs (``inject``): the free-play lab sends the learner's
clicks this way. ``end`` ends a run early and judges it (Finish, or an idle free-play session):
what is pending is dropped, paused clients are thawed, and the verdict follows within about a
second. The watchdog (:mod:`lockviz.lab.limits`) holds every run to its time limits; a run that
overruns them, or whose engine stops moving, is failed with the reason (``abort``).

Whatever happens, the run leaves nothing behind: faults are undone, paused clients are thawed
and stopped, the proxy and the servers are stopped, clock files removed with their temp dir —
by leaving :func:`lockviz.lab.provision.provision` and the lab's ``servers`` block, the one
cleanup path.

One module past the usual ~300 lines, on purpose: play and judge share one run's state (its
schedule, its story, its limits) under one lock with its record (:mod:`lockviz.lab.recording`);
provisioning (with what ``run_started`` says of the lab, and the drain at the end), scheduling,
faults, clients, watchers, capacity, and what a late moment did to the story
(:mod:`lockviz.lab.shifts`) live in their own modules.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Mapping
from contextlib import AbstractContextManager

from algorithms.checker import check, compare
from lockviz.lab import events, procs, shifts
from lockviz.lab.capacity import Meter
from lockviz.lab.clients import Took
from lockviz.lab.errors import LabError
from lockviz.lab.events import Event, EventJson, Sink
from lockviz.lab.failovers import late_failover
from lockviz.lab.labs import Lab, OnWait
from lockviz.lab.limits import Limits, Watchdog
from lockviz.lab.provision import UNPROVISIONED, Provisioned, Stage, Wiring, provision
from lockviz.lab.provision import described as provision_described
from lockviz.lab.recording import Recording, RunResult
from lockviz.lab.roundtrips import RoundTrips
from lockviz.lab.scheduler import TOLERANCE_MS, Late, Scheduler, Timeline
from lockviz.lab.servers.base import ServerOptions
from lockviz.lab.shifts import one_fate
from lockviz.lab.story import Story
from lockviz.scenarios.schema import Scenario, Step
from lockviz.scenarios.verbs import DEFAULT_ACQUIRE_TIMEOUT_MS

DRAIN_MARGIN_MS = 5_000
ENDING_DRAIN_S = 0.5  # an ended run waits this long for commands in flight, not for their waits


class RunEngine:
    def __init__(
        self,
        scenario: Scenario,
        lab: Lab,
        sink: Sink = lambda event: None,
        on_wait: OnWait | None = None,
        open_ended: bool = False,
        limits: Limits | None = None,
        meter: Meter | None = None,
    ) -> None:
        self.scenario = scenario
        self.lab = lab
        self.on_wait = on_wait
        self.meter = meter  # hears how late the run is, and when it has started (capacity)
        self.open_ended = open_ended
        self.result: RunResult | None = None
        self.steps: list[Step] = list(scenario.steps)  # grows with injected steps
        self.limits = limits or Limits.for_run(scenario, open_ended)
        # The steps, in order, and the thaws, on time even if a step is slow: one timeline, so
        # a machine that falls behind shifts them all alike (a free-play session is not shifted).
        self.timeline = Timeline(
            lambda: self.now_ms, None if open_ended else TOLERANCE_MS, self._on_late
        )
        self.schedule = Scheduler(self.timeline)
        self.timers = Scheduler(self.timeline)
        # The timers the steps started: what a shift cannot move (a backend's grants kept alive
        # by their sessions have no fixed end: lockviz.catalogue's kept_alive_by)
        self.story = Story(sessions=bool(scenario.lock_service.kept_alive_by))
        # Replies that came late with no fault in the way (a free-play session has no story).
        self.roundtrips = (
            None if open_ended else RoundTrips(scenario.clients, TOLERANCE_MS, one_fate(scenario))
        )
        self._doing: dict[str, int] = {}  # the step each client's command in hand comes from
        self.started = threading.Event()
        self.ending: str | None = None  # why the run ends early, and is judged
        self.failure: str | None = None  # why it failed: no verdict
        self._lock = threading.RLock()  # re-entered: a fault holds it while it records
        self.alone: AbstractContextManager[object] = self._lock  # held: no other event is told
        self._t0_ns = 0
        self.recording = Recording(sink, self._lock, lambda: self._t0_ns, self._seen)
        self.events: list[Event] = self.recording.events  # the same list, as it grows
        self._last_click = time.monotonic()
        self.stage: Stage = UNPROVISIONED  # the run's lab once provisioned (and after)

    # -- recording ----------------------------------------------------------------------------

    def record(
        self, actor: str, kind: str, details: Mapping[str, object], t_ns: int | None = None
    ) -> None:
        """Record an event (:meth:`lockviz.lab.recording.Recording.record`)."""
        self.recording.record(actor, kind, details, t_ns)

    def _seen(self, event: Event) -> dict[str, object] | None:
        """An event kept, as the round trips and the story see it before the sink has it (under
        the lock): the ``schedule_shifted`` details of a late reply that it shows, if any."""
        slow = self.roundtrips.see(event) if self.roundtrips is not None else None
        lost = None
        if slow is not None:  # before the reply: whether it came across a point of the story
            index, shift_ms = self._doing.get(slow.client), self.timeline.shift_ms
            lost = shifts.replied_late(self.story, slow, index, shift_ms)
        self.story.see(event)
        return lost

    def events_json(self) -> list[EventJson]:
        """The events so far as JSON has them (what the store keeps and the checker reads)."""
        return [events.as_json(e) for e in self.events]

    @property
    def now_ms(self) -> float:
        return (time.monotonic_ns() - self._t0_ns) / 1e6

    # -- the run ------------------------------------------------------------------------------

    def run(self) -> RunResult:
        s = self.scenario
        wiring = Wiring(self.record, self.timers, self._took, self.alone)
        try:
            if self.lab.kind != "embedded" and any(st.node for st in s.steps):
                raise LabError("node faults (clock jumps, crash, restart) need the embedded lab")
            options: ServerOptions = {
                "persistence": s.persistence,
                "idle_session_timeout_ms": s.idle_session_timeout_ms,
            }
            if s.variant == "min_replicas":  # a replicated Redis's primary needs a replica
                options["min_replicas_to_write"] = 1
            with (
                self.lab.servers(s.servers, self.on_wait, options) as servers,
                provision(s, servers, wiring) as lab,
            ):
                self.stage = lab
                if procs.yielding():  # told to yield while its servers were starting
                    for pid in lab.pids():
                        procs.lower(pid)
                self._play(lab)
        except LabError as exc:
            self.abort(str(exc))
        finally:
            self.started.set()  # whoever waits for the start learns it will not come
        if self.failure is not None or self.result is None:
            error = self.failure or "the run ended without a verdict"
            return RunResult(self.events_json(), error=error)
        return self.result

    def inject(self, step: Step) -> None:
        """Add a step to a running run, to happen now (the free-play lab's clicks)."""
        lab = self.stage
        if not isinstance(lab, Provisioned):  # recorder.inject_here waits for ``started``
            raise LabError("the run's servers are not ready yet: try again in a moment")
        index = len(self.steps)
        self.steps.append(step)
        self._last_click = time.monotonic()
        what = f"step {index + 1} ({step.do})"
        self.schedule.soon(lambda: self._dispatch(lab, index, step), what, index)

    def pids(self) -> list[int]:
        """The run's processes now (none before its lab is provisioned)."""
        return self.stage.pids() if isinstance(self.stage, Provisioned) else []

    def finish(self) -> None:
        """End an open-ended run once what is scheduled has happened."""
        self.schedule.close()

    def end(self, why: str) -> None:
        """End the run now and judge it: drop what is pending, thaw every pause."""
        with self._lock:
            if self.ending or self.failure:
                return
            self.ending = why
        self.record("lab", "ending", {"why": why})
        self.schedule.drop_later()
        self.timers.cancel()
        self.stage.thaw_all("the run is ending")

    def abort(self, why: str) -> None:
        """Fail the run now (no verdict): stop everything that could keep it stuck."""
        with self._lock:
            if self.failure or self.result is not None:
                return  # failed already, or judged: too late to fail
            self.failure = why
        if not self._t0_ns:
            self._t0_ns = time.monotonic_ns()
        self.record("lab", "run_failed", {"error": why})
        self.schedule.cancel()
        self.timers.cancel()
        self.stage.halt()  # whatever a step waits on from a client or a link returns now

    def seal(self) -> None:
        """Keep no event from now on: the process running it stops, and tells of the run's
        interruption itself, after the events kept so far (lockviz.runs.recorder)."""
        with self._lock:
            self.recording.sealed = True

    def clicked_pause_ms(self) -> int:
        """The longest pause a click may cause now (see :class:`Limits`)."""
        return self.limits.clicked_pause_ms(self.now_ms / 1000)

    def _took(self, client: str) -> Took:
        return functools.partial(self._on_took, client)

    def _on_took(
        self,
        client: str,
        index: int | None,
        could_ns: int,
        late_ns: int,
        how: str,
        fault_ns: int | None,
    ) -> None:
        """A busy machine held up a client's command ``late_ns``: it began that late ("took"),
        or its process waited that much longer for a core as it ran it ("ran"); beyond the
        tolerance the rest shifts, as for a late step (in the client's reader thread).
        ``fault_ns``: a fault done to the client then landed on it, no longer after it as
        scripted (a starved client frozen before its grant, not while it holds the lock)."""
        if index is None or not self._t0_ns:
            return
        self._doing[client] = index
        step = self.steps[index]
        what = f"step {index + 1} ({step.do}), as {client} {how} it"
        due_ms, late_ms = (could_ns - self._t0_ns) / 1e6, late_ns / 1e6
        if self.meter is not None and how == "took" and fault_ns is None:  # as before
            self.meter.late(late_ms)
        until_ms = None if fault_ns is None else (fault_ns - self._t0_ns) / 1e6
        self.timeline.late_elsewhere(what, index, due_ms, late_ms, client, until_ms)

    def _on_late(self, late: Late) -> None:
        """The machine fell behind: the schedule shifted. Record it, and whether the story
        survived (:func:`lockviz.lab.shifts.late_crossing`)."""
        with self._lock:
            crossing = shifts.late_crossing(self.story, late)
        self.record("lab", "schedule_shifted", shifts.shifted(late, crossing))

    def _on_limit(self, why: str, stuck: bool) -> None:
        if self.open_ended and not stuck:
            self.end(why)
        else:
            self.abort(why)

    def _play(self, lab: Provisioned) -> None:
        s = self.scenario
        timers = threading.Thread(
            target=self.timers.run, kwargs={"open_ended": True}, name="run-timers", daemon=True
        )
        watchdog = Watchdog(
            self.limits,
            elapsed_s=lambda: self.now_ms / 1000 if self.started.is_set() else 0.0,
            idle_s=lambda: time.monotonic() - self._last_click,
            busy_s=self.schedule.busy,
            on_limit=self._on_limit,
            crowded=self.meter.crowded if self.meter is not None else lambda: False,
        )
        try:
            # asks a group's servers: before t0
            described = provision_described(self.scenario, lab.servers, self.lab.kind)
            self._t0_ns = time.monotonic_ns()
            self._last_click = time.monotonic()
            self.record("lab", "run_started", described)
            self.started.set()
            if self.meter is not None:
                self.meter.started()  # the next run may start provisioning
            timers.start()
            watchdog.start()
            for index, step in enumerate(s.steps):
                what = f"step {index + 1} ({step.do})"
                action = functools.partial(self._dispatch, lab, index, step)
                self.schedule.at(step.at_ms, action, what, index)
            self.schedule.run(open_ended=self.open_ended)
            self._drain(lab)
            watchdog.stop()  # the run is over: judging it is not overrunning it
            if self.failure is None:
                self._outlived()
                self.result = self._judge()
        finally:
            self.started.set()
            watchdog.stop()
            self.timers.cancel()

    def _outlived(self) -> None:
        """Whether a server ended a frozen holder's lease only after her thaw, where the story
        has it end while she was frozen (:meth:`Story.outlived`): what waited for that end
        (another client's grant, a call that waits by design) may have come after the thaw; or
        Sentinel promoted a replica only after a step the script put after the failover
        (:func:`late_failover`). A free-play session has no story to keep."""
        if self.roundtrips is None:
            return
        with self._lock:
            now = self.now_ms
            crossing = self.story.outlived(now) or late_failover(self.events, now)
        if crossing is None:
            return
        self.record("lab", "schedule_shifted", shifts.outlived(crossing, self.timeline.shift_ms))

    def _judge(self) -> RunResult | None:
        s = self.scenario
        verdict = check(self.events_json(), self.now_ms).as_dict()
        mismatches = compare(verdict, s.expect.as_dict() if s.expect else {})
        judged = not verdict.get("inconclusive") and s.expect is not None and s.expect.as_dict()
        expect_met = not mismatches if judged else None
        self.record(
            "lab",
            "run_finished",
            {"verdict": verdict, "expect_met": expect_met, "mismatches": mismatches},
        )
        finished = self.events[-1]
        if not isinstance(finished, events.RunFinished):  # it failed as it was judged (abort)
            return None
        return RunResult(self.events_json(), finished.verdict, mismatches)

    # -- one step -----------------------------------------------------------------------------

    def _dispatch(self, lab: Provisioned, index: int, step: Step) -> None:
        """Record the step (the validated step itself, without its checkpoint: a question's
        answer stays in the scenario, not on the stream), then do it: once, by its target."""
        done = step.to_json()
        timing = {"late_ms": round(self.schedule.late_ms(), 1)}
        if self.meter is not None:
            self.meter.late(timing["late_ms"])
        if self.timeline.shift_ms:
            timing["shift_ms"] = round(self.timeline.shift_ms, 1)
        said = {k: v for k, v in done.items() if k != "ask"}
        t_ns = time.monotonic_ns()
        self.record("lab", "step", {"index": index, **said, **timing}, t_ns)
        began_ns = time.monotonic_ns()
        if not step.command:
            lab.apply(step)
            client = lab.clients.get(step.client or "")
            if client is not None and step.do != "crash":  # a crash notes it as it kills
                client.fault_landed()  # a frozen client's delay is as it was when it froze
        elif refused := lab.clients[step.client or ""].send(done, index):
            self.record(step.client or "lab", "step_refused", {"index": index, "why": refused})
        self._held_back(index, step, began_ns, time.monotonic_ns())

    def _held_back(self, index: int, step: Step, began_ns: int, t_ns: int) -> None:
        """The step is done (at ``t_ns``) well after the schedule let it begin: the machine
        stalled the engine in between (storing the shift that came first, say), or doing it
        took that long (a server's restart waits until it answers again). Its lateness as done
        shifts the rest, or the next step would come too soon after it (a pause 20 ms after
        the acquire it was scripted 300 ms after, that alice had no time to run). The step's
        own moment is when the lab began it (``began_ns``): what ends while a restart is under
        way (bob's poll granted by the server coming back) is not a moment it moved across."""
        due = self.schedule.due_ms()
        if due is None:
            return
        late_ms = (t_ns - self._t0_ns) / 1e6 - due
        if late_ms > TOLERANCE_MS:
            what = f"step {index + 1} ({step.do}), as the lab did it"
            began_ms = max(0.0, (began_ns - self._t0_ns) / 1e6 - due)
            own_ms = min(late_ms - began_ms, self._booted_ms(step, began_ns))
            self.timeline.late_elsewhere(
                what, index, due, late_ms, "", began_ms=began_ms, own_ms=max(0.0, own_ms)
            )

    def _booted_ms(self, step: Step, since_ns: int) -> float:
        """How long the server a restart step brought back took to boot, less what the busy
        machine took from it (it waited that long for a core): the step's own time, as on any
        machine (0 for any other step)."""
        if step.do != "restart":
            return 0.0
        since_ms = (since_ns - self._t0_ns) / 1e6
        with self._lock:
            for event in reversed(self.events):
                if event.t_ms < since_ms:
                    break
                if isinstance(event, events.Restarted) and event.actor == step.node:
                    return float(event.boot_ms or 0) - float(event.starved_ms or 0)
        return 0.0

    def _drain(self, lab: Provisioned) -> None:
        """Let every client finish what it was told (a frozen one is thawed by now); a run that
        ends early waits only for what is in flight."""
        waits = [
            s.timeout_ms or DEFAULT_ACQUIRE_TIMEOUT_MS for s in self.steps if s.do == "acquire"
        ]
        wait_s = (max(waits, default=0) + DRAIN_MARGIN_MS) / 1000
        if self.ending or self.failure:
            wait_s = ENDING_DRAIN_S
        lab.drain(wait_s)
