"""Each backend's lock, as the client process makes it: one module per backend.

A module's ``make_lock(config, clock, emit)`` builds the :class:`algorithms.lock.Lock` that a
client process (:mod:`lockviz.lab.worker`) drives: ``config`` is the client's
:class:`~lockviz.lab.config.ClientConfig` (its own proxied links to the servers, the lease, the
variant...), ``clock`` its clock (which the lab may skew: pass it to the lock), ``emit`` where
the lock reports each protocol step. What the servers decide is observed on the engine's side,
by :mod:`lockviz.lab.watchers`.

:func:`lock_factory` imports only the chosen backend's module: a client process should not pay
for importing every client library (psycopg alone takes ~0.2 s) to use one of them.
"""

from __future__ import annotations

from collections.abc import Callable

from algorithms.clock import Clock
from algorithms.events import EventSink
from algorithms.lock import Lock
from lockviz.lab.config import ClientConfig

LockFactory = Callable[[ClientConfig, Clock, EventSink], Lock]


def _redis() -> LockFactory:
    from lockviz.lab.backends.redis import make_lock

    return make_lock


def _redlock() -> LockFactory:
    from lockviz.lab.backends.redlock import make_lock

    return make_lock


def _zookeeper() -> LockFactory:
    from lockviz.lab.backends.zookeeper import make_lock

    return make_lock


def _postgres() -> LockFactory:
    from lockviz.lab.backends.postgres import make_lock

    return make_lock


def _etcd() -> LockFactory:
    from lockviz.lab.backends.etcd import make_lock

    return make_lock


FACTORIES: dict[str, Callable[[], LockFactory]] = {
    "redis": _redis,
    "redlock": _redlock,
    "zookeeper": _zookeeper,
    "postgres": _postgres,
    "etcd": _etcd,
}


def lock_factory(backend: str) -> LockFactory:
    """How a client process makes ``backend``'s lock (see :data:`lockviz.catalogue.BACKENDS`)."""
    return FACTORIES[backend]()
