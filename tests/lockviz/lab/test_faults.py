"""Faults on the live lab: links cut, reset and slowed by the proxy; client clocks skewed;
and after any run, nothing left behind."""

from __future__ import annotations

from typing import Any

import pytest

from lockviz.lab import procs, registry
from lockviz.lab.engine import RunEngine
from lockviz.lab.labs import LocalLab
from lockviz.lab.recording import RunResult
from tests.conftest import scenario
from tests.lockviz.lab import lab_of

pytestmark = pytest.mark.live


def run(**changes: Any) -> tuple[RunEngine, RunResult]:
    engine = RunEngine(scenario(**changes), LocalLab())
    return engine, engine.run()


def replies(result: RunResult, actor: str, op: str) -> list[dict[str, Any]]:
    return [
        e for e in result.events if e["actor"] == actor and e["kind"] == "reply" and e["op"] == op
    ]


def test_a_blackholed_link_times_out_and_heals_in_order() -> None:
    _, result = run(
        clients=["alice"],
        ttl_ms=5000,
        steps=[
            {"at_ms": 0, "client": "alice", "do": "acquire"},
            {"at_ms": 200, "do": "partition", "client": "alice", "nodes": ["redis-1"]},
            {"at_ms": 300, "client": "alice", "do": "extend"},
            {"at_ms": 1800, "do": "heal", "client": "alice"},
            {"at_ms": 2000, "client": "alice", "do": "extend"},
        ],
    )
    first, second = replies(result, "alice", "extend")
    assert first["ok"] is False and first["error"] == "no reply before the timeout"
    assert second["ok"] is True  # the link carries bytes again
    links = [(e["node"], e["mode"]) for e in result.events if e["kind"] == "link"]
    assert links == [("redis-1", "blackhole"), ("redis-1", "pass")]


def test_a_partition_is_per_link_bob_is_untouched() -> None:
    _, result = run(
        ttl_ms=5000,
        steps=[
            {
                "at_ms": 0,
                "do": "partition",
                "client": "alice",
                "nodes": ["redis-1"],
                "mode": "reset",
            },
            {"at_ms": 100, "client": "alice", "do": "acquire", "timeout_ms": 300},
            {"at_ms": 100, "client": "bob", "do": "acquire", "timeout_ms": 300},
        ],
    )
    alice = replies(result, "alice", "acquire")
    assert alice and all(not r["ok"] and "connection failed" in r["error"] for r in alice)
    assert [r["ok"] for r in replies(result, "bob", "acquire")] == [True]


def test_a_delayed_link_slows_each_round_trip_by_at_least_the_delay() -> None:
    _, result = run(
        clients=["alice"],
        steps=[
            {"at_ms": 0, "do": "delay", "client": "alice", "nodes": ["storage"], "ms": 400},
            {"at_ms": 100, "client": "alice", "do": "write", "value": "slow"},
        ],
    )
    request = next(e for e in result.events if e["kind"] == "request" and e["op"] == "write")
    reply = replies(result, "alice", "write")[0]
    assert reply["t_ms"] - request["t_ms"] >= 400  # the delay is a floor; load only adds to it


def test_a_slow_client_clock_believes_its_lease_lasts_longer() -> None:
    steps = [
        {"at_ms": 0, "client": "alice", "do": "acquire"},
        {"at_ms": 1600, "client": "bob", "do": "acquire", "timeout_ms": 1500},
        {"at_ms": 2200, "client": "bob", "do": "write", "value": "B"},
        {"at_ms": 2500, "client": "alice", "do": "write", "value": "A", "check_lease": True},
    ]
    _, honest = run(fencing=False, ttl_ms=1200, steps=steps)
    assert honest.verdict is not None and honest.verdict["stale_writes_accepted"] == 0
    assert any(e["kind"] == "lost" and e["actor"] == "alice" for e in honest.events)
    slow = [{"at_ms": 0, "do": "clock_rate", "client": "alice", "rate": 0.25}, *steps]
    _, fooled = run(fencing=False, ttl_ms=1200, steps=slow)
    # At a quarter speed, 2.5 real seconds look like 0.6 s: alice thinks her lease is fine.
    assert fooled.verdict is not None and fooled.verdict["stale_writes_accepted"] == 1
    assert [e["rate"] for e in fooled.events if e["kind"] == "clock_rate"] == [0.25]


def test_after_a_run_with_every_fault_nothing_is_left_behind() -> None:
    engine, result = run(
        ttl_ms=1000,
        steps=[
            {"at_ms": 0, "client": "alice", "do": "acquire"},
            {"at_ms": 50, "node": "redis-1", "do": "clock_jump", "ms": 30_000},
            {"at_ms": 60, "do": "clock_jump", "client": "bob", "ms": -5000},
            {"at_ms": 70, "do": "partition", "client": "bob", "nodes": ["redis-1", "storage"]},
            {"at_ms": 80, "do": "delay", "client": "alice", "nodes": ["storage"], "ms": 50},
            {"at_ms": 90, "client": "alice", "do": "pause", "ms": 300},
            {"at_ms": 100, "node": "storage", "do": "crash"},
        ],
    )
    assert result.error is None
    assert lab_of(engine).links.faulty() == []  # every link healed
    assert all(getattr(s, "offset_ms", 0) == 0 for s in lab_of(engine).servers.servers.values())
    pids = [c.proc.pid for c in lab_of(engine).clients.values() if c.proc]
    pids += [s.proc.pid for s in lab_of(engine).servers.servers.values() if s.proc]
    pids.append(lab_of(engine).links.proc.pid)  # type: ignore[union-attr]
    assert [pid for pid in pids if procs.alive(pid)] == []
    assert lab_of(engine).servers.workdir and not any(
        e["workdir"] == lab_of(engine).servers.workdir for e in registry.entries()
    )


def test_a_run_that_fails_midway_also_cleans_up() -> None:
    engine, result = run(
        steps=[
            {"at_ms": 0, "client": "alice", "do": "acquire"},
            {"at_ms": 100, "do": "partition", "client": "alice", "nodes": ["redis-1"]},
            {"at_ms": 200, "node": "redis-1", "do": "crash"},
            {"at_ms": 300, "node": "redis-1", "do": "restart"},
        ]
    )
    assert result.error is None or "redis-1" in result.error
    pids = [c.proc.pid for c in lab_of(engine).clients.values() if c.proc]
    pids.append(lab_of(engine).links.proc.pid)  # type: ignore[union-attr]
    assert [pid for pid in pids if procs.alive(pid)] == []
    assert lab_of(engine).links.faulty() == []
