"""Replicas and failover on the live lab: each built-in's story, in order and by its cause.

A Redis primary killed before its replica had the key (two holders, one token), WAIT 1 (the
lock kept; and lost when Sentinel promotes another replica), a split primary (two grant;
min-replicas-to-write stops the old one later), a ZooKeeper session that survives its server,
a ZooKeeper leader's crash, an etcd cluster's leader killed (the lease kept, the revision still
fencing). Each run is told once (played again only if the machine fell behind: test_engine.told);
the assertions are on order and cause, never on milliseconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from lockviz.lab.recording import RunResult
from lockviz.narrator import narrate
from lockviz.scenarios.schema import parse
from tests.lockviz.lab.recorded import told_once
from tests.lockviz.lab.test_engine import told

pytestmark = pytest.mark.live

Event = Mapping[str, Any]


def story(slug: str) -> list[Event]:
    result: RunResult = told_once(slug)  # played once, shared with test_builtins
    assert result.error is None
    assert result.expect_met is True, (result.mismatches, result.inconclusive)
    return result.events


def find(events: list[Event], kind: str, actor: str | None = None, **fields: object) -> list[Event]:
    return [
        e
        for e in events
        if e["kind"] == kind
        and (actor is None or e["actor"] == actor)
        and all(e.get(k) == v for k, v in fields.items())
    ]


def first(events: list[Event], kind: str, actor: str | None = None, **fields: object) -> Event:
    found = find(events, kind, actor, **fields)
    assert found, f"no {kind} of {actor or 'anyone'} with {fields}"
    return found[0]


def failover(events: list[Event]) -> tuple[Event, Event]:
    """The kill of redis-1, and redis-2's promotion after it, voted for by the Sentinels."""
    killed = first(events, "crashed", "redis-1")
    promoted = first(events, "role", "redis-2", role="primary")
    assert killed["seq"] < promoted["seq"] and promoted["previous"] == "redis-1"
    votes = [e for e in find(events, "voted") if killed["seq"] < e["seq"] < promoted["seq"]]
    assert len({v["actor"] for v in votes}) >= 2  # a majority of the three voted...
    assert {v["leader"] for v in votes if v["term"] == promoted["term"]} == {promoted["by"]}
    downs = find(events, "suspected", node="redis-1", objective=True)
    assert downs and killed["seq"] < downs[0]["seq"] < promoted["seq"]  # ...after ODOWN
    return killed, promoted


def test_a_failover_hands_the_lock_out_twice_with_the_same_token() -> None:
    events = story("redis-failover")
    roles = events[0]["roles"]
    assert {n: roles[n] for n in ("redis-1", "redis-2", "redis-3")} == {
        "redis-1": "primary", "redis-2": "replica", "redis-3": "replica"
    }  # fmt: skip
    assert roles["sentinel-1"] == "sentinel"
    alice = first(events, "granted", "alice")
    assert alice["node"] == "redis-1"
    killed, promoted = failover(events)
    # Nothing reached a replica: the replication links were cut before Alice's grant.
    assert not [e for e in find(events, "replicated") if e["seq"] < killed["seq"]]
    bob = first(events, "granted", "bob")
    assert bob["node"] == "redis-2" and promoted["seq"] < bob["seq"]
    assert bob["token"] == alice["token"]  # the counter went back with the primary
    stale = first(events, "reply", "alice", op="write")
    assert (
        stale["accepted"] is True
        and stale["seq"] > first(events, "reply", "bob", op="write")["seq"]
    )
    assert not find(events, "released", "alice", ok=True)  # her key was never on redis-2


def test_wait_1_keeps_the_lock_when_the_replica_that_acknowledged_is_promoted() -> None:
    events = story("redis-failover-wait")
    waited = first(events, "reply", "alice", op="wait")
    assert waited["ok"] is True and waited["acked"] == 1
    copy = first(events, "replicated", "redis-2", holder="alice")
    killed, _ = failover(events)
    assert copy["seq"] < killed["seq"]
    # redis-3's link to redis-1 was cut: no copy of hers before the kill (once redis-2 is
    # promoted, redis-3 replicates from it and may copy her key then: seen under load)
    third = find(events, "replicated", "redis-3", holder="alice")
    assert not [e for e in third if e["seq"] < killed["seq"]], third
    refused = find(events, "reply", "bob", op="acquire", ok=False)
    assert refused and all(e["from"] == "redis-2" for e in refused)  # Alice's key is there
    released = first(events, "released", "alice")
    bob = first(events, "granted", "bob")
    assert released["ok"] is True and released["seq"] < bob["seq"]
    assert bob["token"] > first(events, "granted", "alice")["token"]  # the counter came over


def test_wait_1_still_loses_the_lock_when_sentinel_promotes_another_replica() -> None:
    events = story("redis-failover-wait-loses")
    assert first(events, "reply", "alice", op="wait")["acked"] == 1
    killed, _ = failover(events)
    copies = [e for e in find(events, "replicated", holder="alice") if e["seq"] < killed["seq"]]
    assert {e["actor"] for e in copies} == {"redis-3"}  # acknowledged by redis-3 only...
    bob = first(events, "granted", "bob")  # ...and redis-2 promoted
    assert bob["node"] == "redis-2" and bob["token"] == first(events, "granted", "alice")["token"]


