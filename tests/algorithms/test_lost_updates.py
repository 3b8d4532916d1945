"""Lost updates judged from a history alone: a last-write-wins drop of the newer write, an
ordinary overwrite (no loss), an update overwritten by a write that never saw it."""

from __future__ import annotations

from typing import Any

from algorithms.checker import check
from algorithms.lost_updates import LostUpdate, lost_updates
from algorithms.summary import clock_time

T0 = 1_700_000_000_000  # a wall-clock stamp, ms


class History:
    def __init__(self, backend: str = "none", storage: str = "lww") -> None:
        self.events: list[dict[str, Any]] = [
            {"seq": 1, "t_ms": 0.0, "actor": "lab", "kind": "run_started", "backend": backend,
             "storage_kind": storage},
        ]  # fmt: skip
        self.call = 0

    def add(self, t: float, actor: str, kind: str, **fields: Any) -> None:
        self.events.append({"seq": len(self.events) + 1, "t_ms": t, "actor": actor, "kind": kind,
                            **fields})  # fmt: skip

    def write(self, t: float, who: str, value: str, stamp: int, *replicas: dict[str, Any]) -> None:
        """``who`` writes to each replica in turn; each dict is one replica's reply fields."""
        for i, reply in enumerate(replicas):
            self.call += 1
            node = reply.pop("from")
            self.add(t + i, who, "request", to=node, call=self.call, op="write", value=value,
                     stamp=stamp)  # fmt: skip
            self.add(t + i + 0.5, who, "reply", **{"from": node}, call=self.call, op="write",
                     ok=True, accepted=True, **reply)  # fmt: skip


def w(writer: str, value: str, stamp: int) -> dict[str, Any]:
    return {"writer": writer, "value": value, "stamp": stamp}


def test_a_newer_write_stamped_by_a_clock_that_runs_behind_is_lost() -> None:
    h = History()
    a, b = w("alice", "A", T0 + 1000), w("bob", "B", T0 - 3000)  # bob's clock: 5 s behind
    h.write(1000, "alice", "A", a["stamp"], {"from": "storage", "kept": True, "holds": a})
    h.write(2000, "bob", "B", b["stamp"],
            {"from": "storage", "kept": False, "holds": a, "dropped": b})  # fmt: skip
    (lost,) = lost_updates(h.events)
    assert lost == LostUpdate(5, "bob", "B", "alice", "A", "stamp", b["stamp"], a["stamp"])
    verdict = check(h.events)
    assert verdict.lost_updates == 1 and verdict.data_corrupted
    assert verdict.mutual_exclusion == "none" and verdict.stale_writes_accepted == 0
    assert f"({clock_time(b['stamp'])} < {clock_time(a['stamp'])}" in verdict.summary
    assert "Update lost: bob's B was acknowledged, then dropped for alice's A" in verdict.summary


def test_a_later_write_with_a_later_stamp_overwrites_and_nothing_is_lost() -> None:
    h = History()
    a, b = w("alice", "A", T0 + 1000), w("bob", "B", T0 + 2000)
    h.write(1000, "alice", "A", a["stamp"], {"from": "storage", "kept": True, "holds": a})
    h.write(2000, "bob", "B", b["stamp"],
            {"from": "storage", "kept": True, "holds": b, "dropped": a})  # fmt: skip
    assert lost_updates(h.events) == []
    assert not check(h.events).data_corrupted


def test_replicas_in_a_partition_lose_the_newer_write_only_when_they_merge() -> None:
    h = History()
    a, b = w("alice", "A", T0 + 1000), w("bob", "B", T0 - 3000)
    h.write(1000, "alice", "A", a["stamp"], {"from": "storage", "kept": True, "holds": a})
    h.write(2000, "bob", "B", b["stamp"], {"from": "storage-2", "kept": True, "holds": b})
    assert lost_updates(h.events) == []  # storage-2 still holds bob's write
    h.add(3000, "carol", "reply", **{"from": "storage-2"}, call=99, op="merge", ok=True,
          kept=True, holds=a, dropped=b)  # fmt: skip
    (lost,) = lost_updates(h.events)
    assert (lost.client, lost.by, lost.why) == ("bob", "alice", "stamp")


def test_an_add_wins_set_loses_nothing() -> None:
    h = History(storage="crdt")
    h.write(1000, "alice", "A", T0, {"from": "storage", "values": ["A"]})
    h.write(2000, "bob", "B", T0 - 3000, {"from": "storage-2", "values": ["B"]})
    verdict = check(h.events)
    assert verdict.lost_updates == 0 and not verdict.data_corrupted
    assert verdict.summary.endswith(
        "No update was lost: the replicas merged every acknowledged write."
    )


def test_a_write_based_on_an_out_of_date_read_loses_the_update_it_never_saw() -> None:
    h = History(storage="plain")
    h.add(100, "alice", "request", to="storage", call=1, op="write", value="A", read=0)
    h.add(110, "alice", "reply", **{"from": "storage"}, call=1, op="write", ok=True,
          accepted=True, found=0, version=1)  # fmt: skip
    h.add(200, "bob", "request", to="storage", call=2, op="write", value="B", read=0)
    h.add(210, "bob", "reply", **{"from": "storage"}, call=2, op="write", ok=True,
          accepted=True, found=1, version=2)  # fmt: skip
    (lost,) = lost_updates(h.events)
    assert lost == LostUpdate(5, "alice", "A", "bob", "B", "read")
    verdict = check(h.events)
    assert verdict.lost_updates == 1 and verdict.stale_writes_accepted == 1
    assert verdict.as_dict()["lost"][0]["why"] == "read"
