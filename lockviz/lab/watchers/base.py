"""Watching the servers decide: when did *the server* end a lease, a session, a lock?

A client only knows when it was granted; the truth about expiry lives on the server. Each
backend has a watcher that observes its lock servers over connections of its own (never
through the clients' network links) and records what they decide, so the diagram can end a
lease bar where the server ended it. They run in the engine's process, one thread each.

:class:`Watcher` is the thread every watcher shares (:class:`ServerWatcher`: one server, over
a connection of its own): ``start`` returns once it watches,
``stop`` ends it, and a server that goes away (a crash is part of the show) is reconnected to
until it is back, but not once the lab has stopped that server for good (``retired``): if a
run's cleanup broke off before stopping its watchers, they must not reconnect to whatever
listens on that port next and record a later run's events.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar, Self

from lockviz.lab.events import Record

if TYPE_CHECKING:
    from lockviz.lab.labs import ServerSet
    from lockviz.lab.servers.base import Server


class Watcher(ABC):
    transient: ClassVar[tuple[type[BaseException], ...]] = (OSError,)  # the server is away
    join_s: ClassVar[float] = 2.0

    def __init__(
        self, name: str, record: Record, *, retired: Callable[[], bool] | None = None
    ) -> None:
        self.name = name
        self.record = record
        self._retired = retired  # true once the server watched is stopped for good
        self.failures = 0  # attempts in a row that could not reach the server
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"watch-{name}", daemon=True)

    def start(self, timeout_s: float = 5.0) -> bool:
        """Start watching; returns once the watch is in place (True) or after ``timeout_s``
        (False; 0: at once, see :meth:`wait_ready`)."""
        self._thread.start()
        return self.wait_ready(timeout_s)

    def wait_ready(self, timeout_s: float) -> bool:
        """Whether the watch is in place, waiting at most ``timeout_s`` for it."""
        return self._ready.wait(timeout_s)

    def stop(self) -> None:
        self._stop.set()
        self.interrupt()
        self._thread.join(timeout=self.join_s)

    @property
    def stopping(self) -> bool:
        """Asked to stop, or the server it watches was stopped for good."""
        return self._stop.is_set() or (self._retired is not None and self._retired())

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def caught_up(self, since_ns: int) -> bool:
        """Whether what the server decided before ``since_ns`` (CLOCK_MONOTONIC) is recorded:
        a run's end waits for it (lockviz.lab.engine), so the story has it before the verdict.
        True by default: a watcher the server tells at once records as it is told."""
        return True

    def ready(self) -> None:
        """Called by :meth:`watch` once it is watching (the server is reachable again)."""
        self.failures = 0
        self._ready.set()

    def pause(self, seconds: float) -> bool:
        """Wait ``seconds`` unless stopped first; True when stopped."""
        return self._stop.wait(seconds)

    def _run(self) -> None:
        while not self.stopping:
            try:
                self.watch()
            except self.transient:
                self.failures += 1
                self.lost(self.failures)
                self.pause(self.backoff_s(self.failures))

    @abstractmethod
    def watch(self) -> None:
        """Connect, call :meth:`ready`, record what the server decides until :attr:`stopping`.

        Returning (or raising one of :attr:`transient`) reconnects.
        """

    def lost(self, failures: int) -> None:
        """The server could not be reached ``failures`` times in a row."""
        return

    def backoff_s(self, failures: int) -> float:
        return 0.05

    def interrupt(self) -> None:
        """Wake a :meth:`watch` blocked in a read (``stop`` calls it)."""
        return


class ServerWatcher(Watcher):
    """A watcher of one server, over connections of its own to its address."""

    def __init__(
        self,
        host: str,
        port: int,
        node: str,
        record: Record,
        *,
        password: str | None = None,
        retired: Callable[[], bool] | None = None,
    ) -> None:
        super().__init__(node, record, retired=retired)
        self.host, self.port = host, port
        self.password = password
        self.init_state()

    def init_state(self) -> None:
        """Set up a subclass's own state, once, at the end of ``__init__`` (so that no
        subclass has to restate the constructor's signature)."""
        return

    @classmethod
    def of(cls, server: Server, record: Record) -> Self:
        """The watcher of ``server``, which ends when the lab stops that server for good."""
        return cls(
            server.host,
            server.port,
            server.name,
            record,
            password=server.password,
            retired=lambda: server.retired,
        )

    @classmethod
    def each(cls, servers: ServerSet, nodes: list[str], record: Record) -> list[Watcher]:
        """One watcher for each of the lock servers ``nodes``."""
        return [cls.of(servers[node], record) for node in nodes]
