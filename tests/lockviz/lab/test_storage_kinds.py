"""Storage kinds on the live lab: the sequencer check made by the storage service, reads and
versions, idempotency keys, and runs without a lock service."""

from __future__ import annotations

from typing import Any

import pytest

from lockviz.lab.engine import RunEngine
from lockviz.lab.labs import LocalLab
from lockviz.lab.recording import RunResult
from lockviz.scenarios.schema import Scenario, parse
from tests.lockviz.lab.recorded import told_once

pytestmark = pytest.mark.live

Event = dict[str, Any]


def run(s: Scenario, tries: int = 3) -> RunResult:
    """``s`` run on the live lab: the first run that kept its story. A run that says the
    machine fell behind (a loaded test machine) told no story to check, and is run again."""
    for _ in range(tries):
        result = RunEngine(s, LocalLab()).run()
        assert result.error is None, result.error
        if not result.inconclusive:
            break
    assert not result.inconclusive, result.inconclusive
    return result


def kind_of(events: list[Event], actor: str, kind: str, **match: Any) -> list[Event]:
    return [
        e
        for e in events
        if e["actor"] == actor and e["kind"] == kind and match.items() <= e.items()
    ]


SEQUENCER_BACKENDS = [
    ("redis", {}),
    ("redlock", {"redis_nodes": 3}),
    ("zookeeper", {}),
    ("etcd", {}),
    ("postgres", {"variant": "session"}),
    ("etcd", {"variant": "election"}),  # a leader's key is checked as a holder's
    ("zookeeper", {"variant": "election"}),
]


@pytest.mark.parametrize(
    ("backend", "extra"),
    SEQUENCER_BACKENDS,
    ids=[f"{b}-{e['variant']}" if "variant" in e else b for b, e in SEQUENCER_BACKENDS],
)
def test_the_storage_asks_the_lock_service_at_each_write(
    backend: str, extra: dict[str, Any]
) -> None:
    scenario = parse({
        "format": 1, "title": f"sequencer on {backend}", "backend": backend, "storage": "sequencer",
        "ttl_ms": 3000, "clients": ["alice", "bob"], **extra,
        "steps": [
            {"at_ms": 0, "client": "alice", "do": "acquire", "timeout_ms": 3000},
            {"at_ms": 400, "client": "alice", "do": "write", "value": "A"},
            {"at_ms": 700, "client": "alice", "do": "release"},
            {"at_ms": 900, "client": "bob", "do": "acquire", "timeout_ms": 3000},
            {"at_ms": 1400, "client": "alice", "do": "write", "value": "A2"},
        ],
    })  # fmt: skip
    events = run(scenario).events
    writes = kind_of(events, "alice", "reply", op="write")
    assert [w["accepted"] for w in writes] == [True, False]
    assert writes[1]["reason"]  # the lock service's reason, in words
    started = kind_of(events, "lab", "run_started")[0]
    assert started["storage_kind"] == "sequencer"
    asked = kind_of(events, "storage", "request", op="check")
    assert asked and {e["to"] for e in asked} <= set(started["nodes"])
    # Each write: the client's request, then the storage's questions and answers, then the reply.
    for reply in writes:
        request = next(e for e in kind_of(events, "alice", "request", op="write")
                       if e["call"] == reply["call"])  # fmt: skip
        between = [e for e in events if e["actor"] == "storage"
                   and request["t_ms"] <= e["t_ms"] <= reply["t_ms"]]  # fmt: skip
        answers = [e for e in between if e["kind"] == "reply"]
        assert answers and all(e["op"] == "check" for e in between)
        yes = sum(1 for e in answers if e["current"])
        needed = len(answers) // 2 + 1  # Redlock asks every node and needs a majority; others one
        assert (yes >= needed) == reply["accepted"]
    assert run_verdict(events)["stale_writes_rejected"] == 1


def run_verdict(events: list[Event]) -> dict[str, Any]:
    return kind_of(events, "lab", "run_finished")[0]["verdict"]


def test_the_fencing_hole_is_closed_by_asking_zookeeper_after_it_expired_her_session() -> None:
    events = told_once("storage-hole-sequencer").events
    expired = kind_of(events, "zk-1", "expired", holder="alice")[0]
    bob = kind_of(events, "bob", "granted")[0]
    alice_write = kind_of(events, "alice", "request", op="write")[0]
    [no, yes] = kind_of(events, "storage", "reply", op="check")
    assert no["current"] is False and "alice" in no["why"] and yes["current"] is True
    # Bob had written nothing when alice's write came: only the lock service could know.
    assert not [e for e in kind_of(events, "bob", "request", op="write")
                if e["t_ms"] < alice_write["t_ms"]]  # fmt: skip
    assert expired["t_ms"] < bob["t_ms"] < alice_write["t_ms"] < no["t_ms"]


def test_the_fenced_storage_lets_the_same_write_through() -> None:
    events = told_once("storage-hole-fenced").events
    alice = kind_of(events, "alice", "reply", op="write")[0]
    bob_grant = kind_of(events, "bob", "granted")[0]
    assert alice["accepted"] and alice["highest"] < bob_grant["token"]  # it never saw bob's


def test_a_retry_is_applied_twice_without_a_key_and_once_with_one() -> None:
    for slug, final, expected in (
        ("storage-retry-duplicate", "A", 3),
        ("storage-retry-idempotent", "B", 2),
    ):
        events = told_once(slug).events
        started = kind_of(events, "lab", "run_started")[0]
        assert started["nodes"] == [] and set(started["servers"]) == {"storage"}
        timed_out, retry = kind_of(events, "alice", "reply", op="write")
        assert timed_out["ok"] is False and "timeout" in timed_out["error"]
        bob_read = kind_of(events, "bob", "reply", op="read")[0]
        assert (bob_read["value"], bob_read["version"]) == ("A", 1)  # applied after the heal
        assert retry.get("duplicate", False) is (slug == "storage-retry-idempotent")
        last = kind_of(events, "bob", "reply", op="read")[-1]
        assert (last["value"], last["version"]) == (final, expected)
        assert run_verdict(events)["mutual_exclusion"] == "none"
