"""What an exercise's goal asks of a verdict: pure, no servers."""

from __future__ import annotations

from lockviz.exercises import goals

HELD = {"mutual_exclusion": "held", "stale_writes_accepted": 0, "stale_writes_rejected": 0,
        "acquire_failures": 0, "liveness": "ok", "writes": [], "inconclusive": ""}  # fmt: skip


def write(
    seq: int, client: str, *, stale: bool = False, accepted: bool = True, over: str = ""
) -> dict[str, object]:
    return {"seq": seq, "client": client, "stale": stale, "accepted": accepted,
            "superseded_by": over or None}  # fmt: skip


def test_a_lost_update_needs_an_earlier_accepted_write_of_whom_it_superseded() -> None:
    late = {**HELD, "stale_writes_accepted": 1,
            "writes": [write(5, "bob"), write(9, "alice", stale=True, over="bob")]}  # fmt: skip
    early = {**HELD, "stale_writes_accepted": 1,
             "writes": [write(5, "alice", stale=True, over="bob"), write(9, "bob")]}  # fmt: skip
    assert goals.lost_update(late) and goals.stale_write(late)
    assert not goals.lost_update(early) and goals.stale_write(early)


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
