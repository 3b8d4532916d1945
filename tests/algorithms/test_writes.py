"""The stale-write rule one event at a time (algorithms.writes.WriteJudge) judges exactly as the
batch checker does, on every built-in's recorded run, and as the rule was written before it was
made incremental (:func:`as_it_was`, kept here as the reference). What it costs is measured
by bench/abuse.py (a 20,000-event import), not here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from algorithms import checker
from algorithms.writes import Write, WriteJudge, is_write_reply

RECORDED = sorted((Path(__file__).parents[1] / "browser" / "data" / "runs").glob("*.json"))


def events_of(path: Path) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = json.loads(path.read_text())["events"]
    return events


def as_it_was(events: list[dict[str, Any]]) -> list[Write]:
    """``checker.writes`` as it was written before (every write against every grant)."""
    ordered = sorted(events, key=lambda e: (float(e["t_ms"]), int(e.get("seq", 0))))
    locked = checker.lock_in_play(events)
    grants = [(float(e["t_ms"]), e["actor"]) for e in ordered if e["kind"] == "granted"]
    requests = {
        (e["actor"], e["call"]): e
        for e in ordered
        if e["kind"] == "request" and e.get("op") == "write"
    }
    replies = [e for e in ordered if is_write_reply(e)]
    made = {e.get("version"): e["actor"] for e in replies if e["accepted"] and "found" in e}
    judged = []
    for e in replies:
        client = e["actor"]
        request = requests.get((client, e["call"]), e)
        t_sent = float(request["t_ms"])
        own = [t for t, who in grants if who == client and t <= t_sent]
        since = own[-1] if own else float("-inf")
        rivals = [who for t, who in grants if who != client and since < t <= t_sent]
        read, found = request.get("read"), e.get("found")
        outdated = isinstance(read, int) and isinstance(found, int) and found != read
        stale = (locked and (not own or bool(rivals))) or outdated
        superseded = rivals[-1] if rivals and locked else None
        if superseded is None and outdated:
            superseded = made.get(e.get("found"))
        judged.append(
            Write(int(e["seq"]), client, e.get("token"), request.get("value"),
                  bool(e["accepted"]), stale, superseded)
        )  # fmt: skip
    return judged


def as_it_comes(events: list[dict[str, Any]]) -> list[Write]:
    """A narrator's way: one judge, fed the events in the order they were recorded."""
    judge = WriteJudge()
    return sorted((w for e in events if (w := judge.see(e)) is not None), key=lambda w: w.seq)


def test_every_recorded_run_is_there() -> None:
    assert len(RECORDED) >= 40


@pytest.mark.parametrize("path", RECORDED, ids=[p.stem for p in RECORDED])
def test_the_judge_as_events_come_equals_the_batch_checker(path: Path) -> None:
    events = events_of(path)
    batch = sorted(checker.writes(events), key=lambda w: w.seq)
    assert batch == sorted(as_it_was(events), key=lambda w: w.seq)
    assert as_it_comes(events) == batch
