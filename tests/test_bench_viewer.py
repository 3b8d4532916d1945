"""bench/fanout.py's viewers: one that reads its messages only once the run has ended keeps the
same record as one that reads each as it comes (the figures of both modes are comparable)."""

from __future__ import annotations

import json

from bench.fanout import Counting


def message(*events: dict[str, object]) -> bytes:
    frames = [{"type": "event", "event": e, "published_ns": 1000 + int(str(e["seq"]))}
              for e in events]  # fmt: skip
    one = frames[0] if len(frames) == 1 else {"type": "events", "frames": frames}
    return json.dumps(one).encode()


STREAM = [
    message({"seq": 1, "kind": "step"}),
    message({"seq": 2, "kind": "request"}, {"seq": 3, "kind": "reply"}),
    message({"seq": 3, "kind": "reply"}),  # a repeat
    message({"seq": 5, "kind": "note"}),  # a gap
    message({"seq": 6, "kind": "run_finished"}),
]


def test_reading_at_the_end_records_what_reading_as_it_comes_does() -> None:
    eager, lazy = Counting(heal=True), Counting(heal=False)
    eager.heal = False  # no resume asked: it has no connection (the lazy one never asks)
    for at, raw in enumerate(STREAM):
        eager.received(at, json.loads(raw))
        lazy.text(at, raw)
    assert lazy.arrivals == [] and len(lazy.kept) == len(STREAM)  # nothing read while it plays
    lazy.settle()
    assert lazy.arrivals == eager.arrivals
    assert [s for s, _, _ in lazy.arrivals] == [1, 2, 3, 3, 5, 6]
    assert (lazy.dups, lazy.gaps, lazy.finished) == (eager.dups, eager.gaps, eager.finished)
    assert (lazy.dups, lazy.gaps, lazy.finished) == (1, 1, True)
