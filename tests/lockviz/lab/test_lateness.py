"""A run keeps its story, or says it could not: on the live lab, with the machine made late.

Lateness is forced honestly: a step made slow in the engine's own thread (as a busy machine
would leave it), a client process stopped by SIGSTOP from outside the lab (as a machine too busy
to run it would), and, in tests/lockviz/management/test_run_scenario.py, the whole engine process
stopped, and a real CPU hog.
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
import time
from typing import Any

import pytest

from lockviz.lab import clients, labs
from lockviz.lab.engine import RunEngine, RunResult
from lockviz.lab.events import Event
from lockviz.lab.labs import LocalLab
from lockviz.lab.provision import Provisioned
from lockviz.lab.scheduler import TOLERANCE_MS
from lockviz.lab.watchers.base import Watcher
from lockviz.scenarios.library import builtin
from tests.conftest import scenario
from tests.lockviz.lab import lab_of

pytestmark = pytest.mark.live


def first(events: list[dict[str, Any]], kind: str, **details: Any) -> dict[str, Any]:
    return next(
        e for e in events if e["kind"] == kind and all(e.get(k) == v for k, v in details.items())
    )


def steps(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == "step"]


def test_the_scenario_clock_starts_once_every_server_client_and_watcher_is_ready(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ready: dict[str, int] = {}
    servers = LocalLab.servers

    def servers_ready(self: LocalLab, *args: Any, **kwargs: Any) -> Any:
        with servers(self, *args, **kwargs) as started:  # yields once each has proved it is up
            ready["servers"] = time.monotonic_ns()
            yield started

    client_ready, watcher_ready = clients.ClientProcess.wait_ready, Watcher.wait_ready

    def client_is_ready(self: clients.ClientProcess, *args: Any) -> None:
        client_ready(self, *args)
        ready[f"client {self.name}"] = time.monotonic_ns()

    def watcher_is_ready(self: Watcher, timeout_s: float) -> bool:
        found = watcher_ready(self, timeout_s)
        if found:
            ready[f"watcher {self.name}"] = time.monotonic_ns()
        return found

    monkeypatch.setattr(LocalLab, "servers", labs.contextlib.contextmanager(servers_ready))
    monkeypatch.setattr(clients.ClientProcess, "wait_ready", client_is_ready)
    monkeypatch.setattr(Watcher, "wait_ready", watcher_is_ready)
    engine = RunEngine(builtin()["redlock-happy"], LocalLab())
    result = engine.run()
    assert result.error is None and result.expect_met
    assert set(ready) == {
        "servers",
        "client alice",
        *(f"watcher redis-{n}" for n in range(1, 6)),
    }
    assert all(t <= engine._t0_ns for t in ready.values())  # the clock starts after them all
    assert result.events[0]["kind"] == "run_started"


def stalled_at_start() -> RunResult:
    engine = RunEngine(builtin()["gc-pause-fenced"], LocalLab())
    run = engine.schedule.run

    def stalled_run(**kwargs: Any) -> None:
        time.sleep(1.0)  # the machine is busy as the run starts: nothing has begun yet
        run(**kwargs)

    engine.schedule.run = stalled_run  # type: ignore[method-assign]
    return engine.run()


def test_a_late_first_step_shifts_the_whole_schedule_and_keeps_the_story() -> None:
    for _ in range(3):  # beside other tests the machine may fall behind again on its own
        result = stalled_at_start()
        if sum(e["kind"] == "schedule_shifted" for e in result.events) == 1:
            break
    shift = first(result.events, "schedule_shifted")
    assert shift["index"] == 0 and shift["late_ms"] >= 900 and shift["kept"] is True
    done = steps(result.events)
    assert done[0]["late_ms"] >= 900
    assert all(s["late_ms"] < TOLERANCE_MS for s in done[1:])  # the rest came on the new schedule
    # Every interval of the script was kept (within the tolerance), the story with it.
    for before, after in itertools.pairwise(done):
        scripted = after["at_ms"] - before["at_ms"]
        assert abs((after["t_ms"] - before["t_ms"]) - scripted) < TOLERANCE_MS + 10
    assert result.inconclusive == "" and result.expect_met is True, result.verdict


def test_a_stall_after_a_grant_that_outlives_the_lease_makes_the_run_inconclusive() -> None:
    engine = RunEngine(builtin()["gc-pause-fenced"], LocalLab())
    dispatch = engine._dispatch

    def slow_dispatch(lab: Provisioned, index: int, step: Any) -> None:
        dispatch(lab, index, step)
        if index == 0:
            time.sleep(2.3)  # a stalled machine, right after alice asked for her 2 s lease

    engine._dispatch = slow_dispatch  # type: ignore[method-assign]
    result = engine.run()
    shift = first(result.events, "schedule_shifted")
    assert shift["kept"] is False and shift["index"] == 1  # her pause, due at 300 ms
    assert (shift["fixed"], shift["fixed_by"]) == ("lease", "alice")
    assert shift["moved_from_ms"] < shift["fixed_ms"] < shift["moved_to_ms"]
    assert result.inconclusive.startswith("the machine fell behind by")
    assert result.inconclusive.endswith("ms at step 2")
    assert result.verdict is not None and result.verdict["summary"].startswith("Inconclusive")
    assert result.expect_met is None and result.mismatches == []  # not judged: not contradicted
    assert first(result.events, "run_finished")["expect_met"] is None


# alice takes the lock first, bob waits for it: a story of who came first.
TURNS = scenario(
    ttl_ms=5000,
    steps=[
        {"at_ms": 0, "client": "alice", "do": "acquire"},
        {"at_ms": 300, "client": "bob", "do": "acquire", "timeout_ms": 3000},
        {"at_ms": 1000, "client": "alice", "do": "release"},
        {"at_ms": 1500, "client": "bob", "do": "release"},
    ],
    expect={"mutual_exclusion": "held"},
)


def stall_client(engine: RunEngine, name: str, seconds: float) -> None:
    """Stop ``name``'s process from outside the lab as the run starts, for ``seconds``: a
    machine too busy to run it. The lab does not know: only the client's lateness tells."""
    play = engine._play

    def started(lab: Provisioned) -> None:  # its clients are ready; the run has not started
        proc = lab.clients[name].proc
        assert proc is not None
        os.kill(proc.pid, signal.SIGSTOP)

        def resume() -> None:
            engine.started.wait()
            time.sleep(seconds)
            os.kill(proc.pid, signal.SIGCONT)

        threading.Thread(target=resume, daemon=True).start()
        play(lab)

    engine._play = started  # type: ignore[method-assign]


