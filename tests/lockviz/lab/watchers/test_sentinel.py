"""Who a Sentinel watcher says promoted a replica, from the messages Sentinels publish (in
their own form, crafted here in the order a loaded machine read them; the live failovers are
tests/lockviz/lab/test_failover.py)."""

from __future__ import annotations

import threading
from typing import Any

from lockviz.lab.watchers import sentinel
from lockviz.lab.watchers.sentinel import Roles, SentinelWatcher

ADDRESSES = {"127.0.0.1:7001": "redis-1", "127.0.0.1:7002": "redis-2"}
SWITCH = ["lockviz", "127.0.0.1", "7001", "127.0.0.1", "7002"]
PROMOTED = ["slave", "127.0.0.1:7002", "127.0.0.1", "7002", "@", "lockviz", "127.0.0.1", "7001"]


def three(roles: Roles) -> tuple[list[dict[str, Any]], list[SentinelWatcher]]:
    told: list[dict[str, Any]] = []

    def record(actor: str, kind: str, details: Any, t_ns: int | None = None) -> None:
        told.append({"actor": actor, "kind": kind, **details})

    found = []
    for n in (1, 2, 3):
        watcher = SentinelWatcher("127.0.0.1", 0, f"sentinel-{n}", record)
        watcher.roles = roles
        roles.by_id[f"id{n}"] = watcher.name
        found.append(watcher)
    return told, found


def elect(watchers: list[SentinelWatcher], leader: int) -> None:
    for watcher in watchers:  # each votes for the leader in epoch 7
        watcher.seen("+vote-for-leader", [f"id{leader}", "7"], 0)


def test_a_follower_that_tells_of_the_promotion_first_names_the_leader_not_itself() -> None:
    roles = Roles(ADDRESSES, "redis-1")
    told, (s1, s2, s3) = three(roles)
    elect([s1, s2, s3], 2)
    s2.seen("+elected-leader", ["master", "lockviz", "127.0.0.1", "7001"], 0)
    s3.seen("+switch-master", SWITCH, 0)  # read before the leader's own +promoted-slave
    s2.seen("+promoted-slave", PROMOTED, 0)
    s2.seen("+switch-master", SWITCH, 0)
    (role,) = [e for e in told if e["kind"] == "role"]
    assert (role["actor"], role["by"], role["term"]) == ("redis-2", "sentinel-2", 7)


def test_a_follower_read_before_the_leader_s_election_waits_for_it() -> None:
    roles = Roles(ADDRESSES, "redis-1")
    told, (s1, s2, s3) = three(roles)
    elect([s1, s2, s3], 1)
    follower = threading.Thread(target=s3.seen, args=("+switch-master", SWITCH, 0))
    follower.start()  # its thread waits for the leader's watcher, a beat behind on the machine
    s1.seen("+elected-leader", ["master", "lockviz", "127.0.0.1", "7001"], 0)
    follower.join(5)
    (role,) = [e for e in told if e["kind"] == "role"]
    assert role["by"] == "sentinel-1"


def test_a_promotion_whose_leader_is_never_heard_names_nobody(monkeypatch: Any) -> None:
    monkeypatch.setattr(sentinel, "LEADER_WAIT_S", 0.05)
    roles = Roles(ADDRESSES, "redis-1")
    told, (s1, s2, s3) = three(roles)
    elect([s1, s2, s3], 1)
    s3.seen("+switch-master", SWITCH, 0)
    (role,) = [e for e in told if e["kind"] == "role"]
    assert "by" not in role and role["previous"] == "redis-1"
