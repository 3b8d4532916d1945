"""Publishing a run's events: serialised once, batched in order, on the real layer."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from typing import Any

import pytest

from lockviz import broadcast


def test_an_event_is_serialised_once_into_the_frame_viewers_get() -> None:
    event = {"seq": 3, "t_ms": 1.5, "actor": "alice", "kind": "granted", "token": 2}
    message = broadcast.event_message(event)
    assert message["type"] == "run.event" and message["seq"] == 3
    frame = json.loads(message["text"])
    assert frame["type"] == "event" and frame["event"] == event and frame["published_ns"] > 0


def test_consecutive_events_travel_together_and_anything_else_alone() -> None:
    e = [broadcast.event_message({"seq": n, "kind": "note"}) for n in (1, 2, 3)]
    status = {"type": "run.status", "status": "finished"}
    parts = broadcast._runs_of_events([e[0], e[1], status, e[2]])
    assert parts == [[e[0], e[1]], [status], [e[2]]]
    batch = json.loads(broadcast.events_frame([e[0], e[1]]))
    assert [f["event"]["seq"] for f in batch["frames"]] == [1, 2]


class Viewer:
    def __init__(self) -> None:
        self.got: list[dict[str, Any]] = []

    async def deliver(self, message: dict[str, Any]) -> None:
        self.got.append(message)

    async def deliver_events(self, messages: list[dict[str, Any]], text: str) -> None:
        self.got.extend(messages)


@pytest.mark.live
def test_a_published_frame_reaches_every_viewer_of_its_group_in_order() -> None:
    """On the app's own Redis pub/sub layer, from a plain thread, as runs publish."""

    async def scenario() -> list[list[int]]:
        viewers = [Viewer(), Viewer()]
        audience = broadcast.audience()
        for viewer in viewers:
            await audience.join("run.test-broadcast", viewer)
        for n in range(1, 21):
            broadcast.publish("test-broadcast", {"type": "run.event", "event": {"seq": n}})
        for _ in range(200):
            if all(len(v.got) == 20 for v in viewers):
                break
            await asyncio.sleep(0.05)
        for viewer in viewers:
            audience.leave("run.test-broadcast", viewer)
        return [[m["seq"] for m in v.got] for v in viewers]

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # a loop of its own (see bodylimit)
        seen = pool.submit(asyncio.run, scenario()).result(timeout=30)
    assert seen == [list(range(1, 21))] * 2
