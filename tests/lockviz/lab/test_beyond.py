"""Beyond one lock, on the live lab (issue 36): leader elections with epochs on etcd and
ZooKeeper, fenced reads, last-write-wins against a CRDT on the same schedule, the transaction
lock through PgBouncer, and the pitfalls, each judged by the checker. Every run is a built-in
played on real servers; each test asserts the order and cause the story depends on."""

from __future__ import annotations

from typing import Any

import pytest

from lockviz import narrator
from lockviz.lab.recording import RunResult
from lockviz.lab.story import HEARTBEATS
from lockviz.scenarios.library import builtin
from tests.lockviz.lab.recorded import told_once

pytestmark = pytest.mark.live

Event = dict[str, Any]


def played(slug: str) -> RunResult:
    result = told_once(slug)  # played once, shared with test_builtins
    assert result.error is None and result.expect_met is True, (result.inconclusive, result.verdict)
    return result


def of(events: list[Event], actor: str, kind: str, **match: Any) -> list[Event]:
    return [
        e
        for e in events
        if e["actor"] == actor and e["kind"] == kind and match.items() <= e.items()
    ]


def verdict(events: list[Event]) -> dict[str, Any]:
    """The verdict the run's last event carries."""
    found: dict[str, Any] = of(events, "lab", "run_finished")[0]["verdict"]
    return found


RENEWALS = ("lease_grant", "keepalive")  # an etcd lease's grant, then each keepalive


def test_a_deposed_etcd_leader_is_refused_by_the_epoch_check_and_taken_by_plain_storage() -> None:
    for slug, accepted in (("leader-etcd-pause-fenced", False), ("leader-etcd-pause-plain", True)):
        events = played(slug).events
        alice, bob = of(events, "alice", "granted")[0], of(events, "bob", "granted")[0]
        assert bob["token"] > alice["token"]  # a new leader, a higher epoch
        asked = of(events, "bob", "reply", op="leader")[0]
        assert (asked["value"], asked["token"]) == ("alice", alice["token"])
        expired = of(events, "etcd-1", "expired", holder="alice")[0]
        paused = of(events, "alice", "paused")[0]
        write = of(events, "alice", "reply", op="write")[0]
        # her lease ended while she was frozen, its TTL after the last keepalive etcd answered;
        # only then was bob elected; she wrote after both. The lab's watcher hears of the
        # expiry on a watch of its own, in a busier process: its moment is ordered against
        # what caused it, not against bob's grant (3151.0 after 3115.4 under load).
        renewed = [e for e in of(events, "alice", "reply") if e.get("op") in RENEWALS
                   and e["seq"] < paused["seq"]]  # fmt: skip
        last = next(e for e in of(events, "alice", "request") if e["call"] == renewed[-1]["call"])
        ends = last["t_ms"] + alice["ttl_ms"]  # her lease's earliest end on etcd
        assert paused["t_ms"] < expired["t_ms"] < write["t_ms"] and ends <= expired["t_ms"]
        assert paused["t_ms"] < bob["t_ms"] < write["t_ms"] and ends <= bob["t_ms"]
        assert write["accepted"] is accepted
        if not accepted:
            assert write["reason"] == f"{alice['token']} < {bob['token']}"
        told_later = of(events, "alice", "reply", op="leader")[0]
        assert (told_later["value"], told_later["token"]) == ("bob", bob["token"])
        [overlap] = verdict(events)["overlaps"]
        assert overlap["clients"] == ["alice", "bob"]
        # both believed they led: the headline says so in an election's words
        scenario = builtin()[slug]
        said, _ = narrator.headline(
            verdict(events),
            storage=scenario.storage_kind,
            election=narrator.electing(scenario.to_json()),
        )
        assert said.startswith("✖ Two leaders at once" if accepted else "⚠ Two leaders at once")


def test_a_zookeeper_leader_cut_off_is_replaced_and_its_old_epoch_refused() -> None:
    events = played("leader-zk-partition-fenced").events
    alice, bob = of(events, "alice", "granted")[0], of(events, "bob", "granted")[0]
    assert "__lock__" in alice["value"] and bob["token"] > alice["token"]  # kazoo's node names
    cut, healed = of(events, "alice", "link", mode="blackhole")[0], of(events, "alice", "link")[1]
    warned, woken = of(events, "alice", "lost")[0], of(events, "bob", "woken")[0]
    expired = of(events, "zk-1", "expired", holder="alice")[0]
    # Cut off, her client warned her first; the server, which last heard from her at most a
    # third of her session before the cut (kazoo's pings), expired her session once it had
    # heard nothing for all of it and deleted her node: that woke bob's watch on it, and he
    # led. The lab's watcher hears of the same deletion on a watch of its own, delivered after
    # bob's (ZooKeeper fires the node's watch first) and read by a busier process: it is not
    # ordered against bob's grant, only against what caused it.
    silent_ms = alice["ttl_ms"] * (1 - 1 / HEARTBEATS)
    assert cut["t_ms"] < warned["t_ms"] < woken["t_ms"] <= bob["t_ms"] < healed["t_ms"]
    assert woken["by"] == "predecessor deleted" and expired["key"] == alice["value"]
    assert cut["t_ms"] + silent_ms <= woken["t_ms"] and cut["t_ms"] + silent_ms <= expired["t_ms"]
    assert expired["t_ms"] < healed["t_ms"]  # the server expired it, not her client on healing
    write = of(events, "alice", "reply", op="write")[0]
    assert write["accepted"] is False and write["highest"] == bob["token"]
    assert of(events, "alice", "reply", op="leader")[0]["value"] == "bob"


