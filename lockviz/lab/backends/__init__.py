"""Each backend's lock, as the client process makes it: one module per backend.

A module's ``make_lock(config, clock, emit)`` builds the :class:`algorithms.lock.Lock` that a
client process (:mod:`lockviz.lab.children.worker`) drives: ``config`` is the client's
:class:`~lockviz.lab.config.ClientConfig` (its own proxied links to the servers, the lease, the
variant...), ``clock`` its clock (which the lab may skew: pass it to the lock), ``emit`` where
the lock reports each protocol step. What the servers decide is observed on the engine's side,
by :mod:`lockviz.lab.watchers`.

:func:`backend_module` imports only the chosen backend's module: a client process should not
pay for importing every client library (psycopg alone takes ~0.2 s) to use one of them. Each
module is a :class:`Backend` (mypy checks it where it is imported).

A module whose lock a storage can check (``sequencer`` storage) is :class:`Sequenced`: it also
has ``make_check(config, report)``, the :class:`algorithms.sequencer.Check` the storage service
makes with its :class:`~lockviz.lab.config.StorageServiceConfig`, and ``LOCK``, the lock as its
sequencers name it; :func:`check_factory` finds them. What every backend's lock takes from its
client process is in :mod:`~lockviz.lab.backends.parts` (the modules import it, not this
package, which imports them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from algorithms.clock import Clock
from algorithms.events import EventSink, Reporter
from algorithms.lock import Lock
from algorithms.sequencer import Check
from lockviz.lab.config import ClientConfig, StorageServiceConfig

LockFactory = Callable[[ClientConfig, Clock, EventSink], Lock]
CheckFactory = Callable[[StorageServiceConfig, Reporter], Check]


class Backend(Protocol):
    """A module of this package: how a client process makes its backend's lock."""

    def make_lock(self, config: ClientConfig, clock: Clock, emit: EventSink) -> Lock: ...


@runtime_checkable
class Sequenced(Backend, Protocol):
    """A module whose lock a storage can check (``sequencer`` storage)."""

    LOCK: str  # the lock, as its sequencers name it

    def make_check(self, config: StorageServiceConfig, report: Reporter) -> Check: ...


def backend_module(backend: str) -> Backend:
    """The module of ``backend`` (a name of :data:`lockviz.catalogue.BACKENDS`), imported now:
    it alone, so a client pays for one client library."""
    chosen: Backend
    if backend == "redis":
        from lockviz.lab.backends import redis as chosen
    elif backend == "redlock":
        from lockviz.lab.backends import redlock as chosen
    elif backend == "redis-sentinel":
        from lockviz.lab.backends import redis_sentinel as chosen
    elif backend == "zookeeper":
        from lockviz.lab.backends import zookeeper as chosen
    elif backend == "postgres":
        from lockviz.lab.backends import postgres as chosen
    elif backend == "etcd":
        from lockviz.lab.backends import etcd as chosen
    elif backend == "none":
        from lockviz.lab.backends import none as chosen
    else:
        raise KeyError(f"no backend {backend!r}")
    return chosen


def lock_factory(backend: str) -> LockFactory:
    """How a client process makes ``backend``'s lock (see :data:`lockviz.catalogue.BACKENDS`)."""
    return backend_module(backend).make_lock


def check_factory(backend: str) -> tuple[CheckFactory, str]:
    """How the storage service checks ``backend``'s sequencers, and the lock they must name.

    Only backends whose catalogue entry allows a sequencer have one (the schema refuses the
    others before a run starts)."""
    chosen = backend_module(backend)
    if not isinstance(chosen, Sequenced):
        raise KeyError(f"the backend {backend!r} has no sequencer check")
    return chosen.make_check, chosen.LOCK
