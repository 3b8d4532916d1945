"""Live streams held open per address: runs' and rooms' count together, a closed one gives its
place back, and a count that outlives its process is forgotten rather than kept for ever."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from django.core.cache import cache
from django.test.utils import override_settings

from lockviz.errors import TooMany
from lockviz.models import Run
from lockviz.routing import websocket_urlpatterns
from lockviz.shares import sockets
from lockviz.teaching import rooms
from tests.communicator import WebsocketCommunicator
from tests.conftest import builtin_json

app = URLRouter(websocket_urlpatterns)
HERE, ELSEWHERE = "10.55.0.1", "10.55.0.2"


async def opened(path: str, address: str) -> tuple[WebsocketCommunicator, dict[str, object]]:
    ws = WebsocketCommunicator(app, path)
    ws.scope["client"] = (address, 50000)
    assert (await ws.connect())[0]
    return ws, json.loads(await ws.receive_from())


@pytest.mark.django_db(transaction=True)
@override_settings(LOCKVIZ_SOCKETS_PER_ADDRESS=2)
async def test_run_and_room_streams_share_one_count_per_address() -> None:
    run = await database_sync_to_async(Run.objects.create)(
        title="t", scenario=builtin_json("contention"), status=Run.Status.FINISHED
    )
    room = await database_sync_to_async(rooms.open_room)("t")
    first, said = await opened(f"/ws/runs/{run.pk}/", HERE)
    assert said["type"] == "status"
    second, said = await opened(f"/ws/rooms/{room.code}/", HERE)
    assert said["type"] == "room"
    third, said = await opened(f"/ws/runs/{run.pk}/", HERE)
    assert said["type"] == "error" and "LOCKVIZ_SOCKETS_PER_ADDRESS" in str(said["message"])
    assert (await third.receive_output())["code"] == 4429
    other, said = await opened(f"/ws/runs/{run.pk}/", ELSEWHERE)  # another address: its own
    assert said["type"] == "status"
    await first.disconnect()
    again, said = await opened(f"/ws/runs/{run.pk}/", HERE)  # a place was given back
    assert said["type"] == "status"
    assert await database_sync_to_async(sockets.held)(HERE) == 2
    for ws in (second, other, again):
        await ws.disconnect()
    assert await database_sync_to_async(sockets.held)(HERE) == 0


@override_settings(LOCKVIZ_SOCKETS_PER_ADDRESS=2)
def test_a_forgotten_count_is_not_taken_below_zero() -> None:
    sockets.take(HERE)
    cache.delete(sockets._key(HERE))  # its time ran out (a process died holding it)
    sockets.give_back(HERE)  # the stream closes after all
    assert sockets.held(HERE) == 0
    sockets.take(HERE)
    sockets.take(HERE)
    with pytest.raises(TooMany):
        sockets.take(HERE)
