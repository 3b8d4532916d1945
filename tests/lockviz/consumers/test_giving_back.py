"""Streams that always give back what they hold: a hostile message is answered with a sentence,
never a dead consumer, and whatever ends a stream (a close, a refusal, a crash) gives back its
address's stream, the run's watcher, the member's presence, its place in the audience and the
viewers gauge.

The app is wrapped as Daphne serves it: a close code a server may not send (autobahn takes
1000 and 3000-4999 only) raises in the consumer's ``close``, as it does under Daphne.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.sessions import SessionMiddlewareStack
from django.contrib.sessions.backends.db import SessionStore
from django.core.cache import cache
from django.test.utils import override_settings

from lockviz.consumers import arrivals
from lockviz.consumers import runs as run_stream
from lockviz.errors import TooMany
from lockviz.live.audience import audience
from lockviz.models import Room, Run
from lockviz.ops import counters
from lockviz.routing import websocket_urlpatterns
from lockviz.shares import sockets
from lockviz.teaching import members, rooms
from tests.communicator import PATIENT_S, WebsocketCommunicator
from tests.conftest import builtin_json

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]
HERE = "10.66.0.1"
_students = itertools.count()
Message = MutableMapping[str, Any]


def as_daphne(app: Any) -> Any:
    """``app`` with Daphne's refusal of a close code a server may not send."""

    async def served(scope: Message, receive: Callable[[], Awaitable[Message]], send: Any) -> None:
        async def checked(message: Message) -> None:
            code = message.get("code", 1000) if message["type"] == "websocket.close" else 1000
            if code != 1000 and not 3000 <= code <= 4999:  # autobahn's sendClose
                raise ValueError(f"invalid close code {code}")
            await send(message)

        await app(scope, receive, checked)

    return served


app = as_daphne(SessionMiddlewareStack(URLRouter(websocket_urlpatterns)))


def gauge(stream: str) -> float:
    return float(counters.VIEWERS.labels(stream)._value.get())


async def stream(path: str, session: str = "") -> WebsocketCommunicator:
    headers = [(b"cookie", f"sessionid={session}".encode())] if session else []
    ws = WebsocketCommunicator(app, path, headers=headers)
    ws.scope["client"] = (HERE, 50000)
    return ws


async def finished_run() -> Run:
    return await database_sync_to_async(Run.objects.create)(
        title="t", scenario=builtin_json("contention"), status=Run.Status.FINISHED
    )


def a_member(room: Room) -> str:
    """A session that joined ``room`` (its member token), as a student's browser has."""
    session = SessionStore()
    session["browser"] = f"student-{next(_students)}"
    session.create()
    members.join(room, str(session["browser"]), HERE, session)
    session.save()
    return str(session.session_key)


async def answer(ws: WebsocketCommunicator) -> dict[str, Any]:
    """What the stream says next (``{"closed": code}`` for a close); a consumer that died is
    what its test asserts against (``{"died": ...}``), not an error here."""
    try:
        output = await ws.receive_output()
    except Exception as exc:
        return {"died": repr(exc)}
    if output["type"] == "websocket.close":
        return {"closed": output.get("code")}
    return dict(json.loads(output["text"]))


async def test_infinity_deep_nesting_or_huge_numbers_are_answered_and_the_stream_goes_on() -> None:
    run = await finished_run()
    ws = await stream(f"/ws/runs/{run.pk}/")
    assert (await ws.connect())[0]
    assert json.loads(await ws.receive_from())["type"] == "status"
    for hostile, problem in [
        ('{"type": "resume", "after": Infinity}', "Infinity is not a finite number"),
        ('{"type": "resume", "after": 1e999}', "1e999 is not a finite number"),
        ("[" * 100_000 + "]" * 100_000, "195.3 KB is too big; the most is 4 KB"),
        ("[" * 2_000 + "]" * 2_000, "nested 2,000 deep; the most is 32"),
        ('{"type": "resume", "after": ' + "9" * 3000 + "}", "an integer of 3,000 digits"),
    ]:
        await ws.send_to(text_data=hostile)
        said = json.loads(await ws.receive_from())
        assert said["type"] == "error" and problem in said["message"], said
    await ws.send_to(text_data=json.dumps({"type": "hello"}))  # still there, still reading
    again = json.loads(await ws.receive_from())
    assert again["type"] == "error" and "the only one understood" in again["message"]
    await ws.disconnect()
    assert await database_sync_to_async(sockets.held)(HERE) == 0


