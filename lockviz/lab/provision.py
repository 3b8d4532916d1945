"""A run's lab, built whole and torn down by one path: servers, links, clients, watchers, faults.

:func:`provision` is a context manager. It builds everything a run plays against, in order:
where its clock files live, the storage service when the storage checks sequencers, a proxy on
every client↔server link, one process per client, the backend's watchers on the servers, and the
fault seam over all of them. Each part registers how it is undone the moment it exists, on one
:class:`contextlib.ExitStack`; leaving the block undoes them in reverse (faults undone, clients
closed, watchers stopped, links stopped, the service closed, the clock files' dir removed), every
step even when an earlier one fails. A part that fails to start undoes what came before it.

Until it is provisioned a run has :data:`UNPROVISIONED`, which has nothing to thaw, stop or
crash; the engine talks to whichever it has (:class:`Stage`), never to a ``None``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass
from typing import Protocol

from algorithms.clock import ClockFile
from lockviz.catalogue import STORAGE, ZOOKEEPER
from lockviz.lab import children, watchers
from lockviz.lab.backends import zookeeper
from lockviz.lab.clients import ClientProcess, Took
from lockviz.lab.config import ClientConfig, StorageServiceConfig
from lockviz.lab.errors import LabError
from lockviz.lab.events import Record
from lockviz.lab.faults import Faults
from lockviz.lab.labs import ServerSet
from lockviz.lab.links import Links
from lockviz.lab.scheduler import Scheduler
from lockviz.lab.watchers.base import Watcher
from lockviz.scenarios.schema import Scenario, Step

CALL_TIMEOUT_MS = 1_000
WATCHERS_SETTLE_S = 2.0  # at most this long for the watchers to catch up (a dump, a poll)
READY_TIMEOUT_S = 15.0  # for a client process, or a watcher, to be ready before the run starts


class Stage(Protocol):
    """What the engine asks of its lab, provisioned or not."""

    def thaw_all(self, why: str) -> None:
        """Thaw every paused client and server."""

    def halt(self) -> None:
        """Make whatever a step waits on return now: crash the clients, stop the links."""


class Unprovisioned:
    """A run's lab before it exists: nothing to thaw or halt."""

    def thaw_all(self, why: str) -> None:
        pass

    def halt(self) -> None:
        pass


UNPROVISIONED = Unprovisioned()


@dataclass(frozen=True)
class Provisioned:
    """A run's lab, every part started and ready."""

    servers: ServerSet
    links: Links
    clients: dict[str, ClientProcess]
    watchers: list[Watcher]
    faults: Faults
    service: ClientProcess | None  # the storage service, when the storage checks sequencers

    def thaw_all(self, why: str) -> None:
        self.faults.thaw_all(why)

    def halt(self) -> None:
        for client in list(self.clients.values()):
            client.crash()  # whatever a step waits on from a client returns now
        self.links.stop()  # and whatever it waits on from the proxy

    def pids(self) -> list[int]:
        """Every process of the run's lab: its servers', its proxy's, its clients'."""
        servers = self.servers.servers.values() if self.servers.local else ()  # shared: not its
        found = [pid for server in servers for pid in server.pids()]
        processes = [*self.clients.values(), *([self.service] if self.service else [])]
        children = [self.links.proc, *(client.proc for client in processes)]
        return found + [child.pid for child in children if child is not None]

    def apply(self, step: Step) -> None:
        """A step that is not a client's own command: a fault, by its target."""
        self.faults.apply(step)

    def drain(self, wait_s: float) -> None:
        """Let every client finish what it was told (within ``wait_s``), then the watchers catch
        up with what the servers decided by then (at most :data:`WATCHERS_SETTLE_S`)."""
        deadline = time.monotonic() + wait_s
        for client in self.clients.values():
            client.wait_idle(max(0.0, deadline - time.monotonic()))
        idle_ns = time.monotonic_ns()
        time.sleep(0.05)  # late notifications from the servers' observers
        settle = time.monotonic() + WATCHERS_SETTLE_S
        while not all(w.caught_up(idle_ns) for w in self.watchers) and time.monotonic() < settle:
            time.sleep(0.02)  # a watcher still asking a server (or polling it) what it decided


