"""The engine's record: every story starts with ``run_started``, at its own clock."""

from __future__ import annotations

from lockviz.lab import events
from lockviz.lab.engine import RunEngine
from lockviz.lab.labs import LocalLab
from lockviz.scenarios.library import builtin

STARTED = {
    "title": "zk-happy",
    "backend": "zookeeper",
    "variant": None,
    "fencing": True,
    "ttl_ms": 2000,
    "clients": ["alice", "bob"],
    "nodes": ["zk"],
    "storage": "storage",
    "servers": {"zk": "127.0.0.1:1", "storage": "127.0.0.1:2"},
    "duration_ms": 3000,
    "lab": "embedded",
}


def test_a_session_told_before_the_run_started_is_told_right_after_it_at_its_start() -> None:
    """A ZooKeeper client's listener can hear its session connect while the lab still
    provisions, before the run's clock starts: that event once came first, with the raw
    monotonic clock as its time (25,094,822 ms in one run), stretching the whole diagram."""
    told: list[events.Event] = []
    engine = RunEngine(builtin()["zk-happy"], LocalLab(), told.append)
    engine.record("alice", "session", {"state": "CONNECTED", "server": "zk"})
    assert told == []  # held: the story has not started
    engine.record("lab", "run_started", STARTED)
    engine.record("alice", "request", {"to": "zk", "call": 1, "op": "acquire"})
    assert [(e.seq, e.kind) for e in told] == [(1, "run_started"), (2, "session"), (3, "request")]
    assert told[1].t_ms == told[0].t_ms  # at the start, not at a time from before it
    assert told[2].t_ms >= told[1].t_ms
