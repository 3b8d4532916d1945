"""What the checker concludes about a run: frozen values (:func:`algorithms.checker.check`
makes them, :mod:`algorithms.summary` puts them into words, ``as_dict`` gives their JSON)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from algorithms.lost_updates import LostUpdate
from algorithms.writes import Write


@dataclass(frozen=True)
class Interval:
    client: str
    start_ms: float
    end_ms: float
    token: int | None


@dataclass(frozen=True)
class Overlap:
    clients: tuple[str, str]
    start_ms: float
    end_ms: float


@dataclass(frozen=True)
class Verdict:
    mutual_exclusion: str  # "held" | "violated" | "none" (no lock in play)
    overlaps: tuple[Overlap, ...]
    stale_writes_accepted: int
    stale_writes_rejected: int
    data_corrupted: bool
    writes: tuple[Write, ...]
    holders: tuple[Interval, ...]
    acquire_failures: int = 0
    liveness: str = "ok"  # "ok" | "stuck"
    stuck_clients: tuple[str, ...] = ()
    wakeups: int = 0
    inconclusive: str = ""  # why the run could not keep its story ("" when it did)
    lost_updates: int = 0
    lost: tuple[LostUpdate, ...] = ()
    summary: str = field(default="")

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for overlap in data["overlaps"]:
            overlap["clients"] = list(overlap["clients"])
        for key in ("overlaps", "writes", "holders", "stuck_clients", "lost"):
            data[key] = list(data[key])
        return data
