"""Sentinel's failover must come in the story's time (lockviz/lab/failovers.py), on crafted
timelines: a recorded run of redis-failover-wait-loses with its promotion moved later, as a
machine too busy to run the Sentinels makes it (live: tests/lockviz/lab/test_lateness.py)."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

from lockviz.lab import events
from lockviz.lab.engine import RunEngine
from lockviz.lab.failovers import failover_by_ms, late_failover
from lockviz.lab.labs import LocalLab
from lockviz.scenarios.library import builtin
from tests.lockviz.lab import lab_of

RUN = Path(__file__).parents[2] / "browser" / "data" / "runs" / "redis-failover-wait-loses.json"


def recorded() -> list[dict[str, Any]]:
    data = json.loads(RUN.read_text())
    found: list[dict[str, Any]] = data["events"] if isinstance(data, dict) else data
    return found


def promoted_after(run: list[dict[str, Any]], index: int | None, t_ms: float) -> list[Any]:
    """``run`` with redis-2's promotion heard at ``t_ms``, after step ``index`` (None: never)."""
    role = next(e for e in run if e["kind"] == "role" and e["role"] == "primary")
    rest = [e for e in run if e is not role]
    if index is not None:
        at = next(n for n, e in enumerate(rest) if e["kind"] == "step" and e["index"] == index)
        rest.insert(at + 1, {**role, "t_ms": t_ms})
    return [events.parse(e) for e in rest]


def test_a_promotion_in_time_keeps_the_story() -> None:
    run = [events.parse(e) for e in recorded()]
    assert late_failover(run, float(run[-1].t_ms)) is None
    assert failover_by_ms(3) == 5500  # bob asks 5.7 s after the kill: after it, as scripted


def test_a_promotion_after_bob_s_ask_loses_the_story() -> None:
    # seen under load: bob's acquire waited for the failover and was granted after alice's
    # write, "expected stale_writes_accepted = 1, got 0", with no word of the machine
    run = promoted_after(recorded(), 5, 10_600.0)  # after alice's write (step 6)
    crossing = late_failover(run, 12_000.0)
    assert crossing is not None
    assert (crossing.fixed.who, crossing.moved) == (
        "step 4 (acquire)",
        "Sentinel's failover of redis-1",
    )
    assert crossing.due_ms < crossing.fixed.at_ms < crossing.moved_to_ms == 10_600.0


def test_a_promotion_that_never_came_loses_the_story() -> None:
    run = promoted_after(recorded(), None, 0.0)
    crossing = late_failover(run, 15_000.0)
    assert crossing is not None and crossing.moved_to_ms == 15_000.0


def test_a_promotion_just_before_bob_s_ask_keeps_it() -> None:
    run = promoted_after(recorded(), 2, 6_400.0)  # after the kill, before bob's ask (6.5 s)
    assert late_failover(run, 12_000.0) is None


@pytest.mark.live
def test_sentinels_too_busy_to_fail_over_in_time_make_the_run_inconclusive_not_wrong() -> None:
    """The Sentinels stopped from outside the lab (SIGSTOP) for 9 s from the kill, as a machine
    too busy to run them: before, "expected mutual_exclusion = 'violated', got 'held'",
    stale_writes_accepted 0, with every step on time and no word of the machine."""
    engine: RunEngine

    def sink(event: events.Event) -> None:
        if isinstance(event, events.Step) and event.do == "crash":
            servers = lab_of(engine).servers.servers
            pids = [s.proc.pid for n, s in servers.items() if n.startswith("sentinel") and s.proc]
            for pid in pids:
                os.kill(pid, signal.SIGSTOP)
            threading.Timer(9.0, lambda: [os.kill(p, signal.SIGCONT) for p in pids]).start()

    engine = RunEngine(builtin()["redis-failover-wait-loses"], LocalLab(), sink)
    result = engine.run()
    assert result.error is None
    assert result.expect_met is None, result.mismatches
    assert result.inconclusive.startswith("the machine fell behind: Sentinel's failover of"), (
        result.inconclusive
    )


def test_a_primary_cut_off_from_the_sentinels_is_held_to_its_failover_too() -> None:
    run = json.loads((RUN.parent / "redis-split-primary.json").read_text())
    run = run["events"] if isinstance(run, dict) else run
    assert late_failover([events.parse(e) for e in run], 12_000.0) is None  # as recorded
    crossing = late_failover(promoted_after(run, None, 0.0), 12_000.0)  # never promoted
    assert crossing is not None and crossing.fixed.who == "step 7 (acquire)"  # bob's ask