def test_a_read_that_carries_the_token_refuses_the_stale_writer() -> None:
    events = played("storage-hole-fenced-reads").events
    alice, bob = of(events, "alice", "granted")[0], of(events, "bob", "granted")[0]
    read = of(events, "bob", "request", op="read")[0]
    assert read["token"] == bob["token"] > alice["token"]
    write = of(events, "alice", "reply", op="write")[0]
    assert write["accepted"] is False and write["highest"] == bob["token"]
    # nothing bob wrote told the storage: his first write came after alice's was refused
    assert of(events, "bob", "request", op="write")[0]["t_ms"] > write["t_ms"] > read["t_ms"]
    assert verdict(events)["stale_writes_accepted"] == 0


def test_last_write_wins_loses_the_newer_write_of_a_clock_behind_and_the_crdt_keeps_both() -> None:
    lww = played("lww-clock-behind").events
    a = of(lww, "alice", "request", op="write")[0]
    b = of(lww, "bob", "request", op="write")[0]
    assert a["t_ms"] < b["t_ms"] and b["stamp"] < a["stamp"]  # written later, stamped earlier
    [lost] = verdict(lww)["lost"]
    assert (lost["client"], lost["value"], lost["by"], lost["why"]) == (
        "bob",
        "B",
        "alice",
        "stamp",
    )
    assert (lost["stamp"], lost["by_stamp"]) == (b["stamp"], a["stamp"])
    acked = [r for r in of(lww, "bob", "reply", op="write") if r["ok"]]
    assert acked and all(r["accepted"] for r in acked)  # bob was told OK
    assert of(lww, "bob", "reply", op="read")[-1]["value"] == "A"
    crdt = played("crdt-clock-behind").events
    assert [e["do"] for e in of(crdt, "lab", "step")] == [e["do"] for e in of(lww, "lab", "step")]
    final = [r for r in of(crdt, "bob", "reply", op="read") if r["ok"]][-1]
    assert final["values"] == ["A", "B"]
    assert verdict(crdt)["lost_updates"] == 0


def test_the_transaction_lock_does_not_leak_through_pgbouncer() -> None:
    events = played("pg-pooled-xact").events
    alice, bob = of(events, "alice", "granted")[0], of(events, "bob", "granted")[0]
    committed = of(events, "alice", "reply", op="release")[0]
    assert committed["ok"] and bob["t_ms"] >= committed["t_ms"] - 5  # granted once she committed
    # through the pool's one server session, both: the same backend pid
    assert alice["value"].split(":")[1] == bob["value"].split(":")[1]
    assert verdict(events)["overlaps"] == []
    leak = played("pg-pooled-leak").events  # the session lock, same clients, same pooler
    leaked = of(leak, "bob", "granted")[0]
    assert leaked["t_ms"] < of(leak, "alice", "releasing")[0]["t_ms"]


def test_writing_after_a_failed_acquire_is_a_stale_write() -> None:
    events = played("pitfall-write-after-failed-acquire").events
    failed = of(events, "bob", "acquire_failed")[0]
    write = of(events, "bob", "request", op="write")[0]
    assert failed["t_ms"] < write["t_ms"] and not of(events, "bob", "granted")
    judged = verdict(events)
    bobs = [w for w in judged["writes"] if w["client"] == "bob"]
    assert judged["mutual_exclusion"] == "held" and bobs[0]["stale"] and bobs[0]["accepted"]


def test_a_critical_section_that_outlives_its_lease_is_judged_by_both_findings() -> None:
    events = played("pitfall-slow-write").events
    bob = of(events, "bob", "granted")[0]
    asked = of(events, "alice", "request", op="acquire")[0]
    expired = of(events, "redis-1", "expired", holder="alice")[0]
    late = of(events, "alice", "request", op="write")[-1]
    # Redis starts her lease when it sets her key, after her request left: bob's SET NX could
    # succeed only once it had run out. The lab's watcher hears of the expiry on its own, from a
    # busier process: that moment is not ordered against bob's grant (1585.7 after 1441.4 under
    # load), only against its cause.
    assert asked["t_ms"] + asked["ttl_ms"] <= bob["t_ms"] < late["t_ms"]  # her second write
    assert asked["t_ms"] + asked["ttl_ms"] <= expired["t_ms"]  # went after his grant
    assert not of(events, "alice", "paused")  # nothing froze: she was only slow
    judged = verdict(events)
    assert judged["mutual_exclusion"] == "violated"
    [stale] = [w for w in judged["writes"] if w["stale"]]
    assert (stale["client"], stale["value"], stale["accepted"]) == ("alice", "A2", True)
    [lost] = judged["lost"]
    assert (lost["client"], lost["by"], lost["why"]) == ("bob", "alice", "read")


def test_a_read_outside_the_lock_loses_an_update_though_the_lock_held() -> None:
    events = played("pitfall-read-outside-lock").events
    read = of(events, "bob", "request", op="read")[0]
    assert read["t_ms"] < of(events, "alice", "granted")[0]["t_ms"]
    judged = verdict(events)
    assert judged["mutual_exclusion"] == "held" and judged["stale_writes_accepted"] == 1
    [lost] = judged["lost"]
    assert (lost["client"], lost["value"], lost["by"], lost["why"]) == ("alice", "A", "bob", "read")
