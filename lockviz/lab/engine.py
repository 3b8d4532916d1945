"""The run engine: one scenario, played on a real-time schedule against real servers.

It provisions the run's servers from the lab, starts one process per client, dispatches each
step at its time (commands to clients, signals for pauses and crashes, clock files for jumps),
records every event with a sequence number and a time on the reference clock, hands each to a
sink (which stores and broadcasts it), and finally judges the history with the checker.

Whatever happens, the run leaves nothing behind: paused clients are thawed and stopped, servers
are stopped, clock files removed with their temp dir.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from algorithms.checker import check, compare
from lockviz.lab import backends
from lockviz.lab.clients import ClientProcess
from lockviz.lab.servers import ExternalLab, LabError, LocalLab
from lockviz.lab.servers.redis import RedisServer
from lockviz.scenarios.schema import Scenario, Step

EventSink = Callable[[dict[str, Any]], None]
DEFAULT_ACQUIRE_TIMEOUT_MS = 10_000
CALL_TIMEOUT_MS = 1_000
DRAIN_MARGIN_MS = 5_000


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
    ) -> None:
        self.scenario = scenario
        self.lab = lab
        self.sink = sink
        self.on_wait = on_wait
        self.events: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._t0_ns = 0
        self.clients: dict[str, ClientProcess] = {}

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

    # -- the run ------------------------------------------------------------------------------

    def run(self) -> RunResult:
        s = self.scenario
        try:
            names = [*s.nodes, "storage"]
            options = {"persistence": s.persistence}
            with self.lab.servers(names, self.on_wait, options) as servers:
                self.servers = servers
                self._start_clients(servers.addresses())
                watchers = backends.get(s.backend).watchers(servers, s, self.record)
                for watcher in watchers:
                    watcher.start()
                try:
                    self._t0_ns = time.monotonic_ns()
                    self.record("lab", "run_started", self._describe(servers.addresses()))
                    self._play()
                    self._drain()
                finally:
                    for client in self.clients.values():
                        client.close()
                    for watcher in watchers:
                        watcher.stop()
        except LabError as exc:
            if not self._t0_ns:
                self._t0_ns = time.monotonic_ns()
            self.record("lab", "run_failed", {"error": str(exc)})
            return RunResult(self.events, error=str(exc))
        finally:
            for client in self.clients.values():
                client.close()
        end_ms = (time.monotonic_ns() - self._t0_ns) / 1e6
        verdict = check(self.events, end_ms).as_dict()
        mismatches = compare(verdict, s.expect.as_dict() if s.expect else {})
        expect_met = None if s.expect is None else not mismatches
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
            "variant": s.variant or "safe",
            "fencing": s.fencing,
            "ttl_ms": s.ttl_ms,
            "clients": list(s.clients),
            "nodes": s.nodes,
            "storage": "storage",
            "servers": addresses,
            "duration_ms": s.duration_ms,
            "lab": self.lab.kind,
        }

    def _start_clients(self, addresses: dict[str, str]) -> None:
        s = self.scenario
        config = {
            **s.to_json(),
            "steps": None,
            "nodes": s.nodes,
            "servers": addresses,
            "timeout_ms": CALL_TIMEOUT_MS,
        }
        self.clients = {name: ClientProcess(name, config, self.record) for name in s.clients}
        for client in self.clients.values():
            client.start()
        for client in self.clients.values():
            client.wait_ready()

    def _play(self) -> None:
        """Dispatch each step at its time; pauses schedule their own thaw."""
        queue: list[tuple[int, int, Callable[[], None]]] = []
        for index, step in enumerate(self.scenario.steps):
            queue.append((step.at_ms, index, lambda i=index, st=step: self._dispatch(i, st, queue)))
        heapq.heapify(queue)
        while queue:
            at_ms, _, action = heapq.heappop(queue)
            delay = self._t0_ns / 1e9 + at_ms / 1000 - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            action()

    def _dispatch(self, index: int, step: Step, queue: list[Any]) -> None:
        details: dict[str, Any] = {"index": index, "do": step.do}
        for name in ("client", "node", "ms", "value", "timeout_ms", "ttl_ms", "say"):
            if getattr(step, name) is not None:
                details[name] = getattr(step, name)
        self.record("lab", "step", details)
        if step.client is not None:
            self._client_step(step, queue)
        elif step.node is not None:
            self._node_step(step)

    def _client_step(self, step: Step, queue: list[Any]) -> None:
        client = self.clients[step.client or ""]
        if step.do == "pause":
            if client.crashed:
                return
            client.pause()
            self.record(client.name, "paused", {"ms": step.ms})
            thaw_at = (time.monotonic_ns() - self._t0_ns) / 1e6 + (step.ms or 0)
            heapq.heappush(queue, (int(thaw_at), -1, lambda: self._thaw(client)))
        elif step.do == "crash":
            client.crash()
            self.record(client.name, "crashed", {})
        elif step.do == "acquire":
            timeout = step.timeout_ms if step.timeout_ms is not None else DEFAULT_ACQUIRE_TIMEOUT_MS
            client.send({"op": "acquire", "timeout_ms": timeout})
        elif step.do == "write":
            client.send({"op": "write", "value": step.value})
        elif step.do == "extend":
            client.send({"op": "extend", "ttl_ms": step.ttl_ms})
        else:
            client.send({"op": step.do})

    def _thaw(self, client: ClientProcess) -> None:
        if client.paused and not client.crashed:
            client.resume()
            self.record(client.name, "resumed", {})

    def _node_step(self, step: Step) -> None:
        server = self.servers[step.node or ""]
        if not isinstance(server, RedisServer):
            raise LabError(f"{step.do} on {step.node} needs the embedded lab (servers it started)")
        if step.do == "clock_jump":
            total = server.jump_clock(step.ms or 0)
            self.record(server.name, "clock_jumped", {"ms": step.ms, "offset_ms": total})
        elif step.do == "crash":
            server.kill()
            self.record(server.name, "crashed", {})
        elif step.do == "restart":
            server.launch()
            server.wait_ready()
            self.record(server.name, "restarted", {})

    def _drain(self) -> None:
        """Let every client finish what it was told (a frozen one is thawed by now)."""
        waits = [
            s.timeout_ms or DEFAULT_ACQUIRE_TIMEOUT_MS
            for s in self.scenario.steps
            if s.do == "acquire"
        ]
        deadline = time.monotonic() + (max(waits, default=0) + DRAIN_MARGIN_MS) / 1000
        for client in self.clients.values():
            client.wait_idle(max(0.0, deadline - time.monotonic()))
        time.sleep(0.05)  # late keyspace notifications from the servers
