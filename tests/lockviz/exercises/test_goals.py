"""What an exercise's goal asks of a verdict: pure, no servers."""

from __future__ import annotations

import json
from pathlib import Path

from algorithms.checker import check
from lockviz.exercises import goals

HELD = {"mutual_exclusion": "held", "stale_writes_accepted": 0, "stale_writes_rejected": 0,
        "acquire_failures": 0, "liveness": "ok", "writes": [], "inconclusive": ""}  # fmt: skip


RUNS = Path(__file__).parents[2] / "browser" / "data" / "runs"  # recorded from the live lab


def test_a_lost_update_is_the_checkers_finding_not_a_second_rule() -> None:
    """A last-write-wins replica that drops an acknowledged write loses an update with no stale
    write at all: the checker says so, and a goal read by its own rule said not."""
    for name, lost in (("lww-clock-behind", True), ("gc-pause-unfenced", True),
                       ("gc-pause-fenced", False), ("storage-lost-update-cas", False)):  # fmt: skip
        events = json.loads((RUNS / f"{name}.json").read_text("utf-8"))["events"]
        verdict = check(events).as_dict()
        assert verdict["data_corrupted"] is lost, name
        assert goals.lost_update(verdict) is lost, name
        assert goals.judge(verdict, "lost_update").met is lost, name
    stale_but_nothing_lost = {**HELD, "stale_writes_accepted": 1, "data_corrupted": False}
    assert goals.stale_write(stale_but_nothing_lost)
    assert not goals.lost_update(stale_but_nothing_lost)


def test_safe_is_no_stale_write_accepted_and_still_live() -> None:
    refused = {**HELD, "mutual_exclusion": "violated", "stale_writes_rejected": 1}
    assert goals.safe(refused)
    assert not goals.safe({**HELD, "acquire_failures": 1})  # a client gave up: not live
    assert not goals.safe({**HELD, "liveness": "stuck"})
    assert not goals.safe({**HELD, "stale_writes_accepted": 1})


def test_an_inconclusive_verdict_meets_and_misses_nothing() -> None:
    why = "the machine fell behind by 120 ms at step 3"
    for goal in ("two_holders", "safe", "predict:held"):
        judged = goals.judge({**HELD, "inconclusive": why}, goal)
        assert judged.met is None and why in judged.why
    assert goals.judge(None, "safe").met is None


def test_a_prediction_is_judged_by_the_first_outcome_that_applies() -> None:
    assert goals.outcome({**HELD, "liveness": "stuck", "stale_writes_accepted": 1}) == "stuck"
    assert (
        goals.outcome({**HELD, "mutual_exclusion": "violated", "stale_writes_rejected": 1})
        == "refused"
    )
    assert goals.outcome({**HELD, "mutual_exclusion": "violated"}) == "two_holders"
    assert goals.judge(HELD, "predict:held").met is True
    assert goals.judge(HELD, "predict:corrupted").met is False
