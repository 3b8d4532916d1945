"""Honest polls: only members who joined answer, once each, while present; the tally never
says more answered than are present; members and answers are limited per address."""

from __future__ import annotations

import json
import re

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.sessions import SessionMiddlewareStack
from django.core import signing
from django.test import Client
from django.test.utils import override_settings

from lockviz.models import Member, Poll, Presence, Room, Vote
from lockviz.routing import websocket_urlpatterns
from lockviz.teaching import members, rooms
from tests.communicator import WebsocketCommunicator
from tests.lockviz.consumers.test_rooms import browser
from tests.lockviz.teaching.test_rooms import join, open_room

NAT = "10.44.0.1"


def asked(teacher: Client, room: Room) -> tuple[Poll, str]:
    teacher.post(f"/rooms/{room.code}/polls", {"question": "Next?", "choices": "Bob\nAlice"})
    poll = Poll.objects.get(room=room)
    return poll, f"/rooms/{room.code}/polls/{poll.pk}/vote"


@pytest.mark.django_db
def test_ten_fresh_cookie_jars_that_never_joined_are_refused_and_the_tally_is_unchanged() -> None:
    teacher, ada = Client(), Client(REMOTE_ADDR=NAT)
    room = open_room(teacher)
    poll, vote = asked(teacher, room)
    join(ada, room)
    assert ada.post(vote, {"choice": "Bob"}).status_code == 200
    before = rooms.tally(poll)
    refusals = [Client(REMOTE_ADDR=NAT).post(vote, {"choice": "Alice"}) for _ in range(10)]
    assert [r.status_code for r in refusals] == [403] * 10
    assert all("join room" in r.content.decode() for r in refusals)
    assert rooms.tally(poll) == before and before["counts"] == {"Bob": 1, "Alice": 0}
    assert Member.objects.filter(room=room).count() == 1  # answering never made a member


@pytest.mark.django_db
def test_a_member_answers_once_and_only_while_present() -> None:
    teacher, ada, bob = Client(), Client(), Client()
    room = open_room(teacher)
    poll, vote = asked(teacher, room)
    ada_member = join(ada, room)
    bob.post(f"/r/{room.code}")  # joined, but its class page is not open
    gone = bob.post(vote, {"choice": "Bob"})
    assert gone.status_code == 400 and "open the class's page" in gone.content.decode()
    ada.post(vote, {"choice": "Bob"})
    ada.post(vote, {"choice": "Alice"})  # changed her mind: still one answer
    assert Vote.objects.filter(poll=poll).count() == 1
    assert rooms.tally(poll)["answered"] == 1 == rooms.tally(poll)["present"]
    Presence.objects.filter(member=ada_member).delete()  # she closed the page
    left = rooms.tally(poll)
    assert left["answered"] == 0 == left["present"]  # answered never exceeds present
    assert (
        left["counts"] == {"Bob": 0, "Alice": 1} and left["note"] == "1 more answered and then left"
    )


@pytest.mark.django_db
def test_a_member_token_is_for_its_room_and_cannot_be_made_up() -> None:
    teacher, ada, mallory = Client(), Client(), Client()
    room, other = open_room(teacher), open_room(teacher)
    _, vote = asked(teacher, room)
    member = join(ada, other)  # a member of the other room only
    session = mallory.session
    session["browser"] = member.browser
    session[members.SESSION_KEY] = {
        room.code: signing.dumps({"room": room.code, "member": member.pk}, salt="not-ours"),
    }
    session.save()
    assert mallory.post(vote, {"choice": "Bob"}).status_code == 403
    assert ada.post(vote, {"choice": "Bob"}).status_code == 403  # joined elsewhere


@pytest.mark.django_db
@override_settings(LOCKVIZ_MEMBERS_PER_ADDRESS=3, LOCKVIZ_VOTES_PER_MINUTE=2)
def test_members_and_answers_are_limited_per_address_in_a_room() -> None:
    teacher = Client()
    room = open_room(teacher)
    _, vote = asked(teacher, room)
    jars = [Client(REMOTE_ADDR=NAT) for _ in range(4)]
    assert [j.post(f"/r/{room.code}").status_code for j in jars] == [302, 302, 302, 429]
    assert "LOCKVIZ_MEMBERS_PER_ADDRESS" in jars[3].post(f"/r/{room.code}").content.decode()
    for member in Member.objects.filter(room=room):
        rooms.arrived(room, member)
    answers = [j.post(vote, {"choice": "Bob"}) for j in jars[:3]]
    assert [a.status_code for a in answers] == [200, 200, 429] and answers[2]["Retry-After"]
    assert Client(REMOTE_ADDR="10.44.0.2").post(f"/r/{room.code}").status_code == 302


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
async def test_a_stream_of_a_browser_that_never_joined_is_not_present() -> None:
    app = SessionMiddlewareStack(URLRouter(websocket_urlpatterns))
    teacher, stranger = Client(), Client()
    room = await database_sync_to_async(open_room)(teacher)
    await database_sync_to_async(browser)(stranger)  # a session, never a member
    await database_sync_to_async(stranger.get)(f"/rooms/{room.code}/follow/")  # without joining
    cookie = f"sessionid={stranger.cookies['sessionid'].value}".encode()
    ws = WebsocketCommunicator(app, f"/ws/rooms/{room.code}/", headers=[(b"cookie", cookie)])
    assert (await ws.connect())[0]
    assert json.loads(await ws.receive_from())["type"] == "room"
    assert await database_sync_to_async(rooms.present)(room) == 0
    await ws.disconnect()


@pytest.mark.django_db
def test_the_presenter_sees_many_members_from_one_address_and_removes_them() -> None:
    """12 scripted members from one address outvoted a real student 12 to 1."""
    teacher = Client()
    room = open_room(teacher)
    _, vote = asked(teacher, room)
    script = [Client(REMOTE_ADDR="10.45.0.1") for _ in range(12)]
    for jar in script:
        assert jar.post(f"/r/{room.code}").status_code == 302
    ada = Client(REMOTE_ADDR="10.45.0.2")
    join(ada, room, "Ada")
    page = teacher.get(f"/rooms/{room.code}/").text
    assert "12 members from one address" in page and "10.45.0.1" not in page
    mark = re.search(r"/rooms/\w+/members/from/(\w+)/remove", page)
    assert mark is not None
    assert Client().post(f"/rooms/{room.code}/members/from/{mark[1]}/remove").status_code == 403
    assert teacher.post(f"/rooms/{room.code}/members/from/{mark[1]}/remove").status_code == 302
    assert Member.objects.filter(room=room, removed=True).count() == 12
    assert not Member.objects.get(room=room, browser=ada.session["browser"]).removed
    assert "members from one address" not in teacher.get(f"/rooms/{room.code}/").text
    assert script[0].post(vote, {"choice": "Bob"}).status_code in (403, 404)


@pytest.mark.django_db
def test_the_presenter_lowers_the_members_per_address() -> None:
    teacher = Client()
    room = open_room(teacher)
    cap = f"/rooms/{room.code}/members/cap"
    assert Client().post(cap, {"members_per_address": "2"}).status_code == 403
    assert teacher.post(cap, {"members_per_address": "0"}).status_code == 400
    assert teacher.post(cap, {"members_per_address": "2"}).status_code == 302
    jars = [Client(REMOTE_ADDR="10.46.0.1") for _ in range(3)]
    answers = [j.post(f"/r/{room.code}") for j in jars]
    assert [a.status_code for a in answers] == [302, 302, 429]
    assert "2 members from this address" in answers[2].text
