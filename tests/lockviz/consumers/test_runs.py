"""The WebSocket stream of a live run: every event once, in order, also across a reconnect.

These run on the app's real channel layer, as ``make run`` has it: channels_redis' Redis pub/sub
on a redis-server the app starts for itself (lockviz.live.channel_layer), published to from the
run's threads (lockviz.live.broadcast).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter

from lockviz.consumers import runs
from lockviz.live import broadcast
from lockviz.models import Run, RunEvent
from lockviz.routing import websocket_urlpatterns
from lockviz.runs import launcher, recorder
from lockviz.scenarios.library import builtin
from tests.communicator import WebsocketCommunicator
from tests.lockviz.teaching.test_forks import stored

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]
app = URLRouter(websocket_urlpatterns)
FINISHED = {"type": "status", "status": "finished", "position": None}


async def events_until_finished(
    ws: WebsocketCommunicator, stop_after: int | None = None
) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = []
    while True:
        message = json.loads(await ws.receive_from(timeout=30))
        for frame in message["frames"] if message["type"] == "events" else [message]:
            if frame["type"] != "event":
                continue
            got.append(frame["event"])
            if frame["event"]["kind"] in ("run_finished", "run_failed"):
                return got
            if stop_after is not None and len(got) >= stop_after:
                return got


def frames(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The event messages a stream message carries: itself, or a batch's frames."""
    found: list[dict[str, Any]] = message["frames"] if message["type"] == "events" else [message]
    return found


async def start(slug: str) -> Run:
    scenario = builtin()[slug]
    run = await database_sync_to_async(launcher.create_run)(scenario, slug)
    recorder.start(run, scenario)
    return run


async def test_a_viewer_sees_the_whole_run_live() -> None:
    run = await start("gc-pause-fenced")
    ws = WebsocketCommunicator(app, f"/ws/runs/{run.pk}/")
    connected, _ = await ws.connect()
    assert connected
    events = await events_until_finished(ws)
    await ws.disconnect()
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    rejected = any(e["kind"] == "reply" and e.get("accepted") is False for e in events)
    fell_behind = any(e["kind"] == "schedule_shifted" and not e["kept"] for e in events)
    assert rejected or fell_behind  # the story's rejected write, or the run says it could not
    stored = await database_sync_to_async(run.events_after)(0)
    assert stored == [{k: v for k, v in e.items() if k != "said"} for e in events]
    assert all(e["said"]["text"] for e in events)  # each with the narrator's words


async def test_a_viewer_that_reconnects_resumes_without_loss_or_repeat() -> None:
    run = await start("contention")
    first = WebsocketCommunicator(app, f"/ws/runs/{run.pk}/")
    await first.connect()
    head = await events_until_finished(first, stop_after=5)
    await first.disconnect()  # the viewer's network drops mid-run
    second = WebsocketCommunicator(app, f"/ws/runs/{run.pk}/?after={head[-1]['seq']}")
    await second.connect()
    tail = await events_until_finished(second)
    await second.disconnect()
    seqs = [e["seq"] for e in head + tail]
    assert seqs == list(range(1, len(seqs) + 1))
    assert (head + tail)[-1]["kind"] == "run_finished"


async def test_resume_message_resends_what_follows() -> None:
    run = await start("contention")
    ws = WebsocketCommunicator(app, f"/ws/runs/{run.pk}/")
    await ws.connect()
    everything = await events_until_finished(ws)
    while json.loads(await ws.receive_from(timeout=10)) != FINISHED:  # the stream is quiet now
        pass
    await ws.send_to(text_data=json.dumps({"type": "resume", "after": len(everything) - 2}))
    again = frames(json.loads(await ws.receive_from(timeout=5)))  # one frame, for one read
    await ws.disconnect()
    assert [m["event"]["seq"] for m in again] == [len(everything) - 1, len(everything)]


async def test_a_resume_storm_is_answered_once_and_refused_with_a_reason() -> None:
    run = await start("contention")
    ws = WebsocketCommunicator(app, f"/ws/runs/{run.pk}/")
    await ws.connect()
    everything = await events_until_finished(ws)
    while json.loads(await ws.receive_from(timeout=10)) != FINISHED:
        pass
    for _ in range(20):  # twenty "send me everything" at once
        await ws.send_to(text_data=json.dumps({"type": "resume", "after": 0}))
    replies = []
    while not await ws.receive_nothing(timeout=1):
        replies.append(json.loads(await ws.receive_from()))
    events = [f for m in replies for f in frames(m) if f["type"] == "event"]
    refused = [m for m in replies if m["type"] == "error"]
    assert [m["event"]["seq"] for m in events] == [e["seq"] for e in everything]  # once
    assert len(refused) == 19
    assert refused[0]["message"] == "resume at most once every 0.5 s; wait and send it again"
    await ws.send_to(text_data=json.dumps({"type": "resume", "after": len(everything) - 1}))
    last = json.loads(await ws.receive_from(timeout=5))  # a later resume is answered again
    assert last["event"]["seq"] == len(everything)
    await ws.disconnect()


async def test_bad_messages_get_a_clear_error_and_the_stream_goes_on() -> None:
    run = await start("contention")
    ws = WebsocketCommunicator(app, f"/ws/runs/{run.pk}/?after=banana")
    await ws.connect()
    first = json.loads(await ws.receive_from(timeout=5))
    assert first == {"type": "error", "message": "after must be a whole number ≥ 0, not 'banana'"}
    for bad, expected in [
        ("not json", "message: not valid JSON"),
        (json.dumps({"type": "dance"}), "unknown message"),
        (json.dumps({"type": "resume", "after": -3}), "after must be a whole number ≥ 0, not -3"),
    ]:
        await ws.send_to(text_data=bad)
        while True:
            message = json.loads(await ws.receive_from(timeout=30))
            if message["type"] == "error":
                assert message["message"].startswith(expected)
                break
    events = await events_until_finished(ws)  # still streaming, from where it was
    await ws.disconnect()
    assert events[-1]["kind"] == "run_finished"


