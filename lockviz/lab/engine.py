"""The run engine: one scenario, played on a real-time schedule against real servers.

It provisions the run's servers from the lab, puts a proxy on every client↔server link, starts
one process per client, dispatches each step at its time (commands to clients, signals for
pauses and crashes, faults through lockviz.lab.faults), records every event with a sequence
number and a time on the reference clock, hands each to a sink (which stores and broadcasts it),
and finally judges the history with the checker.

A run can also take steps while it runs (``inject``): the free-play lab sends the learner's
clicks this way, and ``finish`` ends such an open-ended run.

Whatever happens, the run leaves nothing behind: faults are undone, paused clients are thawed
and stopped, the proxy and the servers are stopped, clock files removed with their temp dir.
"""

from __future__ import annotations

import heapq
import itertools
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from algorithms.checker import check, compare
from lockviz.lab import backends
from lockviz.lab.clients import ClientProcess
from lockviz.lab.faults import ClientClock, Faults
from lockviz.lab.links import Links
from lockviz.lab.servers import ExternalLab, LabError, LocalLab
from lockviz.scenarios.schema import Scenario, Step

EventSink = Callable[[dict[str, Any]], None]
DEFAULT_ACQUIRE_TIMEOUT_MS = 10_000
CALL_TIMEOUT_MS = 1_000
DRAIN_MARGIN_MS = 5_000
OPEN_RUN_LIMIT_S = 600  # an open-ended (free-play) run ends by itself after this long


