"""No run can hold the lab hostage: a frozen client, an hour-long pause, a stuck or overlong run.

Each case is one that wedged or lingered on main: the engine blocked writing to a frozen
client's full pipe, Finish waited for an hour-long pause, a session lived on with nobody there.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from lockviz.lab import procs
from lockviz.lab.engine import RunEngine
from lockviz.lab.labs import LocalLab
from lockviz.lab.limits import Limits, Watchdog
from lockviz.lab.recording import RunResult
from lockviz.scenarios.schema import Scenario, parse
from tests.conftest import live_processes, scenario
from tests.lockviz.lab import lab_of

pytestmark = pytest.mark.live


def in_thread(engine: RunEngine) -> tuple[threading.Thread, list[RunResult]]:
    results: list[RunResult] = []
    thread = threading.Thread(target=lambda: results.append(engine.run()), daemon=True)
    thread.start()
    return thread, results


def kinds(events: list[dict[str, Any]], actor: str | None = None) -> list[str]:
    return [e["kind"] for e in events if actor in (None, e["actor"])]


def session(**changes: Any) -> Scenario:
    data: dict[str, Any] = {
        "format": 1, "title": "free play", "backend": "redis", "fencing": True,
        "ttl_ms": 1000, "clients": ["alice", "bob"], "steps": [],
    }  # fmt: skip
    return parse({**data, **changes}, allow_empty=True)


def test_a_frozen_client_sent_a_burst_of_long_writes_cannot_wedge_the_run() -> None:
    burst = [
        {"at_ms": 20 + i, "client": "alice", "do": "write", "value": "x" * 200} for i in range(400)
    ]
    s = scenario(
        steps=[
            {"at_ms": 0, "client": "alice", "do": "acquire"},
            {"at_ms": 10, "client": "alice", "do": "pause", "ms": 1000},
            *burst,
        ]
    )
    engine = RunEngine(s, LocalLab())
    thread, results = in_thread(engine)
    thread.join(90)
    assert not thread.is_alive(), "the run never ended"
    [result] = results
    assert result.error is None and result.verdict is not None
    alice = kinds(result.events, "alice")
    assert "step_refused" in alice  # told, not queued for ever
    assert alice.index("resumed") > alice.index("paused")  # the thaw came on time
    refused = next(e for e in result.events if e["kind"] == "step_refused")
    assert "alice already has 64 commands waiting" in refused["why"]
    if not any(e["kind"] == "schedule_shifted" for e in result.events):
        # On time, the burst comes while she is frozen (a machine that fell behind may send
        # the rest of it after her thaw, still faster than she can take it).
        assert refused["why"].endswith("while it is frozen")
    pids = [c.proc.pid for c in lab_of(engine).clients.values() if c.proc]
    assert not [pid for pid in pids if procs.alive(pid)]


def test_finish_ends_a_session_at_once_even_during_a_long_pause() -> None:
    engine = RunEngine(session(), LocalLab(), open_ended=True)
    thread, results = in_thread(engine)
    assert engine.started.wait(30)
    longest = engine.clicked_pause_ms()
    assert longest == 60_000  # a click may pause a client for a minute at most
    engine.inject(parse_step(engine, {"do": "acquire", "client": "alice"}))
    engine.inject(parse_step(engine, {"do": "pause", "client": "alice", "ms": longest}))
    deadline = time.monotonic() + 20
    while "paused" not in kinds(engine.events_json(), "alice"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    asked = time.monotonic()
    engine.end("Finish was pressed")
    thread.join(30)
    assert not thread.is_alive()
    took = time.monotonic() - asked
    [result] = results
    assert result.verdict is not None and took < 10  # not the minute the pause had left
    order = [e["kind"] for e in result.events if e["kind"] in ("ending", "resumed", "run_finished")]
    assert order == ["ending", "resumed", "run_finished"]
    ending = next(e for e in result.events if e["kind"] == "ending")
    assert ending["why"] == "Finish was pressed"


def test_an_idle_session_ends_itself_and_says_why() -> None:
    engine = RunEngine(session(), LocalLab(), open_ended=True, limits=Limits(600, idle_s=1.0))
    thread, results = in_thread(engine)
    thread.join(60)
    assert not thread.is_alive()
    [result] = results
    ending = next(e for e in result.events if e["kind"] == "ending")
    assert ending["why"] == "no click for 1 s: the session ended itself"
    assert result.verdict is not None and kinds(result.events)[-1] == "run_finished"


def test_a_run_past_its_time_limit_fails_with_the_reason_and_leaves_nothing() -> None:
    s = scenario(
        steps=[
            {"at_ms": 0, "client": "alice", "do": "acquire"},
            {"at_ms": 8000, "client": "alice", "do": "release"},
        ]
    )
    engine = RunEngine(s, LocalLab(), limits=Limits(total_s=1.5))
    thread, results = in_thread(engine)
    thread.join(60)
    assert not thread.is_alive()
    [result] = results
    assert result.verdict is None
    assert result.error == "the run reached its time limit of 1.5 s"
    assert "run_failed" in kinds(result.events) and "run_finished" not in kinds(result.events)
    assert not any(e["kind"] == "step" and e["do"] == "release" for e in result.events)
    pids = [pid for server in lab_of(engine).servers.servers.values() for pid in server.pids()]
    pids += [c.proc.pid for c in lab_of(engine).clients.values() if c.proc]
    assert not [pid for pid in pids if procs.alive(pid)]
    assert not [pid for pid in live_processes() if pid in pids]


def parse_step(engine: RunEngine, data: dict[str, Any]) -> Any:
    from lockviz.scenarios.schema import check_step

    return check_step(engine.scenario, data, at_ms=int(engine.now_ms))


def test_the_watchdog_calls_a_step_that_never_returns_stuck() -> None:
    calls: list[tuple[str, bool]] = []
    busy = [(0.0, "")]
    dog = Watchdog(
        Limits(total_s=600, step_s=0.3),
        elapsed_s=lambda: 1.0,
        idle_s=lambda: 0.0,
        busy_s=lambda: busy[0],
        on_limit=lambda why, stuck: calls.append((why, stuck)),
    )
    assert dog.reached() is None
    busy[0] = (0.5, "step 3 (restart)")
    assert dog.reached() == ("the lab is stuck: step 3 (restart) has not returned for 0.5 s", True)
    dog.start()
    time.sleep(1)
    dog.stop()
    assert calls == [("the lab is stuck: step 3 (restart) has not returned for 0.5 s", True)]


def test_a_full_lab_ends_idle_free_play_sessions_sooner_before_it_refuses_anyone() -> None:
    from lockviz.lab.capacity import Machine, Ticket
    from lockviz.lab.limits import CROWDED_IDLE_S, OPEN_IDLE_S

    machine = Machine(ceiling=1, sample=False)
    ticket = Ticket(machine, "idle-session")
    idle = [CROWDED_IDLE_S + 5]  # idle a while, well short of the usual limit
    dog = Watchdog(
        Limits(total_s=600, idle_s=OPEN_IDLE_S),
        elapsed_s=lambda: 100.0,
        idle_s=lambda: idle[0],
        busy_s=lambda: (0.0, ""),
        on_limit=lambda why, stuck: None,
        crowded=ticket.crowded,
    )
    assert dog.reached() is None  # nobody waits: the session may idle on
    machine.join("someone-else")  # a run waits for a slot: the lab is full
    assert dog.reached() == (
        f"no click for {CROWDED_IDLE_S:g} s while other runs waited for the lab: the session "
        "ended itself to make room",
        False,
    )
    idle[0] = CROWDED_IDLE_S - 5  # a session in use keeps its slot, crowded or not
    assert dog.reached() is None
