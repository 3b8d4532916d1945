"""Which late replies say the machine fell behind (lockviz/lab/roundtrips.py): only calls that
no fault touched and that do not wait by design. The live test is in test_lateness.py."""

from __future__ import annotations

from typing import Any

from lockviz.lab import events
from lockviz.lab.roundtrips import RoundTrips, Slow


def trips(*evs: dict[str, Any], ensemble: bool = False) -> list[Slow]:
    seen = RoundTrips(["alice", "bob"], 50.0, ensemble)
    found = [seen.see(events.parse({"seq": n + 1, **e})) for n, e in enumerate(evs)]
    return [slow for slow in found if slow is not None]


def call(
    who: str, op: str, to: str, sent: float, replied: float, n: int = 1, **reply: Any
) -> list[dict[str, Any]]:
    request = {"t_ms": sent, "actor": who, "kind": "request", "to": to, "call": n, "op": op}
    answer = {"t_ms": replied, "actor": who, "kind": "reply", "from": to, "call": n, "op": op}
    return [request, {**answer, "ok": "error" not in reply, **reply}]


def test_a_reply_within_the_tolerance_is_not_judged_and_a_later_one_is() -> None:
    assert trips(*call("alice", "acquire", "redis-1", 100, 140)) == []
    (slow,) = trips(*call("alice", "acquire", "redis-1", 100, 499))
    assert (slow.client, slow.server, slow.took_ms, slow.gave_up) == (
        "alice",
        "redis-1",
        399,
        False,
    )
    assert slow.what == "alice's acquire on redis-1 (was answered after 399 ms)"


def test_a_reply_a_client_gave_up_on_is_judged_however_soon() -> None:
    (slow,) = trips(*call("bob", "acquire", "redis-3", 10, 110, error="no reply within 100 ms"))
    assert slow.gave_up and slow.what == "bob's acquire on redis-3 (went unanswered for 100 ms)"


def test_calls_that_wait_by_design_are_not_judged() -> None:
    etcd = call("alice", "lock", "etcd-1", 0, 900)
    pg = call("bob", "acquire", "pg-1", 0, 900)
    pg[0]["wait_ms"] = 2000
    assert trips(*etcd, *pg) == []


def test_a_fault_on_the_client_or_its_server_exempts_their_calls_for_the_rest_of_the_run() -> None:
    paused = {"t_ms": 5, "actor": "alice", "kind": "paused", "ms": 300}
    stopped = {"t_ms": 5, "actor": "redis-2", "kind": "paused", "ms": 300}
    assert trips(paused, *call("alice", "write", "storage", 600, 900)) == []
    assert trips(stopped, *call("bob", "acquire", "redis-2", 600, 900)) == []
    # Another client, another Redlock node: still judged.
    assert len(trips(stopped, *call("bob", "acquire", "redis-1", 600, 900))) == 1
    assert len(trips(paused, *call("bob", "write", "storage", 600, 900))) == 1


def test_in_an_ensemble_a_fault_on_one_node_exempts_them_all_and_a_cut_link_its_ends() -> None:
    crashed = {"t_ms": 5, "actor": "zk-3", "kind": "crashed"}
    assert trips(crashed, *call("bob", "create", "zk-1", 600, 900), ensemble=True) == []
    cut = {"t_ms": 5, "actor": "alice", "kind": "link", "node": "redis-1", "mode": "blackhole"}
    assert trips(cut, *call("bob", "acquire", "redis-1", 600, 900)) == []
    assert len(trips(cut, *call("bob", "write", "storage", 600, 900))) == 1


def test_a_pause_that_lands_on_a_call_the_machine_held_up_is_judged_whatever_came_first() -> None:
    """As seen in a full test run: alice's acquire went out at 330 ms, her pause landed at
    514 ms with it unanswered, and she read her grant after the thaw, after bob had had the
    lock. Her request was heard after the pause: the order of arrival does not matter."""
    paused = {"t_ms": 514, "actor": "alice", "kind": "paused", "ms": 3500}
    (slow,) = trips(paused, *call("alice", "acquire", "redis-1", 330, 4163))
    assert (slow.landed, slow.replied_ms) == ("pause", 514)
    assert slow.what == "alice's acquire on redis-1 (unanswered for 184 ms when the pause landed)"
    # A call in flight for a moment only when the pause came: the pause explains its delay.
    assert trips(paused, *call("alice", "acquire", "redis-1", 490, 4163)) == []


def test_a_crash_that_lands_on_a_call_the_machine_held_up_is_judged() -> None:
    request, _ = call("alice", "acquire", "redis-1", 100, 0)
    crashed = {"t_ms": 400, "actor": "alice", "kind": "crashed"}
    (slow,) = trips(request, crashed)
    assert (slow.landed, slow.took_ms) == ("crash", 300)
