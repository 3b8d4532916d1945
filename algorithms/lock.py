"""What every lock in :mod:`algorithms` offers: the verbs of ``threading.Lock``, plus leases.

Each algorithm module documents its own guarantees, assumptions and failure modes; this module
only fixes the shape that the lab (and any other caller) relies on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from algorithms.clock import Clock, SystemClock
from algorithms.events import EventSink, Reporter
from algorithms.sequencer import Sequencer


@dataclass(frozen=True)
class Grant:
    """What a client holds after a successful acquire.

    ``token`` is the fencing token (``None`` when the algorithm has none to give, as Redlock),
    ``value`` the holder's unique value on the server(s), ``node`` where it was granted.
    """

    token: int | None
    value: str
    ttl_ms: int
    node: str
    granted_ns: int


class Lock(Protocol):
    grant: Grant | None

    def acquire(self, timeout_ms: int = 0) -> Grant | None:
        """Try until granted or ``timeout_ms`` has passed; ``None`` if not granted."""

    def release(self) -> bool:
        """Give the lock up; ``False`` when the server(s) no longer had it for us."""

    def extend(self, ttl_ms: int | None = None) -> bool:
        """Prolong the lease; ``False`` (and a ``lost`` event) when it is already gone."""

    def prepare(self) -> None:
        """Connect (and load what each call needs) now, so every later call is one exchange."""

    def close(self) -> None:
        """Drop the connections; the lock is not used again."""

    def valid_ms(self, grant: Grant) -> float:
        """How long after ``grant.granted_ns`` its holder may act as the holder (by its own
        clock): the lease, Redlock's validity, or infinity for a lock without one."""

    def sequencer(self) -> Sequencer | None:
        """The current grant as a resource can check it with the lock service (Chubby's
        ``GetSequencer``); ``None`` when nothing is held."""


@dataclass(frozen=True)
class Leader:
    """Who leads an election, as the service answers: the leader's name and its epoch (the
    leader key's create revision in etcd, the leader node's czxid in ZooKeeper)."""

    name: str
    epoch: int


@runtime_checkable
class Election(Lock, Protocol):
    """A leader election: a :class:`Lock` whose holder is the leader (``acquire`` campaigns,
    ``release`` resigns, the grant's token is the leader's epoch), and anyone may ask who leads."""

    def leader(self) -> Leader | None:
        """Who leads now; ``None`` when nobody does (or the service did not answer)."""


class LockBase:
    """What every lock keeps (its owner, its clock, its grant, the reporter of its steps) and
    what most do for the optional parts of :class:`Lock`: nothing to prepare or close, and a
    grant valid for its lease."""

    def __init__(self, owner: str, clock: Clock | None, on_event: EventSink) -> None:
        self.owner = owner
        self.clock: Clock = clock or SystemClock()
        self.grant: Grant | None = None
        self._report = Reporter(on_event)

    def prepare(self) -> None:
        return None

    def close(self) -> None:
        return None

    def valid_ms(self, grant: Grant) -> float:
        return float(grant.ttl_ms) if grant.ttl_ms else float("inf")
