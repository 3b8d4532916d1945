"""Each backend's lock, as the client process makes it: one module per backend.

A module's ``make_lock(config, clock, emit)`` builds the :class:`algorithms.lock.Lock` that a
client process (:mod:`lockviz.lab.children.worker`) drives: ``config`` is the client's
:class:`~lockviz.lab.config.ClientConfig` (its own proxied links to the servers, the lease, the
variant...), ``clock`` its clock (which the lab may skew: pass it to the lock), ``emit`` where
the lock reports each protocol step. What the servers decide is observed on the engine's side,
by :mod:`lockviz.lab.watchers`.

:func:`lock_factory` imports only the chosen backend's module: a client process should not pay
for importing every client library (psycopg alone takes ~0.2 s) to use one of them.

A module whose lock a storage can check (``sequencer`` storage) also has ``make_check(config,
report)``, the :class:`algorithms.sequencer.Check` the storage service makes with its
:class:`~lockviz.lab.config.StorageServiceConfig`, and ``LOCK``, the lock as its sequencers name
it; :func:`check_factory` finds them the same way.
"""

from __future__ import annotations

from collections.abc import Callable

from algorithms.clock import Clock
from algorithms.events import EventSink, Reporter
from algorithms.lock import Lock
from algorithms.sequencer import Check
from lockviz.lab.config import ClientConfig, StorageServiceConfig

LockFactory = Callable[[ClientConfig, Clock, EventSink], Lock]
CheckFactory = Callable[[StorageServiceConfig, Reporter], Check]


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


def _none() -> LockFactory:
    from lockviz.lab.backends.none import make_lock

    return make_lock


FACTORIES: dict[str, Callable[[], LockFactory]] = {
    "redis": _redis,
    "redlock": _redlock,
    "zookeeper": _zookeeper,
    "postgres": _postgres,
    "etcd": _etcd,
    "none": _none,
}


def lock_factory(backend: str) -> LockFactory:
    """How a client process makes ``backend``'s lock (see :data:`lockviz.catalogue.BACKENDS`)."""
    return FACTORIES[backend]()


def _redis_check() -> tuple[CheckFactory, str]:
    from lockviz.lab.backends.redis import LOCK, make_check

    return make_check, LOCK


def _redlock_check() -> tuple[CheckFactory, str]:
    from lockviz.lab.backends.redlock import LOCK, make_check

    return make_check, LOCK


def _zookeeper_check() -> tuple[CheckFactory, str]:
    from lockviz.lab.backends.zookeeper import LOCK, make_check

    return make_check, LOCK


def _postgres_check() -> tuple[CheckFactory, str]:
    from lockviz.lab.backends.postgres import LOCK, make_check

    return make_check, LOCK


def _etcd_check() -> tuple[CheckFactory, str]:
    from lockviz.lab.backends.etcd import LOCK, make_check

    return make_check, LOCK


CHECKS: dict[str, Callable[[], tuple[CheckFactory, str]]] = {
    "redis": _redis_check,
    "redlock": _redlock_check,
    "zookeeper": _zookeeper_check,
    "postgres": _postgres_check,
    "etcd": _etcd_check,
}


def check_factory(backend: str) -> tuple[CheckFactory, str]:
    """How the storage service checks ``backend``'s sequencers, and the lock they must name.

    Only backends whose catalogue entry allows a sequencer have one (the schema refuses the
    others before a run starts)."""
    return CHECKS[backend]()
