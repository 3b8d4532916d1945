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
schedule, its story, its limits) and its recording; provisioning, scheduling, faults, clients,
watchers and capacity live in their own modules.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from algorithms.checker import check, compare
from lockviz.catalogue import ZOOKEEPER
from lockviz.lab import events, procs
from lockviz.lab.backends import zookeeper
from lockviz.lab.capacity import Meter
from lockviz.lab.clients import Took
from lockviz.lab.errors import LabError
from lockviz.lab.events import Event, EventJson, Sink
from lockviz.lab.failovers import late_failover
from lockviz.lab.labs import Lab, OnWait, ServerSet
from lockviz.lab.limits import Limits, Watchdog
from lockviz.lab.provision import UNPROVISIONED, Provisioned, Stage, Wiring, provision
from lockviz.lab.roundtrips import RoundTrips, Slow
from lockviz.lab.scheduler import TOLERANCE_MS, Late, Scheduler, Timeline
from lockviz.lab.servers.base import ServerOptions
from lockviz.lab.story import Crossing, Mark, Story
from lockviz.lab.verdicts import VerdictJson
from lockviz.scenarios.schema import Scenario, Step
from lockviz.scenarios.verbs import DEFAULT_ACQUIRE_TIMEOUT_MS

log = logging.getLogger(__name__)

DRAIN_MARGIN_MS = 5_000
ENDING_DRAIN_S = 0.5  # an ended run waits this long for commands in flight, not for their waits
WATCHERS_SETTLE_S = 2.0  # and at most this long for the watchers to catch up (a dump, a poll)
ENDS = ("run_finished", "run_failed")  # the last event of a run: nothing is kept after it


@dataclass
class RunResult:
    events: list[EventJson]  # as the store keeps them and a run's export holds them
    verdict: VerdictJson | None = None
    mismatches: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def expect_met(self) -> bool | None:
        """Whether the verdict met ``expect``; None when there is no verdict, or the run could
        not keep its story (its ``expect`` was not judged)."""
        if self.verdict is None or self.inconclusive:
            return None
        return not self.mismatches

    @property
    def inconclusive(self) -> str:
        """Why the run could not keep its story ("" when it did)."""
        return self.verdict.get("inconclusive", "") if self.verdict is not None else ""


