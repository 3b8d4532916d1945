"""Publishing a run's events: serialised once, batched in order, on the real layer."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import subprocess
import sys
import threading
from typing import Any

import pytest

from lockviz.live import audience, broadcast
from lockviz.live.frames import Frame


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


def status(position: int) -> dict[str, Any]:
    """A run.status message as the app publishes it (the layer's feed checks each message)."""
    return {"type": "run.status", "status": "queued", "position": position}


@pytest.mark.live
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


@pytest.mark.live
def test_messages_sent_together_reach_each_group_in_order_in_one_round_trip(
    tmp_path: Any,
) -> None:
    """RunLayer.group_send_all: a burst for two groups, interleaved, in one pipeline on the
    app's own layer class; each group's viewers get exactly their messages, in order."""
    from lockviz.lab.servers.redis import RedisServer
    from lockviz.live.channel_layer import RunLayer

    server = RedisServer("layer-together", str(tmp_path))
    server.launch()
    server.wait_ready()
    url = f"redis://:{server.password}@127.0.0.1:{server.port}/0"

    async def scenario() -> tuple[list[int], list[int]]:
        layer = RunLayer(hosts=[url])
        listeners = audience.Audience(layer)
        one, two = Viewer(), Viewer()
        await listeners.join("run.one", one)
        await listeners.join("run.two", two)
        burst = [(f"run.{'one' if n % 3 else 'two'}", status(n)) for n in range(1, 31)]
        await layer.group_send_all(burst)
        assert await until(lambda: len(one.got) + len(two.got) == 30)
        listeners.leave("run.one", one)
        listeners.leave("run.two", two)
        await layer.flush()
        return [m["position"] for m in one.got], [m["position"] for m in two.got]

    try:
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            got = pool.submit(asyncio.run, scenario()).result(timeout=30)
    finally:
        server.stop()
    assert got == ([n for n in range(1, 31) if n % 3], [n for n in range(1, 31) if not n % 3])


class Together:
    """A layer that records what the publisher hands it at once; the first send waits until
    the test lets it go, as a round trip to Redis keeps the publisher busy."""

    def __init__(self, fail: bool = False) -> None:
        self.sends: list[list[tuple[str, int]]] = []
        self.fail = fail
        self.busy = concurrent.futures.Future[None]()
        self.go = concurrent.futures.Future[None]()

    async def group_send_all(self, sends: list[tuple[str, dict[str, Any]]]) -> None:
        self.sends.append([(group, message["seq"]) for group, message in sends])
        if len(self.sends) == 1:
            self.busy.set_result(None)
            await asyncio.wrap_future(self.go)
        if self.fail:
            raise ConnectionError("Redis is away")


def test_what_queues_while_the_publisher_is_busy_goes_out_together_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A burst published while a round trip is under way is sent as one, in the order it was
    published, and runs' groups keep their own messages."""
    layer = Together()
    monkeypatch.setattr(broadcast, "get_channel_layer", lambda: layer)
    publisher = broadcast._Publisher()
    event = broadcast.event_message
    publisher.put("run.a", event({"seq": 1}))
    layer.busy.result(timeout=10)
    for seq, group in [(2, "run.a"), (1, "run.b"), (3, "run.a"), (4, "run.a")]:
        publisher.put(group, event({"seq": seq}))
    layer.go.set_result(None)
    for _ in range(200):
        if len(layer.sends) == 2:
            break
        threading.Event().wait(0.05)
    assert layer.sends == [[("run.a", 1)], [("run.a", 2), ("run.b", 1), ("run.a", 3), ("run.a", 4)]]
    assert publisher.failures == 0


def test_a_failed_send_counts_every_message_it_carried(monkeypatch: pytest.MonkeyPatch) -> None:
    """Listeners resync when the publisher lost anything (lockviz.live.audience): all of a batch."""
    layer = Together(fail=True)
    monkeypatch.setattr(broadcast, "get_channel_layer", lambda: layer)
    publisher = broadcast._Publisher()
    publisher.put("run.a", broadcast.event_message({"seq": 1}))
    layer.busy.result(timeout=10)
    publisher.put("run.a", broadcast.event_message({"seq": 2}))
    publisher.put("run.a", broadcast.event_message({"seq": 3}))
    layer.go.set_result(None)
    for _ in range(200):
        if publisher.failures == 3:
            break
        threading.Event().wait(0.05)
    assert publisher.failures == 3 and len(layer.sends) == 2


def test_the_web_application_switches_threads_within_a_millisecond() -> None:
    """asgi.py (what Daphne loads under ``serve``) sets it; Python's default is 5 ms."""
    code = "import sys, lockviz.asgi; print(sys.getswitchinterval())"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "lockviz.settings"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout.split()[-1]) == broadcast.SWITCH_INTERVAL_S < 0.005
