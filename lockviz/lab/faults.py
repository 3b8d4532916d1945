"""Faults done to servers, links and client clocks during a run — and undone at its end.

Every fault is real and recorded as an event where it happens:

* server clock jump: the Redis node's libfaketime clock file (``clock_jumped`` on the node);
* server crash and restart: kill -9, then a fresh process on the same port and data dir, so a
  node without fsync comes back empty and one with ``persistence: "fsync"`` keeps its keys;
* link partition, heal and delay: the proxy process (``link`` on the client);
* client clock offset and rate: the client's own clock file, read by algorithms.clock's
  SkewedClock on every reading (``clock_jumped`` / ``clock_rate`` on the client).

``undo_all`` restores every link, clock file and node, so nothing leaks past the run.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any

from lockviz.lab.links import Links
from lockviz.lab.servers import LabError, ServerSet
from lockviz.scenarios.schema import Step

Record = Callable[[str, str, dict[str, Any]], None]


class ClientClock:
    """The clock file of one client: an offset (ms) and a rate, continuous across changes."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.offset_ms = 0.0
        self.rate = 1.0
        self.since_ns = time.monotonic_ns()
        self.base_ns = self.since_ns  # the client's monotonic reading at since_ns
        self.write()

    def write(self) -> None:
        state = {
            "offset_ms": self.offset_ms,
            "rate": self.rate,
            "since_ns": self.since_ns,
            "base_ns": self.base_ns,
        }
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(state, f)
        os.replace(tmp, self.path)  # whole or not at all

    def jump(self, ms: float) -> float:
        self.offset_ms += ms
        self.write()
        return self.offset_ms

    def set_rate(self, rate: float) -> None:
        now = time.monotonic_ns()
        self.base_ns += int((now - self.since_ns) * self.rate)
        self.since_ns, self.rate = now, rate
        self.write()


class Faults:
    def __init__(
        self, servers: ServerSet, links: Links, clocks: dict[str, ClientClock], record: Record
    ) -> None:
        self.servers = servers
        self.links = links
        self.clocks = clocks
        self.record = record
        self.crashed: set[str] = set()
        self.isolated: set[str] = set()  # servers cut off from their peers

    def apply(self, step: Step) -> None:
        if step.do in ("partition", "heal", "delay"):
            self._link_step(step)
        elif step.node is not None:
            self._node_step(step)
        elif step.do == "clock_jump":
            total = self.clocks[step.client or ""].jump(step.ms or 0)
            self.record(step.client or "", "clock_jumped", {"ms": step.ms, "offset_ms": total})
        elif step.do == "clock_rate":
            self.clocks[step.client or ""].set_rate(step.rate or 1.0)
            self.record(step.client or "", "clock_rate", {"rate": step.rate})

    def _link_step(self, step: Step) -> None:
        if step.node is not None:  # a server cut off from its peers (a ZooKeeper ensemble)
            self._isolate(step)
            return
        if step.do == "heal":
            targets = [
                (c, n)
                for c, n in self.links.faulty()
                if step.client in (None, c) and (not step.nodes or n in step.nodes)
            ]
            for client, node in targets:
                self._set_link(client, node, "pass")
            return
        for node in step.nodes or []:
            if step.do == "partition":
                self._set_link(step.client or "", node, step.mode or "blackhole")
            else:
                self._set_link(step.client or "", node, "delay", step.ms or 0, step.jitter_ms or 0)

    def _isolate(self, step: Step) -> None:
        server = self.servers[step.node or ""]
        peers = [n for n in self.servers.servers if n.startswith("zk-") and n != step.node]
        mode = "pass" if step.do == "heal" else step.mode or "blackhole"
        server.isolate(peers, mode)
        if mode == "pass":
            self.isolated.discard(server.name)
        else:
            self.isolated.add(server.name)
        self.record(server.name, "link", {"peers": peers, "mode": mode})

    def _set_link(
        self, client: str, node: str, mode: str, ms: float = 0, jitter: float = 0
    ) -> None:
        self.links.set(client, node, mode, ms, jitter)
        details: dict[str, Any] = {"node": node, "mode": mode}
        if mode == "delay":
            details.update(ms=ms, jitter_ms=jitter)
        self.record(client, "link", details)

    def _node_step(self, step: Step) -> None:
        name = step.node or ""
        if not self.servers.local:
            raise LabError(f"{step.do} on {name} needs the embedded lab (servers it started)")
        server = self.servers[name]
        if step.do == "clock_jump":
            if not hasattr(server, "jump_clock"):
                raise LabError(f"clock jumps work on Redis nodes only, not on {name}")
            total = server.jump_clock(step.ms or 0)
            self.record(name, "clock_jumped", {"ms": step.ms, "offset_ms": total})
        elif step.do == "crash":
            server.kill()
            self.crashed.add(name)
            self.record(name, "crashed", {})
        elif step.do == "restart":
            if name not in self.crashed:
                server.kill()
            server.launch()
            server.wait_ready()
            self.crashed.discard(name)
            self.record(name, "restarted", {"persistence": getattr(server, "persistence", None)})

    def undo_all(self) -> None:
        """Heal every link and reset every clock; the servers themselves are stopped later."""
        for name in list(self.isolated):
            peers = [n for n in self.servers.servers if n.startswith("zk-") and n != name]
            self.servers[name].isolate(peers, "pass")
        self.isolated.clear()
        for client, node in self.links.faulty():
            self.links.set(client, node, "pass")
        for server in self.servers.servers.values():
            if getattr(server, "offset_ms", 0) and hasattr(server, "reset_clock"):
                server.reset_clock()
        for clock in self.clocks.values():
            clock.offset_ms, clock.rate = 0.0, 1.0
            clock.write()
