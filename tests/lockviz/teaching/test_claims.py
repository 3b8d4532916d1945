"""Each checkpoint's answer as a claim on a run's events (lockviz/teaching/claims/): one claim
per checkpoint, and every recorded real run of each lesson agrees with every claim of it. The
same claims are checked on fresh live runs by bench/lessons.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lockviz.teaching.claims import CLAIMS
from lockviz.teaching.history import History
from lockviz.teaching.lessons import course

RECORDED = Path(__file__).parents[2] / "browser" / "data" / "runs"
CHECKPOINTS = [
    (item.slug, index)
    for item in course()
    for index, step in enumerate(item.scenario.steps)
    if step.ask is not None
]


def test_every_checkpoint_has_exactly_one_claim_and_every_claim_a_checkpoint() -> None:
    assert sorted(CLAIMS) == sorted(CHECKPOINTS)


@pytest.mark.parametrize(("slug", "index"), CHECKPOINTS)
def test_the_recorded_run_agrees_with_the_checkpoints_answer(slug: str, index: int) -> None:
    run = json.loads((RECORDED / f"{slug}.json").read_text())
    found = CLAIMS[(slug, index)](History(run["events"]))
    assert found.agrees, f"{slug} step {index + 1}: {found.why}"


def test_a_claim_disagrees_with_a_run_that_contradicts_its_answer() -> None:
    """The fenced GC pause's run, with the storage's rejection turned into an acceptance: the
    answer "It rejects the write" no longer holds, and the claim says why."""
    run = json.loads((RECORDED / "gc-pause-fenced.json").read_text())
    events = [
        {**e, "accepted": True} if e.get("kind") == "reply" and e.get("accepted") is False else e
        for e in run["events"]
    ]
    found = CLAIMS[("gc-pause-fenced", 5)](History(events))
    assert not found.agrees and found.why == "step 6's write: accepted = True"
    granted = [e for e in run["events"] if not (e["kind"] == "granted" and e["actor"] == "bob")]
    assert not CLAIMS[("gc-pause-fenced", 2)](History(granted)).agrees  # bob never granted


def test_a_claim_counts_from_the_step_not_from_a_servers_late_report() -> None:
    """A live run of bench/lessons.py (kept in data/ here): bob's poll was granted a moment
    before the lab recorded pg-1 "restarted" (it records it once it sees the server serve).
    The answer held (token 34 > 1); the claim first measured from that report."""
    data = Path(__file__).parent / "data" / "pg-restart-frees-restarted-late.json"
    history = History(json.loads(data.read_text())["events"])
    assert history.granted("bob")["t_ms"] < history.first("restarted", "pg-1")["t_ms"]
    found = CLAIMS[("pg-restart-frees", 4)](history)
    assert found.agrees and found.why == "tokens 1 → 34"


def test_a_listing_in_the_wake_ups_own_millisecond_is_not_a_poll() -> None:
    """A live run of zk-contention (kept in data/ here): bob's listing after his watch fired was
    stamped in the same millisecond as the wake-up, and the claim first counted it as a poll."""
    data = Path(__file__).parent / "data" / "zk-contention-listing-same-ms.json"
    found = CLAIMS[("zk-contention", 3)](History(json.loads(data.read_text())["events"]))
    assert found.agrees and found.why == "woken: True, listings while waiting: 0"


def test_the_failover_claims_check_which_replica_was_promoted_and_what_it_had() -> None:
    """redis-failover-wait-loses, with redis-3 (which had Alice's key) promoted instead of
    redis-2: the answer "redis-2: its replica-priority is lower" no longer holds; and
    redis-failover with Alice's key reaching redis-2 before it was promoted."""
    run = json.loads((RECORDED / "redis-failover-wait-loses.json").read_text())
    events = [{**e, "actor": "redis-3"} if e["kind"] == "role" else e for e in run["events"]]
    found = CLAIMS[("redis-failover-wait-loses", 2)](History(events))
    assert not found.agrees and found.why.startswith("redis-3 promoted")
    run = json.loads((RECORDED / "redis-failover.json").read_text())
    key = {"kind": "replicated", "t_ms": 400.0, "actor": "redis-2", "holder": "alice"}
    found = CLAIMS[("redis-failover", 2)](History([*run["events"], key]))
    assert not found.agrees and found.why.endswith("had alice's key: True")