def test_a_split_primary_grants_twice_until_min_replicas_stops_it() -> None:
    events = story("redis-split-primary")
    cut = first(events, "link", "redis-1", mode="blackhole")
    alice = next(e for e in find(events, "granted", "alice") if e["seq"] > cut["seq"])
    assert alice["node"] == "redis-1"  # the old primary granted after the cut
    promoted = first(events, "role", "redis-2", role="primary")
    bob = first(events, "granted", "bob")
    assert alice["seq"] < promoted["seq"] < bob["seq"] and bob["node"] == "redis-2"
    assert bob["token"] == alice["token"]
    refused = first(events, "reply", "alice", op="extend")
    assert refused["ok"] is False and refused["reason"].startswith("NOREPLICAS")
    assert bob["seq"] < refused["seq"] < first(events, "lost", "alice")["seq"]


def test_a_zookeeper_session_survives_the_death_of_its_server() -> None:
    events = story("zk-session-survives")
    # the premise: each session opened on its home (listed first, never shuffled), and said so
    assert events[0]["homes"] == {"alice": "zk-1", "bob": "zk-2"}
    assert first(events, "request", "alice")["to"] == "zk-1"
    assert first(events, "request", "bob")["to"] == "zk-2"
    killed = first(events, "crashed", "zk-1")
    suspended = first(events, "session", "alice", state="SUSPENDED")
    back = first(events, "session", "alice", state="RECONNECTED")
    assert suspended["keeps"] is True and suspended["seq"] < back["seq"]
    assert back["server"] in ("zk-2", "zk-3")
    assert not find(events, "session", "alice", state="LOST")
    assert not find(events, "lost", "alice") and not find(events, "expired")
    # Her release may start while she is still SUSPENDED on a loaded machine (seen in CI): kazoo
    # holds the delete until she is back, so it is served through the server she reconnected to.
    releasing = first(events, "releasing", "alice")
    deleted = first(events, "reply", "alice", op="delete")
    bob = first(events, "granted", "bob")
    assert killed["seq"] < back["seq"] < deleted["seq"] and deleted["ok"] is True
    assert killed["seq"] < releasing["seq"] < bob["seq"] and back["seq"] < bob["seq"]
    assert first(events, "released", "alice")["ok"] is True  # its reply may come after bob's


def test_a_zookeeper_leader_crash_suspends_every_client_and_the_recipe_gives_the_lock_up() -> None:
    events = story("zk-leader-crash")
    assert events[0]["roles"]["zk-3"] == "leader"
    killed = first(events, "crashed", "zk-3")
    # The kill (its step, and the moment it began: "crashed" is stamped then but recorded once
    # the kill has returned, and a client may report its dropped connection in between: seen
    # under load, SUSPENDED at seq 16, crashed at 18), then each client's loss, then its return.
    kill = first(events, "step", "lab", do="crash", node="zk-3")
    for client in ("alice", "bob"):
        suspended = first(events, "session", client, state="SUSPENDED")
        back = first(events, "session", client, state="RECONNECTED")
        assert kill["seq"] < suspended["seq"] < back["seq"]
        assert killed["t_ms"] < suspended["t_ms"] and killed["seq"] < back["seq"]
    assert not find(events, "session", state="LOST")  # the sessions survived the election
    lost = first(events, "lost", "alice")
    abandoned = first(events, "request", "alice", op="delete")  # its reply may come after bob's
    bob = first(events, "granted", "bob")
    assert lost["seq"] < abandoned["seq"] < bob["seq"]  # given up, then deleted, then Bob's
    assert first(events, "reply", "alice", op="delete")["ok"] is True


def test_an_etcd_leader_change_keeps_the_lease_and_the_revision_still_fences() -> None:
    events = story("etcd-leader-crash")
    assert events[0]["roles"]["etcd-3"] == "leader"
    alice = first(events, "granted", "alice")
    killed = first(events, "crashed", "etcd-3")
    leader = first(events, "role", role="leader")
    assert killed["seq"] < leader["seq"] and leader["actor"] in ("etcd-1", "etcd-2")
    assert leader["previous"] == "etcd-3" and "alice" in leader["leases"]
    kept = first(events, "extended", "alice")
    assert kept["ok"] is True and leader["seq"] < kept["seq"]  # her lease outlived the leader
    bob = first(events, "granted", "bob")
    assert first(events, "expired", holder="alice")["seq"] < bob["seq"]
    assert bob["token"] > alice["token"]  # revisions go on across the change of leader
    tokens = [e["token"] for e in find(events, "granted")]
    assert tokens == sorted(tokens)
    stale = [e for e in find(events, "reply", "alice", op="write") if e["seq"] > bob["seq"]]
    assert stale and stale[-1]["accepted"] is False


def test_a_restarted_sentinel_and_a_restarted_replica_each_say_what_they_kept() -> None:
    """A Sentinel's restart was the one server restart drawn as a bare "restarted": its row now
    says what it kept, as every other server's does (the catalogue's restart words)."""
    scenario = parse(
        {"format": 1, "title": "Restarts in a replicated set", "backend": "redis-sentinel",
         "storage": "fenced", "ttl_ms": 5000, "clients": ["alice"], "steps": [
             {"at_ms": 0, "client": "alice", "do": "acquire"},
             {"at_ms": 300, "node": "redis-2", "do": "crash"},
             {"at_ms": 600, "node": "redis-2", "do": "restart"},
             {"at_ms": 900, "node": "sentinel-2", "do": "crash"},
             {"at_ms": 1200, "node": "sentinel-2", "do": "restart"},
             {"at_ms": 1500, "client": "alice", "do": "release"}]}
    )  # fmt: skip
    result = told(scenario)
    assert result.error is None
    labels = {
        e["actor"]: e["said"]["label"]
        for e in narrate(result.events, "redis-sentinel")
        if e["kind"] == "restarted"
    }
    assert labels == {
        "redis-2": "restarted (no persistence)",
        "sentinel-2": "restarted (config kept)",
    }
