"""Where a run's servers come from: started fresh for it, or borrowed from outside.

One module past the usual ~300 lines, on purpose: the two labs answer one protocol, and a
reader compares them side by side.

:class:`LocalLab` (the default) starts every run's servers as children of the app, on free
loopback ports in a run dir of its own (0700, under the user's lab base: see
:mod:`lockviz.lab.registry`), and stops them when the run ends. A server whose port another
process took before it could bind it is started again, with the rest of its kind, on other
ports (up to :data:`PORT_TRIES` times); no server is used before it has proved it is the one
the lab started. With ``LOCKVIZ_SERVERS`` set, :class:`ExternalLab` uses servers someone else
runs instead, one run at a time, each waiting its turn in a visible queue, and wipes them before
each run.

A :class:`LocalLab` with a pool of warm spares (:mod:`lockviz.lab.spares`, handed to it by
:mod:`lockviz.lab.making`; named here only by the :class:`Spares` protocol) takes each kind's
servers from it when one is ready (never-used servers, started ahead in a dir of their own, which
the run's set then owns and removes) and starts the others as above.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from lockviz.catalogue import server_kind
from lockviz.lab import procs, registry
from lockviz.lab.errors import LabError
from lockviz.lab.ports import split_address
from lockviz.lab.servers import KINDS, install_hint, missing, module_for
from lockviz.lab.servers.base import ExternalServer, PortTaken, Server, ServerModule, ServerOptions

PORT_TRIES = 3  # starts of a kind of server, each on fresh ports, before the run fails
log = logging.getLogger(__name__)

OnWait = Callable[[int], None]  # hears a run's place in the queue for shared servers


class Spares(Protocol):
    """What a :class:`LocalLab` asks of a pool of warm spares (:class:`lockviz.lab.spares.
    SparePool`, which starts its servers through this module, so the lab names it by what it
    does; :mod:`lockviz.lab.making` hands one over)."""

    def take(self, names: list[str], options: ServerOptions | None = None) -> ServerSet | None:
        """A ready set of ``names`` for one run, or None (the run starts its own)."""
        ...


@dataclass
class ServerSet:
    """The servers one run uses, by name (``redis-1``, ``storage``)."""

    servers: dict[str, Server]
    workdir: str | None = None
    local: bool = True
    spare_dirs: list[str] = field(default_factory=list)  # dirs of spares it took (it owns them)

    def __getitem__(self, name: str) -> Server:
        return self.servers[name]

    def addresses(self) -> dict[str, str]:
        return {name: server.address for name, server in self.servers.items()}

    def peers(self, name: str) -> list[str]:
        """The other servers of ``name``'s group: those it names (a replicated Redis's nodes
        and Sentinels), else its kind's servers in this set (an ensemble, a cluster)."""
        server = self.servers[name]
        group = server.group_names()
        if group is not None:
            return [n for n in group if n != name and n in self.servers]
        return [n for n, s in self.servers.items() if n != name and s.kind == server.kind]

    def announced(self) -> dict[str, str]:
        """The address its group knows each server by -> its name (servers of no group left
        out): how a client maps a server's name for another (Sentinel's answer) to a link."""
        found = {name: server.known_as() for name, server in self.servers.items()}
        return {address: name for name, address in found.items() if address is not None}

    def roles(self) -> dict[str, str]:
        """Each server's part in its group as it says now (servers of no group left out): all
        asked at once, as a ZooKeeper ensemble's ``srvr`` answers are waited for before t0."""
        found: dict[str, str | None] = dict.fromkeys(self.servers)  # in the servers' order

        def ask(name: str, server: Server) -> None:
            found[name] = server.role()

        each_at_once(functools.partial(ask, *each) for each in self.servers.items())
        return {name: role for name, role in found.items() if role is not None}

    def passwords(self) -> dict[str, str]:
        """Each server's password, for the servers that have one (what clients must present)."""
        return {name: s.password for name, s in self.servers.items() if s.password}

    def close(self) -> None:
        """Stop every server, each one even if stopping another failed (the first failure is
        raised after); then forget and remove the run dir, unless a process of the set is still
        alive: its record is what lets ``lab down`` (or the next start-up) find it."""
        try:
            if self.local:  # each at once: a ZooKeeper JVM takes its time to go
                each_at_once(server.stop for server in self.servers.values())
        finally:
            left = [pid for s in self.servers.values() for pid in s.pids() if procs.alive(pid)]
            for workdir in [self.workdir, *self.spare_dirs] if not left else []:
                if workdir:
                    registry.forget(workdir)
                    shutil.rmtree(workdir, ignore_errors=True)