@dataclass(frozen=True)
class Wiring:
    """What provisioning needs from the engine: how events are recorded and timers kept."""

    record: Record
    timers: Scheduler
    took: Callable[[str], Took]  # a client's "I began a command" hook, by client name
    alone: AbstractContextManager[object]  # held: nobody else's event is told (Faults.alone)


@contextmanager
def provision(scenario: Scenario, servers: ServerSet, wiring: Wiring) -> Iterator[Provisioned]:
    """The run's lab on ``servers``, ready; undone, whatever happens, when the block ends."""
    with ExitStack() as undo:
        workdir = servers.workdir  # in the run's own dir: a killed app's leftovers go with it
        if not workdir:
            workdir = tempfile.mkdtemp(prefix="lockviz-")
            undo.callback(shutil.rmtree, workdir, ignore_errors=True)
        service = _storage_service(scenario, servers, wiring.record)
        if service is not None:
            undo.callback(service.close)
        links = Links(list(scenario.clients), _leads_to(servers, service))
        undo.callback(links.stop)
        watching = watchers.for_backend(scenario.backend, servers, scenario.nodes, wiring.record)
        for watcher in watching:
            undo.callback(watcher.stop)
        clocks = {c: ClockFile(os.path.join(workdir, f"{c}.clock")) for c in scenario.clients}
        clients: dict[str, ClientProcess] = {}
        faults = Faults(servers, links, clients, clocks, wiring.record, wiring.timers, wiring.alone)
        links.start()
        for name in scenario.clients:
            config = ClientConfig.for_client(
                scenario, name, links.addresses_for(name), clocks[name].path, CALL_TIMEOUT_MS,
                passwords=servers.passwords(), announced=servers.announced(),
            )  # fmt: skip
            clients[name] = client = ClientProcess(config, wiring.record, wiring.took(name))
            undo.callback(client.close)
        undo.callback(faults.undo_all)  # first of all to be undone: thaw, heal, reset clocks
        for client in clients.values():
            client.start()
        for watcher in watching:  # all at once, while the clients start: each connects to its
            watcher.start(timeout_s=0)  # own server (a ZooKeeper session, a PostgreSQL login)
        for client in clients.values():
            client.wait_ready(READY_TIMEOUT_S)
        for watcher in watching:  # the story starts only once every server is watched
            if not watcher.wait_ready(READY_TIMEOUT_S):
                raise LabError(f"the lab could not start watching {watcher.name}")
        yield Provisioned(servers, links, clients, watching, faults, service)


def _storage_service(
    scenario: Scenario, servers: ServerSet, record: Record
) -> ClientProcess | None:
    """The storage service in front of the storage node, started and ready, when the storage
    checks sequencers (the clients' ``storage`` links lead to it)."""
    if scenario.storage_kind != "sequencer":
        return None
    config = StorageServiceConfig(
        backend=scenario.backend,
        variant=scenario.variant or scenario.lock_service.default_variant,
        nodes=tuple(scenario.nodes),
        ttl_ms=scenario.ttl_ms,
        servers=servers.addresses(),
        call_timeout_ms=CALL_TIMEOUT_MS,
        passwords=servers.passwords(),
    )
    service = ClientProcess(config, record, module=children.STORAGE_SERVICE)
    try:
        service.start()
        service.wait_ready()
    except BaseException:
        service.close()
        raise
    return service


def _leads_to(servers: ServerSet, service: ClientProcess | None) -> dict[str, str]:
    """Where the clients' links lead: each server, or the storage service for ``storage``."""
    addresses = servers.addresses()
    if service is None:
        return addresses
    return {**addresses, STORAGE: f"127.0.0.1:{service.ready['port']}"}


def described(scenario: Scenario, servers: ServerSet, lab_kind: str) -> dict[str, object]:
    """What ``run_started`` says of the run: its scenario, and the servers it plays against
    (a group's are asked their roles: before the run's clock starts)."""
    s = scenario
    roles = servers.roles() if s.lock_service.grouped(s.node_count) else {}
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
        "lab": lab_kind,
    }