def _one_fate(scenario: Scenario) -> bool:
    """Whether the lock servers share one fate: a fault on one slows calls to the others (a
    ZooKeeper session moves between its servers, a group's servers talk to each other)."""
    return scenario.backend == "zookeeper" or scenario.lock_service.grouped(scenario.node_count)


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
        self.sink = sink
        self.on_wait = on_wait
        self.meter = meter  # hears how late the run is, and when it has started (capacity)
        self.open_ended = open_ended
        self.events: list[Event] = []
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
            None if open_ended else RoundTrips(scenario.clients, TOLERANCE_MS, _one_fate(scenario))
        )
        self._doing: dict[str, int] = {}  # the step each client's command in hand comes from
        self.started = threading.Event()
        self.ending: str | None = None  # why the run ends early, and is judged
        self.failure: str | None = None  # why it failed: no verdict
        self._lock = threading.RLock()  # re-entered: a fault holds it while it records
        self._sealed = False  # its process tells of its end instead (seal)
        self._t0_ns = 0
        # What a client told before the run's clock started (a ZooKeeper session connecting
        # while the lab provisions): told at the start, after run_started, not at a raw time.
        self._early: list[tuple[str, str, Mapping[str, object]]] = []
        self._last_click = time.monotonic()
        self.stage: Stage = UNPROVISIONED  # the run's lab once provisioned (and after)

    # -- recording ----------------------------------------------------------------------------

    def record(
        self, actor: str, kind: str, details: Mapping[str, object], t_ns: int | None = None
    ) -> None:
        """Give the event its seq and reference time, check it against its kind's model (a
        field the model does not declare is a bug: it raises), keep it, hand it to the sink."""
        with self._lock:
            if self._sealed or (self.events and self.events[-1].kind in ENDS):
                # Judged (or failed, or interrupted) already: every page and replay ends the
                # story at its end.
                log.info("%s's %s came after the run's end: not kept", actor, kind)
                return
            if not self.events and kind not in ("run_started", "run_failed"):
                # The story starts with run_started (or a failure before it): what a client told
                # before it (a ZooKeeper session connecting while the lab provisions) is told at
                # the start, right after it, never at a time from before the run's clock.
                self._early.append((actor, kind, dict(details)))
                return
            t = time.monotonic_ns() if t_ns is None else t_ns
            lost = self._keep(actor, kind, details, t)
            if kind == "run_started":
                early, self._early = self._early, []
                for told in early:
                    lost = self._keep(*told, t) or lost
        if lost is not None:
            self.record("lab", "schedule_shifted", lost)

    def _keep(
        self, actor: str, kind: str, details: Mapping[str, object], t_ns: int
    ) -> dict[str, object] | None:
        """One event kept and handed on (under the lock); the shift it shows, if any."""
        event = events.parse(
            {
                "seq": len(self.events) + 1,
                "t_ms": round((t_ns - self._t0_ns) / 1e6, 1),
                "actor": actor,
                "kind": kind,
                **details,
            }
        )
        self.events.append(event)
        slow = self.roundtrips.see(event) if self.roundtrips is not None else None
        lost = self._story_lost_to(slow) if slow is not None else None  # before the reply
        self.story.see(event)
        self.sink(event)
        return lost

    def _story_lost_to(self, slow: Slow) -> dict[str, object] | None:
        """Whether a reply that came late carried the command's effect across a point of the
        story (:mod:`lockviz.lab.roundtrips`): the ``schedule_shifted`` details that say so."""
        index = self._doing.get(slow.client)
        if slow.landed:  # the story had the call answered before the fault came
            mark = Mark("step", f"{slow.client}'s {slow.landed}", slow.replied_ms)
            crossing: Crossing | None = Crossing(mark, slow.what, slow.sent_ms, slow.replied_ms)
        elif slow.gave_up:  # the client counted the server as failed: a different story
            crossing = Crossing(
                Mark("timeout", slow.client, slow.replied_ms),
                slow.what,
                slow.sent_ms,
                slow.replied_ms,
            )
        else:
            late_client = (index, slow.client) if index is not None else None
            moment = [(slow.sent_ms, slow.what)]
            crossing = self.story.crossing(moment, slow.took_ms, TOLERANCE_MS, late_client)
        if crossing is None:
            return None
        details: dict[str, object] = {
            "what": slow.what,
            "due_ms": round(slow.sent_ms, 1),
            "late_ms": round(slow.took_ms, 1),
            "shift_ms": round(self.timeline.shift_ms, 1),
            "kept": False,
            "reply": True,
            **crossing.as_details(),
        }
        if index is not None:
            details["index"] = index
        return details

    def events_json(self) -> list[EventJson]:
        """The events so far as JSON has them (what the store keeps and the checker reads)."""
        return [events.as_json(e) for e in self.events]

    @property
    def alone(self) -> AbstractContextManager[object]:
        """Held, no other thread's event is told: a fault's kill and its record as one moment."""
        return self._lock

    @property
    def now_ms(self) -> float:
        return (time.monotonic_ns() - self._t0_ns) / 1e6

    # -- the run ------------------------------------------------------------------------------

    def run(self) -> RunResult:
        s = self.scenario
        wiring = Wiring(self.record, self.timers, self._took, self.alone)
        try:
            if not self._local_lab() and any(st.node for st in s.steps):
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
            self._sealed = True

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
        survived: no moment moved across a timer running on a server or in a client, nor (a
        command its client took or ran late) across a later step already taken — nor, for a
        command still not done when a fault came to its client (``until_ms``), across
        anything before that moment."""
        late_client = (late.index, late.client) if late.client and late.index is not None else None
        with self._lock:
            moments = [(late.due_ms, late.what), *late.pending]
            own = late.index if late_client is None else None  # a step done already
            if late.began_ms is None:
                crossing = self.story.crossing(
                    moments, late.late_ms, TOLERANCE_MS, late_client, own
                )
            else:  # the step itself as late as it began; what is pending as late as it is
                # done, less the step's own time (a server booting takes that on any machine)
                behind_ms = late.late_ms - late.own_ms
                crossing = self.story.crossing(
                    moments[:1], late.began_ms, TOLERANCE_MS, late_client, own
                ) or self.story.crossing(moments[1:], behind_ms, TOLERANCE_MS, late_client, own)
            if crossing is None and late.until_ms is not None:  # not done yet when a fault came
                still = late.until_ms - late.due_ms
                crossing = self.story.crossing(moments[:1], still, 0.0, late_client)
        details: dict[str, object] = {
            "what": late.what,
            "due_ms": round(late.due_ms, 1),
            "late_ms": round(late.late_ms, 1),
            "shift_ms": round(late.shift_ms, 1),
            "kept": crossing is None,
        }
        if late.index is not None:
            details["index"] = late.index
        if late.own_ms:
            details["own_ms"] = round(late.own_ms, 1)
        if crossing is not None:
            details.update(crossing.as_details())
        self.record("lab", "schedule_shifted", details)

    def _on_limit(self, why: str, stuck: bool) -> None:
        if self.open_ended and not stuck:
            self.end(why)
        else:
            self.abort(why)

    def _local_lab(self) -> bool:
        return self.lab.kind == "embedded"

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
            described = self._describe(lab.servers)  # asks a group's servers: before t0
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
        late = crossing.moved_to_ms - crossing.due_ms
        details: dict[str, object] = {
            "what": f"{crossing.moved} (due by {crossing.due_ms:.0f} ms, "
            f"{late:.0f} ms late: after {crossing.fixed.who})",
            "due_ms": round(crossing.due_ms, 1),
            "late_ms": round(late, 1),
            "shift_ms": round(self.timeline.shift_ms, 1),
            "kept": False,
            "reply": True,  # a server's answer came late: nothing moves
            **crossing.as_details(),
        }
        self.record("lab", "schedule_shifted", details)

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

    def _describe(self, servers: ServerSet) -> dict[str, object]:
        s = self.scenario
        roles = servers.roles() if self.scenario.lock_service.grouped(s.node_count) else {}
        ensemble = s.lock_service.server is ZOOKEEPER and len(s.nodes) > 1
        return {
            "title": s.title,
            "backend": s.backend,
            "variant": s.variant or s.lock_service.default_variant,
            "fencing": s.fencing,
            "storage_kind": s.storage_kind,
            "ttl_ms": s.ttl_ms,
            "clients": list(s.clients),
            "nodes": s.nodes,
            "storage": "storage",
            **({"replicas": s.storages} if len(s.storages) > 1 else {}),
            "servers": servers.addresses(),
            **({"roles": roles} if roles else {}),
            **({"homes": zookeeper.homes(s.clients, s.nodes)} if ensemble else {}),
            "duration_ms": s.duration_ms,
            "lab": self.lab.kind,
        }

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
        deadline = time.monotonic() + wait_s
        for client in lab.clients.values():
            client.wait_idle(max(0.0, deadline - time.monotonic()))
        idle_ns = time.monotonic_ns()
        time.sleep(0.05)  # late notifications from the servers' observers
        settle = time.monotonic() + WATCHERS_SETTLE_S
        while not all(w.caught_up(idle_ns) for w in lab.watchers) and time.monotonic() < settle:
            time.sleep(0.02)  # a watcher still asking a server (or polling it) what it decided
