"""Publishing a run's events: serialised once, batched in order, on the real layer."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from typing import Any

import pytest

from lockviz import audience, broadcast
from lockviz.frames import Frame


def test_an_event_is_serialised_once_into_the_frame_viewers_get() -> None:
    event = {"seq": 3, "t_ms": 1.5, "actor": "alice", "kind": "granted", "token": 2}
    message = broadcast.event_message(event)
    assert message["type"] == "run.event" and message["seq"] == 3
    frame = json.loads(message["text"])
    assert frame["type"] == "event" and frame["event"] == event and frame["published_ns"] > 0


def test_consecutive_events_travel_together_and_anything_else_alone() -> None:
    e = [broadcast.event_message({"seq": n, "kind": "note"}) for n in (1, 2, 3)]
    status = {"type": "run.status", "status": "finished"}
    parts = audience._runs_of_events([e[0], e[1], status, e[2]])
    assert parts == [[e[0], e[1]], [status], [e[2]]]
    batch = json.loads(audience.events_frame([e[0], e[1]]))
    assert [f["event"]["seq"] for f in batch["frames"]] == [1, 2]


class Viewer:
    def __init__(self) -> None:
        self.got: list[dict[str, Any]] = []

    def deliver_now(self, first: int, last: int, frame: Frame) -> str:
        return "careful"

    async def keep_up(self) -> None:
        return None

    async def deliver(self, message: dict[str, Any]) -> None:
        self.got.append(message)

    async def deliver_events(self, messages: list[dict[str, Any]], frame: Frame) -> None:
        self.got.extend(messages)


@pytest.mark.live
def test_a_published_frame_reaches_every_viewer_of_its_group_in_order() -> None:
    """On the app's own Redis pub/sub layer, from a plain thread, as runs publish."""

    async def scenario() -> list[list[int]]:
        viewers = [Viewer(), Viewer()]
        listeners = audience.audience()
        for viewer in viewers:
            await listeners.join("run.test-broadcast", viewer)
        for n in range(1, 21):
            broadcast.publish("test-broadcast", {"type": "run.event", "event": {"seq": n}})
        for _ in range(200):
            if all(len(v.got) == 20 for v in viewers):
                break
            await asyncio.sleep(0.05)
        for viewer in viewers:
            listeners.leave("run.test-broadcast", viewer)
        return [[m["seq"] for m in v.got] for v in viewers]

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # a loop of its own (see bodylimit)
        seen = pool.submit(asyncio.run, scenario()).result(timeout=30)
    assert seen == [list(range(1, 21))] * 2


class Resyncing(Viewer):
    def __init__(self) -> None:
        super().__init__()
        self.resynced = 0

    async def resync(self) -> None:
        self.resynced += 1


async def until(condition: Any, timeout_s: float = 20) -> bool:
    for _ in range(int(timeout_s / 0.05)):
        if condition():
            return True
        await asyncio.sleep(0.05)
    return False


@pytest.mark.live
def status(position: int) -> dict[str, Any]:
    """A run.status message as the app publishes it (the layer's feed checks each message)."""
    return {"type": "run.status", "status": "queued", "position": position}


def test_viewers_are_resynced_when_the_layers_redis_comes_back(tmp_path: Any) -> None:
    """The layer's redis-server killed and started again on its port: the group's subscription
    comes back by itself, its viewers are told to read back what they missed, live messages
    flow again; a viewer that joined while Redis was away is not left waiting for ever."""
    from channels_redis.pubsub import RedisPubSubChannelLayer

    from lockviz.lab.servers.redis import RedisServer

    server = RedisServer("layer-blip", str(tmp_path))
    server.launch()
    server.wait_ready()
    url = f"redis://:{server.password}@127.0.0.1:{server.port}/0"

    async def scenario() -> tuple[Resyncing, Resyncing, list[str]]:
        layer = RedisPubSubChannelLayer(hosts=[url])
        listeners = audience.Audience(layer)
        early, late = Resyncing(), Resyncing()
        await listeners.join("run.blip", early)
        await layer.group_send("run.blip", status(1))
        assert await until(lambda: len(early.got) == 1)
        server.kill()  # kill -9: every connection to the layer's Redis drops
        steps = ["killed"]
        started = asyncio.get_running_loop().time()
        await listeners.join("run.blip-late", late)  # cannot subscribe now: does not hang
        steps.append(
            f"late join returned after {asyncio.get_running_loop().time() - started:.1f} s"
        )
        await asyncio.sleep(audience.LOST_AFTER_S + 1)
        assert early.resynced == 0 and late.resynced == 0  # not while Redis is away
        server.launch()
        server.wait_ready()
        steps.append("restarted")
        assert await until(lambda: early.resynced >= 1 and late.resynced >= 1)
        await layer.group_send("run.blip", status(2))
        await layer.group_send("run.blip-late", status(3))
        assert await until(lambda: len(early.got) == 2 and len(late.got) == 1)
        listeners.leave("run.blip", early)
        listeners.leave("run.blip-late", late)
        await layer.flush()
        return early, late, steps

    try:
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            early, late, steps = pool.submit(asyncio.run, scenario()).result(timeout=60)
    finally:
        server.stop()
    assert [m["position"] for m in early.got] == [1, 2]
    assert [m["position"] for m in late.got] == [3]
    late_join = float(steps[1].split("after ")[1].split(" s")[0])
    assert late_join < audience.JOIN_WAIT_S + 12, steps  # it returns: a margin for a loaded machine
