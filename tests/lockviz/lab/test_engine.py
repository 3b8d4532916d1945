"""The run engine on the live lab: real servers, real client processes, real signals."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from lockviz.lab import procs, registry
from lockviz.lab.engine import RunEngine
from lockviz.lab.events import Event
from lockviz.lab.labs import LocalLab
from lockviz.lab.recording import RunResult
from lockviz.scenarios.library import builtin
from lockviz.scenarios.schema import Scenario, parse
from tests.conftest import builtin_json, scenario
from tests.lockviz.lab import lab_of

pytestmark = pytest.mark.live


def run(s: Scenario, sink: Any = None) -> tuple[RunEngine, RunResult]:
    engine = RunEngine(s, LocalLab(), sink or (lambda event: None))
    return engine, engine.run()


def told(s: Scenario, attempts: int = 3) -> RunResult:
    """A run of ``s`` that told its story. Beside other tests (``make test`` runs several at
    once, on a machine others share) the machine may fall behind: at a moment the schedule
    cannot be shifted past, or with a reply so late (or never come, past a Redlock node's
    100 ms) that the story's order is not known. The run then says so, inconclusive, never a
    wrong verdict, and is played again; three in a row are a failure, and so is a story gone
    wrong without saying the machine fell behind."""
    return retold(lambda: run(s)[1], attempts)


def retold(play: Callable[[], RunResult], attempts: int = 3) -> RunResult:
    """``play`` until a run tells its story (see :func:`told`), at most ``attempts`` times."""
    for _ in range(attempts):
        result = play()
        if result.expect_met is not False and not result.inconclusive:
            return result
        assert result.inconclusive.startswith("the machine fell behind"), (
            result.inconclusive,
            result.mismatches,
        )
    return result


def test_fenced_gc_pause_story_in_order() -> None:
    _, result = run(builtin()["gc-pause-fenced"])
    events = result.events
    first = {}
    for e in events:
        first.setdefault((e["actor"], e["kind"]), e)
    paused, expired = first[("alice", "paused")], first[("redis-1", "expired")]
    bob_granted, resumed = first[("bob", "granted")], first[("alice", "resumed")]
    rejected = next(e for e in events if e["kind"] == "reply" and e.get("accepted") is False)
    alice_granted = first[("alice", "granted")]
    # The server expired alice's lease while she was frozen; bob got a higher token after that;
    # alice wrote after waking, with her old token, and the storage refused it.
    assert expired["holder"] == "alice"
    assert paused["seq"] < expired["seq"] < bob_granted["seq"] < resumed["seq"] < rejected["seq"]
    assert bob_granted["token"] > alice_granted["token"]
    assert rejected["actor"] == "alice" and rejected["token"] == alice_granted["token"]
    assert rejected["reason"] == f"{alice_granted['token']} < {bob_granted['token']}"
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))


def test_a_frozen_client_is_really_stopped_while_its_lease_expires() -> None:
    s = scenario(
        ttl_ms=400,
        clients=["alice"],
        steps=[
            {"at_ms": 0, "client": "alice", "do": "acquire"},
            {"at_ms": 100, "client": "alice", "do": "pause", "ms": 2000},
            {"at_ms": 200, "client": "alice", "do": "extend"},  # sent while frozen: it waits
        ],
    )
    states: dict[str, str] = {}
    engine: RunEngine

    def sink(event: Event) -> None:
        if event.kind == "expired":  # observed on the server, in the watcher's thread
            pid = lab_of(engine).clients["alice"].proc.pid  # type: ignore[union-attr]
            with open(f"/proc/{pid}/stat") as f:
                states["at_expiry"] = f.read().rsplit(")", 1)[1].split()[0]

    engine = RunEngine(s, LocalLab(), sink)
    result = engine.run()
    kinds = [(e["actor"], e["kind"]) for e in result.events]
    assert states["at_expiry"] == "T"  # the whole process was stopped (SIGSTOP)
    assert kinds.index(("alice", "paused")) < kinds.index(("redis-1", "expired"))
    assert kinds.index(("redis-1", "expired")) < kinds.index(("alice", "resumed"))
    # The extend queued during the pause ran only after the thaw, and found the lease gone.
    extend = next(e for e in result.events if e["kind"] == "extended")
    resumed = next(e for e in result.events if e["kind"] == "resumed")
    assert extend["ok"] is False and extend["seq"] > resumed["seq"]
    assert ("alice", "lost") in kinds


def test_a_node_clock_jump_expires_the_lease_early() -> None:
    s = scenario(
        ttl_ms=30_000,
        steps=[
            {"at_ms": 0, "client": "alice", "do": "acquire"},
            {"at_ms": 300, "node": "redis-1", "do": "clock_jump", "ms": 20_000},
            {"at_ms": 600, "node": "redis-1", "do": "clock_jump", "ms": 20_000},
            {"at_ms": 900, "client": "bob", "do": "acquire", "timeout_ms": 2000},
        ],
    )
    _, result = run(s)
    kinds = [(e["actor"], e["kind"]) for e in result.events]
    jumps = [e for e in result.events if e["kind"] == "clock_jumped"]
    assert [j["offset_ms"] for j in jumps] == [20_000, 40_000]
    # +40 s on the server's clock ends a 30 s lease long before 30 real seconds.
    assert kinds.index(("redis-1", "clock_jumped")) < kinds.index(("redis-1", "expired"))
    assert ("bob", "granted") in kinds
    assert result.verdict is not None and result.verdict["mutual_exclusion"] == "violated"


def test_two_runs_at_once_do_not_leak_faults_into_each_other() -> None:
    calm = parse(builtin_json("contention"))
    faulty_data = builtin_json("contention")
    faulty_data["steps"].insert(
        1, {"at_ms": 200, "node": "redis-1", "do": "clock_jump", "ms": 60_000}
    )
    faulty_data["expect"] = {"mutual_exclusion": "violated"}
    faulty = parse(faulty_data)
    results: dict[str, RunResult] = {}
    threads = [
        threading.Thread(target=lambda: results.__setitem__("calm", run(calm)[1])),
        threading.Thread(target=lambda: results.__setitem__("faulty", run(faulty)[1])),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert results["faulty"].mismatches == [], results["faulty"].verdict
    assert results["calm"].mismatches == [], results["calm"].verdict
    calm_servers = results["calm"].events[0]["servers"]
    faulty_servers = results["faulty"].events[0]["servers"]
    assert set(calm_servers.values()).isdisjoint(faulty_servers.values())


def test_a_run_leaves_no_process_or_registry_entry_behind() -> None:
    engine, result = run(builtin()["gc-pause-fenced"])
    assert result.mismatches == []
    pids = [c.proc.pid for c in lab_of(engine).clients.values() if c.proc]
    pids += [s.proc.pid for s in lab_of(engine).servers.servers.values() if s.proc]
    assert len(pids) == 4
    assert not [pid for pid in pids if procs.alive(pid)]
    assert lab_of(engine).servers.workdir and not any(
        e["workdir"] == lab_of(engine).servers.workdir for e in registry.entries()
    )


def test_a_missing_server_binary_fails_the_run_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("lockviz.lab.servers.redis.REDIS_BINARY", "redis-server-not-installed")
    _, result = run(builtin()["contention"])
    assert result.verdict is None
    assert result.error is not None and "apt-get install redis-server" in result.error
    assert result.events[-1]["kind"] == "run_failed"


def test_nothing_is_kept_after_the_runs_end() -> None:
    """A server's late notification (ZooKeeper's watcher asks whose delete it was, slowly on a
    loaded machine) once came after ``run_finished``: a lesson then told the run to an event
    past its end and never showed the verdict. The end is the last event, whatever comes."""
    heard: list[Event] = []
    engine, _ = run(scenario(), heard.append)
    assert engine.events[-1].kind == "run_finished"
    kept = len(engine.events)
    engine.record("redis-1", "expired", {"key": "lockviz:lock", "holder": "alice"})
    assert len(engine.events) == kept and heard[-1].kind == "run_finished"
