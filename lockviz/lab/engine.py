"""The run engine: one scenario, played on a real-time schedule against real servers.

It has three jobs:

* **provision**: the run's servers from the lab, a proxy on every client↔server link, one
  process per client, the backend's watchers on the servers;
* **play**: each step at its time (:mod:`lockviz.lab.scheduler`), routed once by its verb —
  a client's own command to its process, anything else to :mod:`lockviz.lab.faults` — while
  every event is recorded with a sequence number and a time on the reference clock and handed
  to the run's sink (which stores and broadcasts it);
* **judge**: the history, by :mod:`algorithms.checker`, against the scenario's ``expect``.

A run can also take steps while it runs (``inject``): the free-play lab sends the learner's
clicks this way, and ``finish`` ends such an open-ended run.

Whatever happens, the run leaves nothing behind: faults are undone, paused clients are thawed
and stopped, the proxy and the servers are stopped, clock files removed with their temp dir.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from algorithms.checker import check, compare
from algorithms.clock import ClockFile
from lockviz.lab import watchers
from lockviz.lab.clients import ClientProcess
from lockviz.lab.config import ClientConfig
from lockviz.lab.errors import LabError
from lockviz.lab.events import Event, Sink
from lockviz.lab.faults import Faults
from lockviz.lab.labs import Lab, OnWait, ServerSet
from lockviz.lab.links import Links
from lockviz.lab.scheduler import Scheduler
from lockviz.scenarios.schema import Scenario, Step
from lockviz.scenarios.verbs import DEFAULT_ACQUIRE_TIMEOUT_MS

CALL_TIMEOUT_MS = 1_000
DRAIN_MARGIN_MS = 5_000
OPEN_RUN_LIMIT_S = 600  # an open-ended (free-play) run ends by itself after this long


@dataclass
class RunResult:
    events: list[Event]
    verdict: dict[str, Any] | None = None
    mismatches: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def expect_met(self) -> bool | None:
        if self.verdict is None:
            return None
        return not self.mismatches


class RunEngine:
    def __init__(
        self,
        scenario: Scenario,
        lab: Lab,
        sink: Sink = lambda event: None,
        on_wait: OnWait | None = None,
        open_ended: bool = False,
    ) -> None:
        self.scenario = scenario
        self.lab = lab
        self.sink = sink
        self.on_wait = on_wait
        self.open_ended = open_ended
        self.events: list[Event] = []
        self.clients: dict[str, ClientProcess] = {}
        self.steps: list[Step] = list(scenario.steps)  # grows with injected steps
        self.schedule = Scheduler(lambda: self.now_ms)
        self.started = threading.Event()
        self._lock = threading.Lock()
        self._t0_ns = 0

    # -- recording ----------------------------------------------------------------------------

    def record(
        self, actor: str, kind: str, details: dict[str, Any], t_ns: int | None = None
    ) -> None:
        """Give the event its seq and reference time, keep it, hand it to the sink."""
        with self._lock:
            t = time.monotonic_ns() if t_ns is None else t_ns
            event = {
                "seq": len(self.events) + 1,
                "t_ms": round((t - self._t0_ns) / 1e6, 1),
                "actor": actor,
                "kind": kind,
                **details,
            }
            self.events.append(event)
            self.sink(event)

    @property
    def now_ms(self) -> float:
        return (time.monotonic_ns() - self._t0_ns) / 1e6

    # -- the run ------------------------------------------------------------------------------

    def run(self) -> RunResult:
        s = self.scenario
        own_dir: str | None = None  # for client clock files when the lab gives no run dir
        try:
            if not self._local_lab() and any(st.node for st in s.steps):
                raise LabError("node faults (clock jumps, crash, restart) need the embedded lab")
            options = {
                "persistence": s.persistence,
                "idle_session_timeout_ms": s.idle_session_timeout_ms,
            }
            with self.lab.servers(s.servers, self.on_wait, options) as servers:
                # In the run's own directory, so a killed app's leftovers are swept with it.
                workdir = servers.workdir or (own_dir := tempfile.mkdtemp(prefix="lockviz-"))
                self._play(servers, workdir)
        except LabError as exc:
            if not self._t0_ns:
                self._t0_ns = time.monotonic_ns()
            self.record("lab", "run_failed", {"error": str(exc)})
            return RunResult(self.events, error=str(exc))
        finally:
            for client in self.clients.values():
                client.close()
            if own_dir:
                shutil.rmtree(own_dir, ignore_errors=True)
        return self._judge()

    def inject(self, step: Step) -> None:
        """Add a step to a running run, to happen now (the free-play lab's clicks)."""
        index = len(self.steps)
        self.steps.append(step)
        self.schedule.soon(lambda: self._dispatch(index, step))

    def finish(self) -> None:
        """End an open-ended run once what is scheduled has happened."""
        self.schedule.close()

    def _local_lab(self) -> bool:
        return self.lab.kind == "embedded"

    def _play(self, servers: ServerSet, workdir: str) -> None:
        s = self.scenario
        self.servers = servers
        self.links = links = Links(list(s.clients), servers.addresses())
        clocks = {c: ClockFile(os.path.join(workdir, f"{c}.clock")) for c in s.clients}
        self.faults = Faults(servers, links, self.clients, clocks, self.record, self.schedule)
        running = watchers.for_backend(s.backend, servers, s.nodes, self.record)
        try:
            links.start()
            self._start_clients(links, clocks)
            for watcher in running:
                watcher.start()
            self._t0_ns = time.monotonic_ns()
            self.record("lab", "run_started", self._describe(servers.addresses()))
            self.started.set()
            for index, step in enumerate(s.steps):
                self.schedule.at(step.at_ms, functools.partial(self._dispatch, index, step))
            deadline = time.monotonic() + OPEN_RUN_LIMIT_S if self.open_ended else None
            self.schedule.run(open_ended=self.open_ended, deadline_s=deadline)
            self._drain()
        finally:
            self.started.set()
            self.faults.undo_all()
            for client in self.clients.values():
                client.close()
            for watcher in running:
                watcher.stop()
            links.stop()

    def _judge(self) -> RunResult:
        s = self.scenario
        verdict = check(self.events, self.now_ms).as_dict()
        mismatches = compare(verdict, s.expect.as_dict() if s.expect else {})
        expect_met = not mismatches if s.expect is not None and s.expect.as_dict() else None
        self.record(
            "lab",
            "run_finished",
            {"verdict": verdict, "expect_met": expect_met, "mismatches": mismatches},
        )
        return RunResult(self.events, verdict, mismatches)

    def _describe(self, addresses: dict[str, str]) -> dict[str, Any]:
        s = self.scenario
        return {
            "title": s.title,
            "backend": s.backend,
            "variant": s.variant or s.lock_service.default_variant,
            "fencing": s.fencing,
            "ttl_ms": s.ttl_ms,
            "clients": list(s.clients),
            "nodes": s.nodes,
            "storage": "storage",
            "servers": addresses,
            "duration_ms": s.duration_ms,
            "lab": self.lab.kind,
        }

    def _start_clients(self, links: Links, clocks: dict[str, ClockFile]) -> None:
        s = self.scenario
        for name in s.clients:
            config = ClientConfig(
                name=name,
                backend=s.backend,
                variant=s.variant or s.lock_service.default_variant,
                ttl_ms=s.ttl_ms,
                fencing=s.fencing,
                clients=tuple(s.clients),
                nodes=tuple(s.nodes),
                servers=links.addresses_for(name),
                call_timeout_ms=CALL_TIMEOUT_MS,
                renew=s.renew,
                node_timeout_ms=s.node_timeout_ms,
                clock_file=clocks[name].path,
            )
            self.clients[name] = ClientProcess(config, self.record)
        for client in self.clients.values():
            client.start()
        for client in self.clients.values():
            client.wait_ready()

    # -- one step -----------------------------------------------------------------------------

    def _dispatch(self, index: int, step: Step) -> None:
        """Record the step (the validated step itself, without its checkpoint: a question's
        answer stays in the scenario, not on the stream), then do it: once, by its target."""
        done = step.to_json()
        self.record(
            "lab", "step", {"index": index, **{k: v for k, v in done.items() if k != "ask"}}
        )
        if step.command:
            self.clients[step.client or ""].send(done)
        else:
            self.faults.apply(step)

    def _drain(self) -> None:
        """Let every client finish what it was told (a frozen one is thawed by now)."""
        waits = [
            s.timeout_ms or DEFAULT_ACQUIRE_TIMEOUT_MS for s in self.steps if s.do == "acquire"
        ]
        deadline = time.monotonic() + (max(waits, default=0) + DRAIN_MARGIN_MS) / 1000
        for client in self.clients.values():
            client.wait_idle(max(0.0, deadline - time.monotonic()))
        time.sleep(0.05)  # late notifications from the servers' observers