class LocalLab:
    """Starts fresh servers for each run as children of this process."""

    kind = "embedded"

    def __init__(self, base_dir: str | None = None, spares: Spares | None = None) -> None:
        self.base_dir = base_dir
        self.spares = spares  # warm spares to take servers from (None: start every server)

    def check(self, names: list[str]) -> None:
        for name in names:
            kind = server_kind(name)
            if kind is None or kind not in KINDS:
                raise LabError(f"this lab cannot start a server called {name!r}")
            absent = missing(kind)
            if absent:
                raise LabError(install_hint(absent))

    @contextlib.contextmanager
    def servers(
        self, names: list[str], on_wait: OnWait | None = None, options: ServerOptions | None = None
    ) -> Iterator[ServerSet]:
        self.check(names)
        options = options or {}
        workdir = registry.new_run_dir(base=self.base_dir)
        by_kind: dict[ServerModule, list[str]] = {}
        for name in names:
            by_kind.setdefault(module_for(name), []).append(name)
        started = ServerSet({}, workdir)
        _record(started)  # at once: an app killed while creating (initdb...) leaves a dir to sweep
        try:
            fresh = self._take_spares(started, by_kind, options)
            for module, group in fresh.items():
                create_group(started, module, group, options)
            # Each kind at once: one kind's slow start (initdb, a JVM, a raft election) need not
            # wait for another's. Every pid is recorded before any is waited for.
            each_at_once(
                functools.partial(_launch, [started[name] for name in group])
                for group in fresh.values()
            )
            _record(started)
            each_at_once(
                functools.partial(wait_group, started, module, group, options)
                for module, group in fresh.items()
            )
            _record(started)  # a server restarted on its way to ready (a leader made) included
            yield ServerSet({n: started.servers[n] for n in names}, workdir)
        finally:
            started.close()

    def _take_spares(
        self, started: ServerSet, by_kind: dict[ServerModule, list[str]], options: ServerOptions
    ) -> dict[ServerModule, list[str]]:
        """Take each kind's servers from the pool when a spare is ready (the set owns them from
        then on, and their dir); the kinds left to start fresh."""
        if self.spares is None:
            return by_kind
        fresh = {}
        for module, group in by_kind.items():
            spare = self.spares.take(group, options)
            if spare is None:
                fresh[module] = group
                continue
            started.servers.update(spare.servers)
            started.spare_dirs.extend(d for d in [spare.workdir] if d)
        if fresh != by_kind:
            _record(started)  # the run's record names the spares' processes too
        return fresh


def create_group(
    started: ServerSet, module: ServerModule, group: list[str], options: ServerOptions
) -> None:
    """One kind's servers, created (not launched) in ``started``'s dir."""
    for server in module.create(group, started.workdir or "", options):
        started.servers[server.name] = server


def wait_group(
    started: ServerSet, module: ServerModule, group: list[str], options: ServerOptions
) -> None:
    """Wait for one kind's servers; if a port was taken from under them, start them all
    again, afresh, on other ports (an ensemble's members know each other's ports)."""
    for attempt in range(1, PORT_TRIES + 1):
        try:
            for name in group:
                started[name].wait_ready()
            return
        except PortTaken as exc:
            if attempt == PORT_TRIES:
                raise LabError(f"{exc} (tried {PORT_TRIES} sets of ports)") from exc
            log.warning("%s; starting %s again on other ports", exc, ", ".join(group))
        previous = [started[name] for name in group]
        procs.run_each(server.stop for server in previous)
        for server in previous:
            shutil.rmtree(server.workdir, ignore_errors=True)
        create_group(started, module, group, options)
        for name in group:
            started[name].launch()
        _record(started)


