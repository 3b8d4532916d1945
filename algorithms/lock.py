"""What every lock in :mod:`algorithms` offers: the verbs of ``threading.Lock``, plus leases.

Each algorithm module documents its own guarantees, assumptions and failure modes; this module
only fixes the shape that the lab (and any other caller) relies on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

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

    def sequencer(self) -> Sequencer | None:
        """The current grant as a resource can check it with the lock service (Chubby's
        ``GetSequencer``); ``None`` when nothing is held."""
