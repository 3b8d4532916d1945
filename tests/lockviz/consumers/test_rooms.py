"""A room's stream: a late joiner lands on the current moment; the presenter alone sees the
tally and who is present; a reveal reaches everyone.

On the app's real channel layer (channels_redis pub/sub on the app's own redis-server) and with
real sessions, as ``make run`` has them.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.sessions import SessionMiddlewareStack
from django.test import Client

from lockviz.live import broadcast
from lockviz.models import Member, Room, Run
from lockviz.routing import websocket_urlpatterns
from lockviz.teaching import codes, control, rooms, shown
from lockviz.teaching.rooms import State
from tests.communicator import WebsocketCommunicator
from tests.lockviz.teaching.test_reveals import teachers_run

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]
app = SessionMiddlewareStack(URLRouter(websocket_urlpatterns))


def browser(client: Client) -> str:
    client.get("/join")  # a session, as any page gives one
    session = client.session
    session["browser"] = session.get("browser") or f"b-{id(client)}"
    session.save()
    return str(session["browser"])


async def connect(client: Client, code: str) -> WebsocketCommunicator:
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    ws = WebsocketCommunicator(app, f"/ws/rooms/{code}/", headers=[(b"cookie", cookie)])
    connected, _ = await ws.connect()
    assert connected
    return ws


async def next_of(ws: WebsocketCommunicator, kind: str) -> dict[str, Any]:
    while True:
        message = json.loads(await ws.receive_from(timeout=10))
        if message["type"] == kind:
            return message


async def kinds_for(ws: WebsocketCommunicator, seconds: float) -> set[str]:
    """The kinds of message ``ws`` gets within ``seconds``."""
    seen: set[str] = set()
    while not await ws.receive_nothing(timeout=seconds):
        seen.add(json.loads(await ws.receive_from())["type"])
    return seen


async def test_late_joiners_start_from_now_and_only_the_presenter_sees_the_tally() -> None:
    teacher, ada = Client(), Client()
    presenter = await database_sync_to_async(browser)(teacher)
    room = await database_sync_to_async(rooms.open_room)(presenter)
    for run in ("r1", "r2"):  # runs anyone may see (a room shows no run that is not there)
        await database_sync_to_async(Run.objects.create)(id=run, title=run, scenario={})
    state = State(view="replay", run="r1", at=12, title="GC pause")
    await database_sync_to_async(rooms.show)(room, state)
    poll = await database_sync_to_async(rooms.ask)(room, "Next?", ["Bob", "Alice"])
    await database_sync_to_async(ada.post)(f"/r/{room.code}")  # joins: a member token
    student = await database_sync_to_async(Member.objects.get)(room=room)

    lead = await connect(teacher, room.code)
    first = await next_of(lead, "room")
    assert first["presenter"] is True and first["tally"]["answered"] == 0

    follower = await connect(ada, room.code)
    now = await next_of(follower, "room")  # the current moment, at once
    assert now["state"]["at"] == 12 and now["state"]["view"] == "replay"
    assert now["presenter"] is False and now["poll"]["question"] == "Next?"
    assert "tally" not in now and "answer" not in now["poll"]
    assert (await next_of(lead, "present"))["present"] == 1

    await database_sync_to_async(rooms.vote)(poll, student, "Alice")
    tally = await next_of(lead, "tally")
    while tally["answered"] == 0:  # the tally sent when Ada arrived (present 1, answered 0)
        tally = await next_of(lead, "tally")
    assert (
        tally["present"] == 1
        and tally["counts"] == {"Bob": 0, "Alice": 1}
        and tally["answered"] == 1
    )
    assert not {"tally", "present"} & await kinds_for(follower, 0.5)  # never the tally

    await database_sync_to_async(rooms.show)(room, State(view="run", run="r2", title="live"))
    assert (await next_of(follower, "state"))["state"]["run"] == "r2"
    await database_sync_to_async(rooms.reveal)(poll)
    revealed = (await next_of(follower, "poll"))["poll"]
    assert revealed["state"] == "revealed" and revealed["counts"] == {"Bob": 0, "Alice": 1}

    await follower.disconnect()
    assert (await next_of(lead, "present"))["present"] == 0
    await lead.disconnect()


async def test_an_unknown_room_says_so_and_closes() -> None:
    ws = WebsocketCommunicator(app, "/ws/rooms/QQQQQ/")
    await ws.connect()
    assert json.loads(await ws.receive_from()) == {
        "type": "error",
        "message": codes.no_room("QQQQQ"),
    }
    assert await database_sync_to_async(Room.objects.count)() == 0


async def test_a_follower_gets_a_lessons_events_only_up_to_the_presenters_position() -> None:
    """Nothing while the lesson's run plays (the telling has not begun), then each event as the
    presenter reaches it, without the answer of a checkpoint not revealed; a step back is
    followed; and the run's own stream gives the student no answer either."""
    teacher, ada = Client(), Client()
    presenter = await database_sync_to_async(browser)(teacher)
    room = await database_sync_to_async(rooms.open_room)(presenter)
    run = await database_sync_to_async(teachers_run)(teacher)
    await database_sync_to_async(browser)(ada)
    await database_sync_to_async(ada.post)(f"/r/{room.code}")  # joins: a member token

    def at(seq: int) -> State:
        return State(view="lesson", run=run.pk, lesson="gc-pause-fenced", at=seq, title="GC")

    await database_sync_to_async(rooms.show)(room, at(0))
    follower = await connect(ada, room.code)
    assert (await next_of(follower, "room"))["state"]["at"] == 0
    assert "events" not in await kinds_for(follower, 0.5)  # the run plays: nothing of it

    await database_sync_to_async(rooms.show)(room, at(9))  # step 3 (a checkpoint) is seq 9
    got = await next_of(follower, "events")
    assert [e["seq"] for e in got["events"]] == list(range(1, 10)) and got["upto"] == 9
    checkpoint = got["events"][-1]
    assert checkpoint["kind"] == "step" and checkpoint["index"] == 2 and "say" not in checkpoint
    assert "Bob is granted" not in json.dumps(got)  # its narration, which tells the answer
    # The run is over: where it ends comes too, so the student's time axis reaches as far as the
    # projector's, which holds every event (a run that went past its schedule draws longer).
    ends = await database_sync_to_async(lambda: [e.t_ms for e in run.events.all()])()
    assert got["end_ms"] == max(ends) and max(ends) > got["events"][-1]["t_ms"]

    await database_sync_to_async(rooms.show)(room, at(12))
    assert [e["seq"] for e in (await next_of(follower, "events"))["events"]] == [10, 11, 12]
    await database_sync_to_async(rooms.show)(room, at(5))  # the presenter steps back
    back = await next_of(follower, "events")
    assert back["upto"] == 5 and back["events"] == [] and back["end_ms"] == max(ends)
    await database_sync_to_async(rooms.show)(room, at(7))
    assert [e["seq"] for e in (await next_of(follower, "events"))["events"]] == [6, 7]
    await follower.disconnect()

    cookie = f"sessionid={ada.cookies['sessionid'].value}".encode()
    stream = WebsocketCommunicator(app, f"/ws/runs/{run.pk}/", headers=[(b"cookie", cookie)])
    assert (await stream.connect())[0]
    steps = []
    while not await stream.receive_nothing(timeout=1):
        message = json.loads(await stream.receive_from())
        frames = message["frames"] if message["type"] == "events" else [message]
        steps += [
            f["event"] for f in frames if f["type"] == "event" and f["event"]["kind"] == "step"
        ]
    await stream.disconnect()
    checkpoints = [s for s in steps if s["index"] in (2, 5)]  # the lesson's two questions
    assert len(checkpoints) == 2 and not any("say" in s for s in checkpoints)
    assert any("say" in s for s in steps)  # the other steps keep their narration