def start_group(
    started: ServerSet, module: ServerModule, group: list[str], options: ServerOptions
) -> None:
    """Create, launch and wait for one kind's servers in ``started`` (recorded once launched)."""
    create_group(started, module, group, options)
    _launch([started[name] for name in group])
    _record(started)
    wait_group(started, module, group, options)
    _record(started)


def _launch(servers: list[Server]) -> None:
    for server in servers:
        server.launch()


def each_at_once(steps: Iterable[Callable[[], object]]) -> None:
    """Do every step, each in a thread of its own, and wait for all; then raise the first
    failure (the others noted on it), as :func:`lockviz.lab.procs.run_each` does."""
    failures: list[BaseException] = []

    def do(step: Callable[[], object]) -> None:
        try:
            step()
        except BaseException as exc:  # raised below, in the caller's thread
            failures.append(exc)

    threads = [threading.Thread(target=do, args=(step,), daemon=True) for step in steps]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        for other in failures[1:]:
            failures[0].add_note(f"also failed: {other!r}")
        raise failures[0]


_recording = threading.Lock()


def _record(started: ServerSet) -> None:
    """Write the set's lab.json: every process of every server, and the ports."""
    assert started.workdir is not None
    with _recording:  # kinds restarted on other ports, each in its own thread
        _write_record(started)


def _write_record(started: ServerSet) -> None:
    assert started.workdir is not None
    registry.record(
        started.workdir,
        {f"{n}#{i}": pid for n, s in started.servers.items() for i, pid in enumerate(s.pids())},
        ports={n: s.port for n, s in started.servers.items()},
    )


class ExternalLab:
    """Uses servers given as ``LOCKVIZ_SERVERS=redis-1=host:port,storage=host:port``.

    They are shared, so runs take turns: ``on_wait`` hears each run's place in the queue.
    """

    kind = "external"

    def __init__(self, spec: str) -> None:
        self.servers_by_name: dict[str, ExternalServer] = {}
        for item in filter(None, (part.strip() for part in spec.split(","))):
            name, _, address = item.partition("=")
            try:
                host, port = split_address(address)
            except ValueError:
                raise LabError(
                    f"LOCKVIZ_SERVERS: cannot read {item!r}; use name=host:port"
                ) from None
            if server_kind(name) is None:
                raise LabError(
                    f"LOCKVIZ_SERVERS: {name!r} is not a server's name (redis-1, zk-1...)"
                )
            self.servers_by_name[name] = ExternalServer(name, host, port)
        self._turn = threading.Lock()
        self._queue: list[object] = []
        self._queue_lock = threading.Lock()

    def check(self, names: list[str]) -> None:
        absent = [n for n in names if n not in self.servers_by_name]
        if absent:
            raise LabError(f"LOCKVIZ_SERVERS has no {', '.join(absent)}")

    @contextlib.contextmanager
    def servers(
        self, names: list[str], on_wait: OnWait | None = None, options: ServerOptions | None = None
    ) -> Iterator[ServerSet]:
        self.check(names)
        ticket = object()
        with self._queue_lock:
            self._queue.append(ticket)
        while not self._turn.acquire(timeout=0.5):
            if on_wait:
                with self._queue_lock:
                    on_wait(self._queue.index(ticket))
        with self._queue_lock:
            self._queue.remove(ticket)
        chosen: dict[str, Server] = {name: self.servers_by_name[name] for name in names}
        try:
            for server in chosen.values():
                try:
                    module_for(server.name).wipe(server.host, server.port)
                except Exception as exc:  # any client library's error: the server is unusable
                    raise LabError(
                        f"{server.name} at {server.address} is unreachable: {exc}"
                    ) from exc
            yield ServerSet(chosen, local=False)
        finally:
            self._turn.release()


Lab = LocalLab | ExternalLab


def checking(servers_spec: str | None) -> Lab:
    """A lab to ask what it could run (:meth:`LocalLab.check`), never to run anything: no pool
    of spares (a web process asking for the free-play form started one it never used)."""
    return ExternalLab(servers_spec) if servers_spec else LocalLab()


def self_test() -> None:
    """Start a lock node and a storage node once, and stop them: proof that the lab works here
    (``serve`` and ``labhost`` run it as they start, and stop with its error if it does not)."""
    with LocalLab().servers(["redis-1", "storage"]):
        pass
