"""Lost updates, judged from a run's history alone (a part of :mod:`algorithms.checker`).

An update is *lost* when the storage acknowledged it and then its effect vanished without its
writer, or anyone who had seen it, replacing it. Two ways, both read from the events the storage's
replies carry (docs/events.md):

* **Overwritten unseen.** A write based on an out-of-date read (its request's ``read`` is not the
  version its reply ``found``) that the storage accepted replaced the update that made the
  version found, which its writer never saw: a read-modify-write done outside the lock, or a
  holder whose read came before another's write. (The checker also counts such a write as
  stale.)
* **Dropped by timestamp.** A last-write-wins replica keeps the write with the highest stamp, its
  writer's wall clock. A reply that names what it ``dropped`` and what it ``holds`` drops an
  update; the drop is a loss when the write it kept was acknowledged *before* the dropped one was
  sent (so the dropped write was the newer one: its writer's clock ran behind) and no replica
  holds the dropped write at the end. Writes that overlap in time are not judged: either order
  is a correct one. A write it drops in favour of a later write (its overwrite) is no loss.

An add-wins set (a CRDT) never drops an acknowledged write, so nothing is lost there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from algorithms.events import Event

WriteId = tuple[str, int]  # a stamped write: (writer, stamp)


@dataclass(frozen=True)
class LostUpdate:
    seq: int  # the reply that dropped or overwrote it
    client: str  # whose acknowledged update was lost
    value: str | None
    by: str | None  # whose write the storage kept in its place
    by_value: str | None
    why: str  # "stamp": dropped for an older write stamped later; "read": overwritten unseen
    stamp: int | None = None  # "stamp": the lost write's stamp (ms, by its writer's clock)
    by_stamp: int | None = None  # and the kept one's


def lost_updates(events: Sequence[Event]) -> list[LostUpdate]:
    """Every lost update of a run, in time order."""
    ordered = sorted(events, key=lambda e: (float(e["t_ms"]), int(e.get("seq", 0))))
    return sorted(
        _overwritten(ordered) + _dropped(ordered), key=lambda lost: (lost.seq, lost.client)
    )


def _overwritten(ordered: Sequence[Event]) -> list[LostUpdate]:
    requests = {
        (e["actor"], e["call"]): e
        for e in ordered
        if e["kind"] == "request" and e.get("op") == "write"
    }
    replies = [e for e in ordered if e["kind"] == "reply" and e.get("op") == "write"]
    made: dict[object, tuple[str, object]] = {}  # version -> (writer, value) that made it
    found: list[LostUpdate] = []
    for e in replies:
        if not e.get("accepted") or e.get("duplicate") or "found" not in e:
            continue
        request = requests.get((e["actor"], e["call"]), {})
        read, at = request.get("read"), e.get("found")
        if isinstance(read, int) and isinstance(at, int) and read != at and at in made:
            lost_by, lost_value = made[at]
            found.append(
                LostUpdate(int(e["seq"]), lost_by, _text(lost_value), e["actor"],
                           _text(request.get("value")), "read")
            )  # fmt: skip
        made[e.get("version")] = (e["actor"], request.get("value"))
    return found


def _dropped(ordered: Sequence[Event]) -> list[LostUpdate]:
    sent, acked = _stamped_writes(ordered)
    holds: dict[str, WriteId] = {}  # replica -> the write it holds now
    drops: list[tuple[Event, Mapping[str, Any], Mapping[str, Any]]] = []
    for e in ordered:
        held, dropped = e.get("holds"), e.get("dropped")
        if e["kind"] != "reply" or not isinstance(held, Mapping):
            continue
        holds[str(e.get("from"))] = _ident(held)
        if isinstance(dropped, Mapping):
            drops.append((e, dropped, held))
    left = set(holds.values())
    found: dict[WriteId, LostUpdate] = {}
    for e, dropped, held in drops:
        lost, kept = _ident(dropped), _ident(held)
        if lost in found or lost in left or lost not in acked or kept not in acked:
            continue
        if acked[kept] <= sent.get(lost, float("-inf")):  # the kept write was the older one
            found[lost] = LostUpdate(
                int(e["seq"]), lost[0], _text(dropped.get("value")), kept[0],
                _text(held.get("value")), "stamp", lost[1], kept[1],
            )  # fmt: skip
    return list(found.values())


def _stamped_writes(ordered: Sequence[Event]) -> tuple[dict[WriteId, float], dict[WriteId, float]]:
    """When each stamped write was sent, and when a replica first acknowledged it."""
    sent: dict[WriteId, float] = {}
    acked: dict[WriteId, float] = {}
    requests: dict[tuple[object, object], WriteId] = {}
    for e in ordered:
        if e["kind"] == "request" and e.get("op") == "write" and isinstance(e.get("stamp"), int):
            ident = (str(e["actor"]), int(e["stamp"]))
            sent.setdefault(ident, float(e["t_ms"]))
            requests[(e["actor"], e["call"])] = ident
        elif e["kind"] == "reply" and e.get("op") == "write" and e.get("accepted"):
            found = requests.get((e["actor"], e["call"]))
            if found is not None:
                acked.setdefault(found, float(e["t_ms"]))
    return sent, acked


def _ident(write: Mapping[str, Any]) -> WriteId:
    return str(write.get("writer")), int(write.get("stamp") or 0)


def _text(value: object) -> str | None:
    return None if value is None else str(value)