async def test_a_closed_room_tells_its_followers_and_a_removed_member_alone_hears_it() -> None:
    teacher, ada, bob = Client(), Client(), Client()
    presenter = await database_sync_to_async(browser)(teacher)
    room = await database_sync_to_async(rooms.open_room)(presenter)
    ids = [await database_sync_to_async(browser)(client) for client in (ada, bob)]
    for client in (ada, bob):
        await database_sync_to_async(client.post)(f"/r/{room.code}")  # joins: a member token
    lead, ada_ws, bob_ws = [await connect(c, room.code) for c in (teacher, ada, bob)]
    for ws in (lead, ada_ws, bob_ws):
        await next_of(ws, "room")
    member = await database_sync_to_async(Member.objects.get)(room=room, browser=ids[0])

    await database_sync_to_async(control.remove)(room, member.pk)
    assert (await next_of(ada_ws, "removed"))["member"] == member.pk
    assert "removed" not in await kinds_for(bob_ws, 0.5)  # nobody else hears of it
    again = await connect(ada, room.code)  # and back: the one answer of a code for nobody
    no_room = {"type": "error", "message": codes.no_room(room.code)}
    assert json.loads(await again.receive_from(timeout=5)) == no_room

    await database_sync_to_async(control.close)(room)
    assert (await next_of(bob_ws, "closed")) == {"type": "closed"}
    assert (await bob_ws.receive_output(timeout=5))["type"] == "websocket.close"
    late = await connect(bob, room.code)
    assert json.loads(await late.receive_from(timeout=5)) == no_room
    assert (await next_of(lead, "closed")) == {"type": "closed"}  # the presenter stays connected
    await lead.disconnect()


async def test_followers_stay_on_the_newest_report_whatever_order_reports_and_frames_come() -> None:
    """An older report saved after a newer one is neither saved nor broadcast; two requests'
    broadcasts that cross on the layer reach no follower older after newer
    (lockviz.teaching.shown)."""
    teacher, ada = Client(), Client()
    presenter = await database_sync_to_async(browser)(teacher)
    room = await database_sync_to_async(rooms.open_room)(presenter)
    await database_sync_to_async(Run.objects.create)(id="r1", title="r1", scenario={})
    await database_sync_to_async(ada.post)(f"/r/{room.code}")
    follower = await connect(ada, room.code)
    await next_of(follower, "room")

    def lesson_at(n: int) -> State:
        return State(view="lesson", run="r1", at=n, title="GC pause")

    start = shown.now_ms()
    newer = await database_sync_to_async(rooms.show)(room, lesson_at(13), start + 300)
    older = await database_sync_to_async(rooms.show)(room, lesson_at(9), start)  # held up
    assert newer.saved and not older.saved
    assert (await next_of(follower, "state"))["state"]["at"] == 13
    for n, order in ((20, start + 600), (15, start + 500)):  # published by two threads, crossed
        frame = {"type": "state", "state": asdict(lesson_at(n)), "order": order}
        broadcast.publish_frame(rooms.group(room), frame)
    assert (await next_of(follower, "state"))["state"]["at"] == 20
    assert "state" not in await kinds_for(follower, 1.0)
    await follower.disconnect()
    late = await connect(ada, room.code)  # a late joiner starts from the newest saved
    assert (await next_of(late, "room"))["state"]["at"] == 13
    await late.disconnect()