def alices_shift(result: RunResult) -> dict[str, Any]:
    """The shift alice's stall caused (a loaded machine may add a small one of its own first,
    when the engine itself sends step 1 late)."""
    why = "step 1 (acquire), as alice took it"
    shifts = [e for e in result.events if e["kind"] == "schedule_shifted"]
    hers = [e for e in shifts if e["what"] == why]
    assert hers, [e["what"] for e in shifts]
    return hers[0]


def run_stalled(seconds: float) -> RunResult:
    engine = RunEngine(TURNS, LocalLab())
    stall_client(engine, "alice", seconds)
    return engine.run()


def test_a_client_that_takes_its_command_late_shifts_the_rest_and_keeps_the_story() -> None:
    result = run_stalled(0.2)  # alice's acquire begins ~200 ms late; bob's is not due yet
    shift = alices_shift(result)
    assert shift["kept"] is True
    assert shift["late_ms"] >= 150
    bob = first(result.events, "step", index=1)
    assert bob["t_ms"] >= 300 + shift["late_ms"] - TOLERANCE_MS  # moved with the schedule
    assert result.expect_met is True, result.verdict


def test_a_client_that_takes_its_command_after_a_later_step_makes_the_run_inconclusive() -> None:
    result = run_stalled(0.7)  # bob asks (at 300 ms) before alice's acquire has even begun
    shift = alices_shift(result)
    assert shift["kept"] is False
    assert (shift["fixed"], shift["fixed_by"]) == ("step", "step 2 (acquire)")
    assert result.inconclusive.endswith("ms at step 1")
    assert result.expect_met is None and result.mismatches == []


def test_a_server_too_busy_to_answer_across_another_clients_step_makes_the_run_inconclusive() -> (
    None
):
    """Releasing someone else's lock, with Redis stopped from outside the lab for 0.6 s from
    Carol's acquire (as a machine too busy to run it would): every step begins on time, but
    Carol is granted only after Bob's write, and the story ("Carol is granted, then Bob
    writes") is not known to have happened. The run says so, instead of a wrong verdict
    (found on a loaded machine: Bob's write was judged not stale, against the expect)."""
    engine: RunEngine

    def sink(event: Event) -> None:
        if event.kind == "step" and event.index == 4:  # Carol's acquire, at 3,000 ms
            server = lab_of(engine).servers.servers["redis-1"]
            assert server.proc is not None
            os.kill(server.proc.pid, signal.SIGSTOP)
            threading.Timer(0.6, os.kill, (server.proc.pid, signal.SIGCONT)).start()

    engine = RunEngine(builtin()["unsafe-release"], LocalLab(), sink)
    result = engine.run()
    assert result.error is None
    assert result.expect_met is None, result.mismatches  # neither met nor contradicted
    assert result.inconclusive.startswith("the machine fell behind: "), result.inconclusive
    carols = first(result.events, "schedule_shifted", kept=False, index=4)
    assert carols["reply"] is True
    assert carols["what"].startswith("carol's acquire on redis-1 (was answered after")
    assert (carols["fixed"], carols["fixed_by"]) == ("step", "step 6 (write)")  # Bob's
    assert carols["due_ms"] < carols["fixed_ms"] < carols["moved_to_ms"]
