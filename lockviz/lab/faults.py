"""Every fault of a run, done where the world would do it — and undone at the run's end.

One door (:meth:`Faults.apply`) for every step that is not a client's own command, routed once
by the step's target (:mod:`lockviz.scenarios.verbs`):

* a client: a GC pause is SIGSTOP of its whole process, its thaw SIGCONT ``ms`` later (on the
  run's timers, not its schedule: a thaw is never late because a step is slow); a crash
  is SIGKILL; its clock moves or drifts through its clock file (algorithms.clock.ClockFile,
  read by the client's SkewedClock on every reading);
* a node: a clock jump moves the server's libfaketime clock (Redis); a crash is kill -9; a
  restart is a fresh process on the same port and data dir, so a node without fsync comes back
  empty and one with ``persistence: "fsync"`` keeps its keys; a pause is SIGSTOP of its main
  process, its thaw SIGCONT ``ms`` later, as for a client;
* a link: partition, heal and delay are done by the proxy process (lockviz.lab.links), between
  a client and servers, or between the servers of a group (an ensemble, a cluster, a primary
  with its replicas and Sentinels): a server from all its peers, or from those named.

Each fault is recorded as an event where it happens; a kill at the moment its signal is sent (a
holder's crash reaped late must not end its belief after the next holder's grant), and told
before anything the kill causes: a kill and its record are one moment of the story (``alone``,
the recorder's lock), so a watcher that sees a killed server's locks vanish tells it after the
crash, never before (a loaded machine once told PostgreSQL's freed lock first).
:meth:`Faults.undo_all` heals every link and resets every clock, so nothing leaks past the run.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field

from algorithms.clock import ClockFile
from lockviz.lab import procs
from lockviz.lab.clients import ClientProcess
from lockviz.lab.errors import LabError
from lockviz.lab.events import Record
from lockviz.lab.labs import ServerSet
from lockviz.lab.links import Links
from lockviz.lab.scheduler import Scheduler
from lockviz.scenarios.schema import Step
from lockviz.scenarios.verbs import Target


@dataclass
class Faults:
    """The run's faults: what they act on (its servers, links, client processes and their clock
    files), where they are recorded, the timers that undo a pause; what is down or cut off."""

    servers: ServerSet
    links: Links
    clients: dict[str, ClientProcess]
    clocks: dict[str, ClockFile]
    record: Record
    timers: Scheduler
    alone: AbstractContextManager[object] = field(default_factory=nullcontext)  # nothing else told
    crashed: set[str] = field(default_factory=set)  # servers down
    isolated: set[str] = field(default_factory=set)  # servers cut off from (some) peers
    frozen: set[str] = field(default_factory=set)  # servers paused (SIGSTOP)

    def apply(self, step: Step) -> None:
        if step.target is Target.LINK:
            self._link(step)
        elif step.target is Target.NODE:
            self._node(step)
        else:
            self._client(step)

    # -- clients --------------------------------------------------------------------------------

    def _client(self, step: Step) -> None:
        name = step.client or ""
        client = self.clients[name]
        if step.do == "pause":
            if client.crashed:
                return
            client.pause()
            self.record(name, "paused", {"ms": step.ms})
            self.timers.after(step.ms or 0, lambda: self.thaw(client, late=True), f"{name}'s thaw")
        elif step.do == "crash":
            with self.alone:
                killed_ns = time.monotonic_ns()  # the moment of the kill, not of its reaping
                client.crash()
                self.record(name, "crashed", {}, killed_ns)
        elif step.do == "clock_jump":
            total = self.clocks[name].jump(step.ms or 0)
            self.record(name, "clock_jumped", {"ms": step.ms, "offset_ms": total})
        elif step.do == "clock_rate":
            self.clocks[name].set_rate(step.rate or 1.0)
            self.record(name, "clock_rate", {"rate": step.rate})

    def thaw(self, client: ClientProcess, why: str = "", late: bool = False) -> None:
        """SIGCONT; ``late``: a thaw on its timer, which records how late it came."""
        if client.paused and not client.crashed:
            client.resume()
            details: dict[str, str | float] = {"why": why} if why else {}
            if late:
                details["late_ms"] = round(self.timers.late_ms(), 1)
            self.record(client.name, "resumed", details)

    def thaw_all(self, why: str) -> None:
        """End every pause now (the run is ending): each thaw recorded, with why."""
        for client in self.clients.values():
            self.thaw(client, why)
        for name in sorted(self.frozen):
            self.thaw_server(name, why)

    def thaw_server(self, name: str, why: str = "", late: bool = False) -> None:
        """SIGCONT to a paused server (recorded as a client's thaw is)."""
        if name not in self.frozen:
            return
        self.frozen.discard(name)
        self.servers[name].resume()
        details: dict[str, str | float] = {"why": why} if why else {}
        if late:
            details["late_ms"] = round(self.timers.late_ms(), 1)
        self.record(name, "resumed", details)

    # -- links ----------------------------------------------------------------------------------

    def _link(self, step: Step) -> None:
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
        every = self.servers.peers(server.name)
        peers = [peer for peer in every if peer in step.nodes] if step.nodes else every
        mode = "pass" if step.do == "heal" else step.mode or "blackhole"
        server.isolate(peers, mode)
        if mode == "pass" and peers == every:
            self.isolated.discard(server.name)
        elif mode != "pass":
            self.isolated.add(server.name)
        self.record(server.name, "link", {"peers": peers, "mode": mode})

    def _set_link(
        self, client: str, node: str, mode: str, ms: float = 0, jitter: float = 0
    ) -> None:
        self.links.set(client, node, mode, ms, jitter)
        details: dict[str, str | float] = {"node": node, "mode": mode}
        if mode == "delay":
            details.update(ms=ms, jitter_ms=jitter)
        self.record(client, "link", details)

    # -- nodes ----------------------------------------------------------------------------------

    def _node(self, step: Step) -> None:
        name = step.node or ""
        if not self.servers.local:
            raise LabError(f"{step.do} on {name} needs the embedded lab (servers it started)")
        server = self.servers[name]
        if step.do == "clock_jump":
            total = server.jump_clock(step.ms or 0)
            self.record(name, "clock_jumped", {"ms": step.ms, "offset_ms": total})
        elif step.do == "crash":
            with self.alone:  # what the kill frees (a watcher's "deleted") is told after it
                killed_ns = time.monotonic_ns()
                server.kill()
                self.crashed.add(name)
                self.frozen.discard(name)  # SIGKILL ends a stopped process too
                self.record(name, "crashed", {}, killed_ns)
        elif step.do == "pause":
            if name in self.crashed or name in self.frozen:
                return
            server.pause()
            self.frozen.add(name)
            self.record(name, "paused", {"ms": step.ms})
            thaw = lambda: self.thaw_server(name, late=True)  # noqa: E731
            self.timers.after(step.ms or 0, thaw, f"{name}'s thaw")
        elif step.do == "restart":
            if name not in self.crashed:
                server.kill()
            self.frozen.discard(name)
            began_ns = time.monotonic_ns()
            server.launch()
            server.wait_ready()
            boot_ms = (time.monotonic_ns() - began_ns) / 1e6
            pid = server.proc.pid if server.proc is not None else None
            starved_ms = (procs.most_waited_ns(pid) or 0) / 1e6 if pid is not None else 0.0
            self.crashed.discard(name)
            booted = {"boot_ms": round(boot_ms, 1), "starved_ms": round(starved_ms, 1)}
            self.record(name, "restarted", {"persistence": server.persistence, **booted})

    def undo_all(self) -> None:
        """Thaw every server, heal every link and reset every clock; the servers themselves
        are stopped later."""
        for name in list(self.frozen):
            self.frozen.discard(name)
            self.servers[name].resume()
        for name in list(self.isolated):
            self.servers[name].isolate(self.servers.peers(name), "pass")
        self.isolated.clear()
        for client, node in self.links.faulty() if self.links.alive else []:  # a stopped proxy
            self.links.set(client, node, "pass")  # (a failed run) carries nothing to heal
        for server in self.servers.servers.values():
            if server.offset_ms:
                server.reset_clock()
        for clock in self.clocks.values():
            clock.reset()
