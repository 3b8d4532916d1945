"""Codes that cannot be walked: look-ups throttled per address, one answer for every code that
leads nowhere, and the room stream limited per address and in what it is sent."""

from __future__ import annotations

import json

import pytest
from channels.routing import URLRouter
from channels.sessions import SessionMiddlewareStack
from django.test import Client
from django.test.utils import override_settings

from lockviz.models import ROOM_ALPHABET, Room
from lockviz.routing import websocket_urlpatterns
from lockviz.teaching import codes, rooms
from tests.communicator import WebsocketCommunicator

app = SessionMiddlewareStack(URLRouter(websocket_urlpatterns))
GUESSER = "10.66.0.1"


def guesses(n: int) -> list[str]:
    """``n`` codes of the right shape that are no room's (this test's rooms are few)."""
    taken = set(Room.objects.values_list("code", flat=True))
    made = ("".join(ROOM_ALPHABET[(i // 23**k) % 23] for k in range(6)) for i in range(10 * n))
    return [code for code in made if code not in taken][:n]


@pytest.mark.django_db
@override_settings(LOCKVIZ_CODE_MISSES_PER_HOUR=100)
def test_300_code_guesses_from_one_address_are_refused_after_the_limit() -> None:
    real = rooms.open_room("the-teacher")
    guesser = Client(REMOTE_ADDR=GUESSER)
    answers = []
    for i, code in enumerate(guesses(300)):  # every way in, in turn
        if i % 2:
            answers.append(guesser.post("/join", {"code": code}).status_code)
        else:
            answers.append(guesser.get(f"/r/{code}").status_code)
    assert answers[:100] == [404] * 100
    assert set(answers[100:]) == {429}  # refused after the limit, every one
    refused = guesser.get(f"/r/{real.code}")  # the right code too: a refusal tells nothing
    assert refused.status_code == 429 and 1 <= int(refused["Retry-After"]) <= 3600
    assert "LOCKVIZ_CODE_MISSES_PER_HOUR" in refused.content.decode()
    assert Client(REMOTE_ADDR="10.66.0.2").get(f"/r/{real.code}").status_code == 200


@pytest.mark.django_db
def test_no_such_room_is_one_answer_everywhere() -> None:
    client = Client()
    by_link = client.get("/r/QQQQQQ").content.decode()
    by_form = client.post("/join", {"code": "qqqqqq"}).content.decode()
    sentence = codes.no_room("QQQQQQ")
    assert "QQQQQQ" in sentence and sentence in by_link and sentence in by_form
    assert len(rooms.open_room("t").code) == 6  # 23⁶ ≈ 148 M codes (docs/reliability.md)


async def connect(path: str = "/ws/rooms/QQQQQQ/", address: str = GUESSER) -> WebsocketCommunicator:
    ws = WebsocketCommunicator(app, path)
    ws.scope["client"] = (address, 40000)
    connected, _ = await ws.connect()
    assert connected
    return ws


@pytest.mark.django_db(transaction=True)
@override_settings(LOCKVIZ_SOCKETS_PER_ADDRESS=3, LOCKVIZ_CODE_MISSES_PER_HOUR=2)
async def test_the_room_stream_says_the_same_and_is_throttled_per_address() -> None:
    answers = []
    for _ in range(3):
        ws = await connect()
        answers.append((json.loads(await ws.receive_from())["message"], await ws.receive_output()))
    sentence = codes.no_room("QQQQQQ")
    for said, closed in answers[:2]:
        assert said == sentence and closed["code"] == 4404 and sentence.startswith(closed["reason"])
    assert "LOCKVIZ_CODE_MISSES_PER_HOUR" in answers[2][0] and answers[2][1]["code"] == 4429


@pytest.mark.django_db(transaction=True)
@override_settings(LOCKVIZ_SOCKETS_PER_ADDRESS=3)
async def test_the_room_stream_is_limited_in_connections_size_and_rate() -> None:
    from channels.db import database_sync_to_async

    room = await database_sync_to_async(rooms.open_room)("t")
    path = f"/ws/rooms/{room.code}/"
    held = [await connect(path) for _ in range(3)]
    for ws in held:
        assert json.loads(await ws.receive_from())["type"] == "room"
    fourth = await connect(path)
    assert "LOCKVIZ_SOCKETS_PER_ADDRESS" in json.loads(await fourth.receive_from())["message"]
    assert (await fourth.receive_output())["code"] == 4429
    await held[0].disconnect()  # one closes: a place for one more
    again = await connect(path)
    assert json.loads(await again.receive_from())["type"] == "room"
    await held[1].send_to(text_data="x" * 5000)
    assert (await held[1].receive_output())["code"] == 4009  # 1009 is not a server's to send
    for _ in range(11):
        await held[2].send_to(text_data="{}")
    kinds = []
    while (message := await held[2].receive_output())["type"] != "websocket.close":
        kinds.append(json.loads(message["text"])["type"])
    assert message["code"] == 4429 and kinds.count("error") == 11  # ten answers, then why
    await again.disconnect()
