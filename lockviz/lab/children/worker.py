"""A scenario client (alice, bob, ...) as an OS process of its own.

Forked from the lab's warm fork server (:mod:`lockviz.lab.forkserver`), or run as ``python -m
lockviz.lab.children.worker``. It reads its :class:`~lockviz.lab.config.ClientConfig` as the
first line on stdin, then one command per line: the scenario step to run (``{"do": "acquire",
"timeout_ms": 5000}``). It writes one event per line on stdout, each stamped with the host's
CLOCK_MONOTONIC where it happened. Commands run one after another, like the code of a real
single-threaded client: a command sent while the process is frozen (SIGSTOP) waits in the pipe
until it thaws. It writes ``{"kind": "_took"}`` as it takes each command (the engine measures
how late a busy machine let it begin) and ``{"kind": "_done"}`` after it.

With ``renew`` a watchdog thread extends the lease every ttl/3 (algorithms.renewal); it lives in
this process, so a pause freezes it too.

What the client keeps between commands, as code keeps it in variables: the token and the
sequencer of its latest grant (kept after the lock is gone, which is what a late write carries)
and the version it last read (a write is based on it; after its own accepted write, the version
that write made). A sequencer run writes through the storage service, not to the storage node; a
``fenced_reads`` storage is read with the token too; a replicated storage (``lww``, ``crdt``) is
written to and read from each of its replicas, the client's own first (alice's is ``storage``,
bob's ``storage-2``, and so on in turn). In a leader election ``leader`` asks who leads.

This module imports no Django: it starts fast and runs only the lock client from algorithms/.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Mapping

from algorithms.clock import Clock, SkewedClock, SystemClock
from algorithms.errors import LockError
from algorithms.events import EventSink, json_line
from algorithms.fenced_storage import FencedStorage
from algorithms.lock import Election, Grant
from algorithms.redis_client import connect
from algorithms.renewal import Renewer
from algorithms.replicated_storage import ReplicatedStorage
from algorithms.sequencer import Sequencer
from algorithms.storage_service import ServiceStorage
from lockviz.catalogue import STORAGE, STORAGE_KEY, STORAGE_KINDS
from lockviz.lab.backends import lock_factory
from lockviz.lab.config import ClientConfig
from lockviz.lab.procs import die_with_parent
from lockviz.scenarios.verbs import DEFAULT_ACQUIRE_TIMEOUT_MS

Command = Mapping[str, object]  # a validated step of a command verb, as JSON (Step.to_json())


class Worker:
    def __init__(self, config: ClientConfig) -> None:
        self.name = config.name
        self._out = threading.Lock()
        self._mutex = threading.Lock()  # one lock operation at a time: commands and watchdog
        self.last_token = 0  # the fencing token of this client's latest grant
        self.last_sequencer: Sequencer | None = None  # and its sequencer
        self.last_read: int | None = None  # the version this client's writes are based on
        # The client's own clock, which the lab may offset or slow down (through a ClockFile).
        self.clock = SkewedClock(config.clock_file) if config.clock_file else SystemClock()
        self.lock = lock_factory(config.backend)(config, self.clock, self.emit)
        self.renewer = (
            Renewer(self.lock, config.ttl_ms, self._mutex, self.emit) if config.renew else None
        )
        self.storage = make_storage(config, self.clock, self.emit)

    def emit(self, kind: str, details: Mapping[str, object]) -> None:
        line = json_line(time.monotonic_ns(), kind, details)  # json.dumps's text, faster
        with self._out:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def note(self, text: str) -> None:
        self.emit("note", {"text": text})

    def handle(self, command: Command) -> None:
        """Run one command (a scenario step whose verb is a client command)."""
        handler = {
            "acquire": self.acquire,
            "release": self.release,
            "extend": self.extend,
            "read": self.read,
            "write": self.write,
            "leader": self.leader,
        }.get(str(command.get("do")))
        if handler is None:
            self.note(f"unknown command {command.get('do')!r}")
        else:
            handler(command)

    def acquire(self, command: Command) -> None:
        if self.lock.grant is not None:
            return self.note(f"{self.name} already holds the lock")
        timeout_ms = command.get("timeout_ms")
        if not isinstance(timeout_ms, int):
            timeout_ms = DEFAULT_ACQUIRE_TIMEOUT_MS
        with self._mutex:
            grant = self.lock.acquire(timeout_ms=timeout_ms)
        if grant is not None and grant.token is not None:
            self.last_token = grant.token
        if grant is not None:
            self.last_sequencer = self.lock.sequencer()
        if grant is not None and self.renewer is not None:
            self.renewer.start()
        return None

    def release(self, command: Command) -> None:
        if self.lock.grant is None:
            return self.note(f"{self.name} holds no lock to release")
        if self.renewer is not None:
            self.renewer.stop()
        self.emit("releasing", {})  # the critical section is over, whatever the reply says
        with self._mutex:
            self.lock.release()
        return None

    def extend(self, command: Command) -> None:
        if self.lock.grant is None:
            return self.note(f"{self.name} holds no lock to extend")
        ttl_ms = command.get("ttl_ms")
        with self._mutex:
            self.lock.extend(ttl_ms if isinstance(ttl_ms, int) else None)
        return None

    def write(self, command: Command) -> None:
        grant = self.lock.grant
        if command.get("check_lease") and grant is not None:
            left = self.lease_left_ms(grant)
            self.note(f"{self.name} checks its lease by its own clock: {left:.0f} ms left")
            if left <= 0:
                self.emit("lost", {"reason": "my lease has run out (by my clock): not writing"})
                self.lock.grant = None
                return
        # Code that took its token (and its sequencer) when it was granted keeps using it, even
        # after the lock is gone: that stale token is exactly what a fencing storage refuses.
        token = grant.token if grant is not None and grant.token is not None else self.last_token
        value, key = str(command["value"]), command.get("key")
        key = key if isinstance(key, str) else None
        if isinstance(self.storage, ReplicatedStorage):  # no lock, no token: a stamp
            self.storage.write(value)
            return
        if isinstance(self.storage, ServiceStorage):
            result = self.storage.write(
                value, token, read=self.last_read, key=key, sequencer=self.last_sequencer
            )
        else:
            result = self.storage.write(value, token, read=self.last_read, key=key)
        if result.accepted and result.version is not None:
            self.last_read = result.version  # its own write: the latest version it knows

    def read(self, command: Command) -> None:
        if isinstance(self.storage, ReplicatedStorage):
            self.storage.read()  # and repairs the replicas that lack the merge
            return
        if isinstance(self.storage, ServiceStorage):
            self.last_read = self.storage.read_versioned().version
            return
        grant = self.lock.grant  # a fenced read carries the token the client's code holds
        token = grant.token if grant is not None and grant.token is not None else self.last_token
        result = self.storage.read_versioned(token)
        if result.accepted:
            self.last_read = result.version

    def leader(self, command: Command) -> None:
        if not isinstance(self.lock, Election):
            self.note(f"{self.name}'s lock is no election: nobody leads it")
            return
        with self._mutex:  # one call at a time on the lock's connection (the watchdog's too)
            self.lock.leader()

    def lease_left_ms(self, grant: Grant) -> float:
        """What this client believes is left of its lease, measured by its own clock."""
        lease = self.lock.valid_ms(grant)
        return lease - (self.clock.monotonic_ns() - grant.granted_ns) / 1e6

    def serve(self) -> None:
        for part in (self.lock, self.storage):  # connect before the run starts, not during it
            try:
                part.prepare()
            except LockError as exc:
                self.note(f"could not prepare: {exc}")
        self.emit("_ready", {})
        for line in sys.stdin:
            self.emit("_took", {})  # when it began: the engine tells a busy machine by it
            command = json.loads(line)
            try:
                self.handle(command)
            except LockError as exc:  # already reported as a failed reply; the client goes on
                self.note(str(exc))
            self.emit("_done", {})
        self.lock.close()


def make_storage(
    config: ClientConfig, clock: Clock, emit: EventSink
) -> FencedStorage | ServiceStorage | ReplicatedStorage:
    """The client's side of the storage: the node's script, the storage service in front of it
    when the storage checks sequencers, or every replica of a replicated one (always on the
    client's own links)."""
    replicas = STORAGE_KINDS[config.storage].replicas
    if len(replicas) > 1:
        mine = (
            config.clients.index(config.name) % len(replicas)
            if config.name in config.clients
            else 0
        )
        order = [*replicas[mine:], *replicas[:mine]]  # its own replica first
        clients = []
        for node in order:
            host, port = config.address(node)
            password = config.password(node)
            clients.append(
                (node, connect(host, port, timeout_ms=config.call_timeout_ms, password=password))
            )
        return ReplicatedStorage(
            clients, STORAGE_KEY, kind=config.storage, writer=config.name, clock=clock,
            on_event=emit,
        )  # fmt: skip
    host, port = config.address(STORAGE)
    if config.storage == "sequencer":
        return ServiceStorage(
            host, port, writer=config.name, timeout_ms=config.call_timeout_ms,
            password=config.password(STORAGE), on_event=emit,
        )  # fmt: skip
    client = connect(
        host, port, timeout_ms=config.call_timeout_ms, password=config.password(STORAGE)
    )
    return FencedStorage(
        client, STORAGE_KEY, kind=config.storage, writer=config.name, on_event=emit
    )


def main() -> None:
    die_with_parent()
    line = sys.stdin.readline()
    if line:  # EOF: the app is stopping before it used it
        Worker(ClientConfig.from_json(line)).serve()


if __name__ == "__main__":
    main()
