"""A room's stream: a late joiner lands on the current moment; the presenter alone sees the
tally and who is present; a reveal reaches everyone.

On the app's real channel layer (channels_redis pub/sub on the app's own redis-server) and with
real sessions, as ``make run`` has them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.sessions import SessionMiddlewareStack
from channels.testing import WebsocketCommunicator
from django.test import Client

from lockviz.models import Member, Room
from lockviz.routing import websocket_urlpatterns
from lockviz.teaching import codes, rooms
from lockviz.teaching.rooms import State

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