async def test_an_unknown_run_is_refused_by_name() -> None:
    ws = WebsocketCommunicator(app, "/ws/runs/nope/")
    await ws.connect()
    assert json.loads(await ws.receive_from()) == {
        "type": "error",
        "message": "there is no run 'nope'",
    }
    await ws.disconnect()


async def test_a_live_message_lost_on_the_way_is_read_back_from_the_database() -> None:
    run = await database_sync_to_async(Run.objects.create)(
        title="lossy", scenario={}, status=Run.Status.RUNNING
    )
    ws = WebsocketCommunicator(app, f"/ws/runs/{run.pk}/")
    await ws.connect()
    assert json.loads(await ws.receive_from(timeout=5))["type"] == "status"  # joined the group
    events = [{"seq": n, "t_ms": n * 10.0, "actor": "lab", "kind": "note"} for n in (1, 2, 3, 4)]
    for event in events:
        await database_sync_to_async(RunEvent.objects.create)(
            run=run, seq=event["seq"], t_ms=event["t_ms"], actor="lab", kind="note", data=event
        )
    for event in events:
        if event["seq"] != 2:  # the layer loses seq 2
            broadcast.publish(run.pk, {"type": "run.event", "event": event})
    got = await events_until_finished(ws, stop_after=len(events))
    assert await ws.receive_nothing(timeout=0.5)
    await ws.disconnect()
    unsaid = [{k: v for k, v in e.items() if k != "said"} for e in got]
    assert unsaid == events  # 1, then 2 to 4 read back, and the live 3 and 4 not sent again


async def test_a_finished_runs_catch_up_and_resumes_read_its_stored_words(
    narrations: list[int],
) -> None:
    run = await database_sync_to_async(stored)()
    await database_sync_to_async(run.said_after)(0)  # read once: its words are kept from now
    said = narrations[0]
    ws = WebsocketCommunicator(app, f"/ws/runs/{run.pk}/")
    await ws.connect()
    first = await events_until_finished(ws)
    await ws.send_to(text_data=json.dumps({"type": "resume", "after": 20}))
    again = frames(json.loads(await ws.receive_from(timeout=5)))
    await ws.disconnect()
    assert [e["seq"] for e in first] == list(range(1, 30))
    assert [m["event"]["seq"] for m in again] == list(range(21, 30))
    assert first[23]["said"]["text"] == "alice ← storage: write REJECTED (1 < 2)"
    assert narrations[0] == said  # a connect and a resume: words read, not said again


async def test_resumes_are_limited_per_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runs, "RESUME_EVERY_S", 0.0)  # the budget, not the pace
    run = await database_sync_to_async(stored)()
    ws = WebsocketCommunicator(app, f"/ws/runs/{run.pk}/?after=29")
    await ws.connect()
    assert json.loads(await ws.receive_from(timeout=5))["type"] == "status"
    answered = []
    for _ in range(20):  # RESUMES
        await ws.send_to(text_data=json.dumps({"type": "resume", "after": 28}))
        answered.append(json.loads(await ws.receive_from(timeout=5)))
    await ws.send_to(text_data=json.dumps({"type": "resume", "after": 0}))
    refused = json.loads(await ws.receive_from(timeout=5))
    assert await ws.receive_nothing(timeout=1)  # nothing is sent again for the 21st
    await ws.disconnect()
    assert [m["event"]["seq"] for m in answered] == [29] * 20
    assert refused == {
        "type": "error",
        "message": "this connection has resumed 20 times, the most it may; reconnect with "
        "?after=N to go on",
    }


async def test_live_events_are_framed_once_for_every_viewer_under_daphne() -> None:
    """Where the server gives the scope a writer of prepared frames (Daphne, lockviz.live.frames),
    a live event reaches every viewer as the one framing, and each viewer still gets every
    event once, in order: the catch-up as text, then live ones framed."""
    run = await start("gc-pause-fenced")
    wrote: list[list[Any]] = [[], []]
    viewers = []
    for got in wrote:
        ws = WebsocketCommunicator(app, f"/ws/runs/{run.pk}/")
        ws.scope[runs.frames.PREPARED] = got.append  # before the app copies the scope
        assert (await ws.connect())[0]
        viewers.append(ws)
    while (await database_sync_to_async(Run.objects.get)(pk=run.pk)).status in (
        "queued",
        "running",
    ):
        await asyncio.sleep(0.2)
    stored = [e["seq"] for e in await database_sync_to_async(run.events_after)(0)]
    for ws, got in zip(viewers, wrote, strict=True):
        seen: list[int] = []
        while not await ws.receive_nothing(timeout=0.5):
            seen += [
                f["event"]["seq"]
                for f in frames(json.loads(await ws.receive_from()))
                if f["type"] == "event"
            ]
        for prepared in got:
            seen += [f["event"]["seq"] for f in frames(json.loads(prepared.payload))]
        await ws.disconnect()
        assert seen == stored, "a viewer missed, repeated or reordered an event"
    shared = {id(p) for p in wrote[0]} & {id(p) for p in wrote[1]}
    assert shared, "no live event reached both viewers as one framing"