@dataclass
class RunResult:
    events: list[dict[str, Any]]
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
        lab: LocalLab | ExternalLab,
        sink: EventSink = lambda event: None,
        on_wait: Callable[[int], None] | None = None,
        open_ended: bool = False,
    ) -> None:
        self.scenario = scenario
        self.lab = lab
        self.sink = sink
        self.on_wait = on_wait
        self.open_ended = open_ended
        self.events: list[dict[str, Any]] = []
        self.clients: dict[str, ClientProcess] = {}
        self.steps: list[Step] = list(scenario.steps)  # grows with injected steps
        self._lock = threading.Lock()
        self._t0_ns = 0
        self._queue: list[tuple[float, int, Callable[[], None]]] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._finish = threading.Event()
        self.started = threading.Event()

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
            if isinstance(self.lab, ExternalLab) and any(st.node for st in s.steps):
                raise LabError("node faults (clock jumps, crash, restart) need the embedded lab")
            names = [*s.nodes, "storage"]
            options = {
                "persistence": s.persistence,
                "idle_session_timeout_ms": s.idle_session_timeout_ms,
            }
            with self.lab.servers(names, self.on_wait, options) as servers:
                self.servers = servers
                self.links = Links(list(s.clients), servers.addresses())
                # In the run's own directory, so a killed app's leftovers are swept with it.
                workdir = servers.workdir or (own_dir := tempfile.mkdtemp(prefix="lockviz-"))
                clocks = {c: ClientClock(os.path.join(workdir, f"{c}.clock")) for c in s.clients}
                self.faults = Faults(servers, self.links, clocks, self.record)
                watchers = backends.get(s.backend).watchers(servers, s, self.record)
                try:
                    self.links.start()
                    self._start_clients(clocks)
                    for watcher in watchers:
                        watcher.start()
                    self._t0_ns = time.monotonic_ns()
                    self.record("lab", "run_started", self._describe(servers.addresses()))
                    self.started.set()
                    self._play()
                    self._drain()
                finally:
                    self.started.set()
                    self.faults.undo_all()
                    for client in self.clients.values():
                        client.close()
                    for watcher in watchers:
                        watcher.stop()
                    self.links.stop()
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
        verdict = check(self.events, self.now_ms).as_dict()
        mismatches = compare(verdict, s.expect.as_dict() if s.expect else {})
        expect_met = not mismatches if s.expect is not None and s.expect.as_dict() else None
        self.record(
            "lab",
            "run_finished",
            {"verdict": verdict, "expect_met": expect_met, "mismatches": mismatches},
        )
        return RunResult(self.events, verdict, mismatches)

    def inject(self, step: Step) -> None:
        """Add a step to a running run, to happen now (the free-play lab's clicks)."""
        with self._wake:
            index = len(self.steps)
            self.steps.append(step)
            self._push(self.now_ms, lambda: self._dispatch(index, step))

    def finish(self) -> None:
        """End an open-ended run once what is scheduled has happened."""
        self._finish.set()
        with self._wake:
            self._wake.notify_all()

    def _describe(self, addresses: dict[str, str]) -> dict[str, Any]:
        s = self.scenario
        return {
            "title": s.title,
            "backend": s.backend,
            "variant": s.variant or backends_default_variant(s.backend),
            "fencing": s.fencing,
            "ttl_ms": s.ttl_ms,
            "clients": list(s.clients),
            "nodes": s.nodes,
            "storage": "storage",
            "servers": addresses,
            "duration_ms": s.duration_ms,
            "lab": self.lab.kind,
        }

    def _start_clients(self, clocks: dict[str, ClientClock]) -> None:
        s = self.scenario
        base = {**s.to_json(), "steps": None, "nodes": s.nodes, "timeout_ms": CALL_TIMEOUT_MS}
        self.clients = {
            name: ClientProcess(
                name,
                {
                    **base,
                    "servers": self.links.addresses_for(name),
                    "clock_file": clocks[name].path,
                },
                self.record,
            )
            for name in s.clients
        }
        for client in self.clients.values():
            client.start()
        for client in self.clients.values():
            client.wait_ready()

    # -- the schedule -------------------------------------------------------------------------

    def _push(self, at_ms: float, action: Callable[[], None]) -> None:
        with self._wake:
            heapq.heappush(self._queue, (at_ms, next(self._order), action))
            self._wake.notify_all()

    def _play(self) -> None:
        """Dispatch each step at its time; pauses schedule their own thaw."""
        for index, step in enumerate(self.scenario.steps):
            self._push(step.at_ms, lambda i=index, st=step: self._dispatch(i, st))
        deadline = time.monotonic() + OPEN_RUN_LIMIT_S
        while (action := self._next_action(deadline)) is not None:
            action()

    def _next_action(self, deadline: float) -> Callable[[], None] | None:
        """The next due action, waiting for it; ``None`` when the run has nothing more to do."""
        with self._wake:
            while True:
                if self._queue:
                    wait = (self._queue[0][0] - self.now_ms) / 1000
                    if wait <= 0:
                        return heapq.heappop(self._queue)[2]
                else:
                    if not self.open_ended or self._finish.is_set():
                        return None
                    if time.monotonic() > deadline:
                        return None
                    wait = 0.5
                self._wake.wait(wait)

    def _dispatch(self, index: int, step: Step) -> None:
        details: dict[str, Any] = {"index": index, "do": step.do}
        for name in ("client", "node", "nodes", "ms", "value", "timeout_ms", "ttl_ms", "mode"):
            if getattr(step, name) is not None:
                details[name] = getattr(step, name)
        for name in ("jitter_ms", "rate", "say"):
            if getattr(step, name) is not None:
                details[name] = getattr(step, name)
        self.record("lab", "step", details)
        if step.do in ("clock_jump", "clock_rate", "partition", "heal", "delay") or step.node:
            self.faults.apply(step)
        else:
            self._client_step(step)

    def _client_step(self, step: Step) -> None:
        client = self.clients[step.client or ""]
        if step.do == "pause":
            if client.crashed:
                return
            client.pause()
            self.record(client.name, "paused", {"ms": step.ms})
            self._push(self.now_ms + (step.ms or 0), lambda: self._thaw(client))
        elif step.do == "crash":
            client.crash()
            self.record(client.name, "crashed", {})
        elif step.do == "acquire":
            timeout = step.timeout_ms if step.timeout_ms is not None else DEFAULT_ACQUIRE_TIMEOUT_MS
            client.send({"op": "acquire", "timeout_ms": timeout})
        elif step.do == "write":
            client.send({"op": "write", "value": step.value, "check_lease": bool(step.check_lease)})
        elif step.do == "extend":
            client.send({"op": "extend", "ttl_ms": step.ttl_ms})
        else:
            client.send({"op": step.do})

    def _thaw(self, client: ClientProcess) -> None:
        if client.paused and not client.crashed:
            client.resume()
            self.record(client.name, "resumed", {})

    def _drain(self) -> None:
        """Let every client finish what it was told (a frozen one is thawed by now)."""
        waits = [
            s.timeout_ms or DEFAULT_ACQUIRE_TIMEOUT_MS for s in self.steps if s.do == "acquire"
        ]
        deadline = time.monotonic() + (max(waits, default=0) + DRAIN_MARGIN_MS) / 1000
        for client in self.clients.values():
            client.wait_idle(max(0.0, deadline - time.monotonic()))
        time.sleep(0.05)  # late notifications from the servers' observers


def backends_default_variant(backend: str) -> str:
    from lockviz.scenarios.schema import BACKENDS

    return str(BACKENDS[backend]["variants"][0])
