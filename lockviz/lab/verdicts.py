"""The checker's verdict as JSON: what ``run_finished`` carries, the store keeps and an import
is checked against (:class:`algorithms.verdict.Verdict`, as :meth:`~algorithms.verdict.Verdict.
as_dict` gives it). Declared once, here; :mod:`lockviz.lab.events` names it as
``run_finished``'s ``verdict``, and the JSON Schema and docs/events.md are generated from it."""

from __future__ import annotations

from lockviz.jsontypes import Number, StrictDict


class OverlapJson(StrictDict):
    clients: list[str]
    start_ms: Number
    end_ms: Number


class WriteJson(StrictDict):
    seq: int
    client: str
    token: int | None
    value: str | None
    accepted: bool
    stale: bool
    superseded_by: str | None


class HolderJson(StrictDict):
    client: str
    start_ms: Number
    end_ms: Number
    token: int | None


class LostJson(StrictDict):
    """A lost update (:class:`algorithms.lost_updates.LostUpdate`)."""

    seq: int
    client: str
    value: str | None
    by: str | None
    by_value: str | None
    why: str
    stamp: int | None
    by_stamp: int | None


class _Judged(StrictDict):
    """What every verdict has."""

    mutual_exclusion: str
    overlaps: list[OverlapJson]
    stale_writes_accepted: int
    stale_writes_rejected: int
    data_corrupted: bool
    writes: list[WriteJson]
    holders: list[HolderJson]


class VerdictJson(_Judged, total=False):
    """The checker's verdict (:class:`algorithms.verdict.Verdict`) as ``run_finished`` has it;
    runs recorded before a field was added lack it."""

    acquire_failures: int
    liveness: str
    stuck_clients: list[str]
    wakeups: int
    inconclusive: str
    lost_updates: int
    lost: list[LostJson]
    summary: str