async def test_a_room_stream_that_is_sent_too_much_closes_with_a_code_a_server_may_send() -> None:
    room = await database_sync_to_async(rooms.open_room)("teacher")
    student = await database_sync_to_async(a_member)(room)
    ws = await stream(f"/ws/rooms/{room.code}/", student)
    assert (await ws.connect())[0]
    assert json.loads(await ws.receive_from())["type"] == "room"
    assert await database_sync_to_async(rooms.present)(room) == 1
    await ws.send_to(text_data="x" * 4096)
    said = await answer(ws)
    assert said == {"closed": 4009}, said
    await ws.disconnect()
    await asyncio.sleep(0.1)
    assert await database_sync_to_async(rooms.present)(room) == 0
    assert await database_sync_to_async(sockets.held)(HERE) == 0


@override_settings(LOCKVIZ_SOCKETS_PER_ADDRESS=400)
async def test_450_hostile_streams_from_one_address_give_back_everything() -> None:
    """400 such connections once locked every stream of their address (a class's NAT) out
    for hours, and left a room "present" with nobody connected."""
    run = await finished_run()
    room = await database_sync_to_async(rooms.open_room)("teacher")
    students = [await database_sync_to_async(a_member)(room) for _ in range(10)]
    before = gauge("run"), gauge("room")
    hostile = [
        ('{"type": "resume", "after": Infinity}', f"/ws/runs/{run.pk}/", ""),
        ("[" * 100_000 + "]" * 100_000, f"/ws/runs/{run.pk}/", ""),
        ("x" * 4096, f"/ws/rooms/{room.code}/", ""),
    ]
    for i in range(450):
        text, path, session = hostile[i % 3]
        if path.startswith("/ws/rooms/"):
            session = students[i % len(students)]
        ws = await stream(path, session)
        with contextlib.suppress(Exception):
            await ws.connect(timeout=PATIENT_S)
            await ws.receive_from()
            await ws.send_to(text_data=text)
        await answer(ws)  # an error, a close, or (before) a dead consumer
        with contextlib.suppress(Exception):
            await ws.disconnect(timeout=PATIENT_S)

    async def counts() -> tuple[object, ...]:
        await database_sync_to_async(arrivals.flush_watchers)()  # counted in memory until now
        await database_sync_to_async(run.refresh_from_db)()
        return (
            await database_sync_to_async(sockets.held)(HERE), run.watchers,
            await database_sync_to_async(rooms.present)(room), gauge("run"), gauge("room"),
            len(audience()._viewers),
        )  # fmt: skip

    given_back = (0, 0, 0, *before, 0)
    for _ in range(100):  # what a stream gives back as it ends, on a loaded machine: soon
        if await counts() == given_back:
            break
        await asyncio.sleep(0.1)
    assert await counts() == given_back
    ordinary = await stream(f"/ws/runs/{run.pk}/")  # a student of that class: served
    assert (await ordinary.connect())[0]
    assert json.loads(await ordinary.receive_from())["type"] == "status"
    await ordinary.disconnect()
    assert await database_sync_to_async(sockets.held)(HERE) == 0


async def test_a_stream_that_dies_in_connect_gives_back_what_it_took(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bug (here: its status cannot be sent) kills the consumer after it took its share,
    counted itself a watcher, joined the audience and the gauge: all given back."""
    run = await finished_run()
    before = gauge("run")

    async def broken(self: object, status: str, position: int | None) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(run_stream.RunConsumer, "_send_status", broken)
    ws = await stream(f"/ws/runs/{run.pk}/")
    with contextlib.suppress(Exception):
        await ws.connect()
        await ws.receive_from()
    with contextlib.suppress(Exception):
        await ws.wait(timeout=5)
    assert await database_sync_to_async(sockets.held)(HERE) == 0
    await database_sync_to_async(arrivals.flush_watchers)()  # counted in memory until written
    await database_sync_to_async(run.refresh_from_db)()
    assert run.watchers == 0
    assert gauge("run") == before
    assert not audience()._viewers


@override_settings(LOCKVIZ_SOCKETS_PER_ADDRESS=1)
def test_a_refused_stream_does_not_renew_its_address_count() -> None:
    """Each refused connect once renewed the count's three hours: a script kept an address
    (a class's NAT) locked out for as long as it kept knocking."""
    sockets.take(HERE)
    cache.touch(sockets._key(HERE), 1)  # the count's time is running out (its process died)
    with pytest.raises(TooMany, match="LOCKVIZ_SOCKETS_PER_ADDRESS"):
        sockets.take(HERE)  # refused: no new lease of life for the count
    time.sleep(1.5)
    assert sockets.held(HERE) == 0
    sockets.take(HERE)  # and the address is served again
