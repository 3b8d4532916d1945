"""Presenters inside the shares: presenting a room lifts no share by itself.

A room needs no account, so "Teach a class" once made any browser a presenter: its runs were
charged only the browser's cap, never refused as busy, put ahead of the queue, every other run
niced. Now a presenter's standing (priority, an allowance of its own) needs a room that is open,
not idle, has members present, and was opened by a logged-in teacher (or anyone, where
``LOCKVIZ_ANYONE_PRESENTS`` says so, for a closed lab). An owner can cancel their queued run.

Admission is what is tested, not the lab: runs are admitted and stored queued, not executed.
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from django.test.utils import override_settings
from django.utils import timezone

from lockviz import accounts
from lockviz.models import Member, Room, Run
from lockviz.runs import priority, recorder
from lockviz.teaching import control, rooms

pytestmark = pytest.mark.django_db
NAT = "10.21.31.41"
PLAY = {"backend": "redis", "clients": "2", "ttl_ms": "800"}


@pytest.fixture(autouse=True)
def _admitted_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder, "start", lambda run, scenario, open_ended=False, **_: None)


def teacher() -> tuple[Client, str]:
    user = User.objects.create_user(f"t{User.objects.count()}", password="a long password 1")
    client = Client(REMOTE_ADDR=NAT)
    client.force_login(user)
    return client, accounts.owner_of(user)


def open_room(client: Client) -> Room:
    return Room.objects.get(pk=client.post("/rooms/")["Location"].split("/")[2])


def with_a_student_present(room: Room) -> Member:
    member = rooms.join(room, f"student-of-{room.code}")
    rooms.arrived(room, member)
    return member


@override_settings(LOCKVIZ_PLAY_PER_ADDRESS=3, LOCKVIZ_MAX_PER_BROWSER=8)
def test_an_anonymous_presenter_is_charged_as_any_visitor() -> None:
    """One address held 11 free-play sessions (share: 3) by presenting a room of nobody."""
    anyone = Client(REMOTE_ADDR=NAT)
    room = open_room(anyone)
    with_a_student_present(room)
    assert [anyone.post("/play/", PLAY).status_code for _ in range(3)] == [302] * 3
    refused = anyone.post("/play/", PLAY)
    assert refused.status_code == 429 and "LOCKVIZ_PLAY_PER_ADDRESS" in refused.text
    assert not priority.presents(room.presenter)  # and its runs do not go first


def test_presenter_standing_needs_a_teachers_open_room_with_members_present() -> None:
    client, owner = teacher()
    room = open_room(client)
    assert not priority.presents(owner)  # nobody there yet
    member = with_a_student_present(room)
    assert priority.presents(owner)
    control.remove(room, member.pk)  # a removed member is nobody's class
    assert not priority.presents(owner)
    rooms.arrived(room, rooms.join(room, "another student"))
    assert priority.presents(owner)
    Room.objects.filter(pk=room.code).update(presenter_seen=timezone.now() - dt.timedelta(days=2))
    assert not priority.presents(owner)  # idle
    Room.objects.filter(pk=room.code).update(presenter_seen=timezone.now())
    control.close(Room.objects.get(pk=room.code))
    assert not priority.presents(owner)  # closed


@override_settings(LOCKVIZ_ANYONE_PRESENTS=True)
def test_a_closed_lab_may_let_anyone_present() -> None:
    anyone = Client(REMOTE_ADDR=NAT)
    room = open_room(anyone)
    with_a_student_present(room)
    assert priority.presents(room.presenter)


@override_settings(LOCKVIZ_PRESENTER_RUNS=2, LOCKVIZ_MAX_PER_ADDRESS=2)
def test_a_presenters_runs_count_against_an_allowance_of_their_own() -> None:
    client, owner = teacher()
    room = open_room(client)
    with_a_student_present(room)
    started = [client.post("/runs/", {"scenario": "contention"}).status_code for _ in range(3)]
    assert started == [302, 302, 429]
    refused = client.post("/runs/", {"scenario": "contention"})
    assert "LOCKVIZ_PRESENTER_RUNS" in refused.text
    assert Run.objects.filter(owner=owner, allowance=room.code).count() == 2
    visitor = Client(REMOTE_ADDR=NAT)  # the address's own share is untouched
    assert [visitor.post("/runs/", {"scenario": "contention"}).status_code for _ in range(2)] == [
        302,
        302,
    ]


def test_an_owner_cancels_their_queued_run() -> None:
    """The attacker's own queued sessions could not be finished (409); nor could anyone's."""
    visitor = Client(REMOTE_ADDR=NAT)
    assert visitor.post("/play/", PLAY).status_code == 302
    run = Run.objects.get(address=NAT)
    assert run.status == Run.Status.QUEUED
    assert Client().post(f"/runs/{run.pk}/finish").status_code == 403  # only its owner
    done = visitor.post(f"/runs/{run.pk}/finish")
    assert done.status_code == 200 and "cancelled" in done.text
    run.refresh_from_db()
    assert run.status == Run.Status.CANCELLED
    assert run.events.last() is not None and run.events.last().kind == "run_cancelled"


@override_settings(LOCKVIZ_MAX_PER_ADDRESS=1)
def test_a_rooms_allowance_ends_with_membership_and_with_the_room() -> None:
    client, _ = teacher()
    room = open_room(client)
    control.allow(room, True, 2, 10)
    students = [Client(REMOTE_ADDR=NAT) for _ in range(3)]
    for student in students:
        assert student.post(f"/r/{room.code}").status_code == 302
    start = {"scenario": "contention"}
    assert students[0].post("/runs/", start).status_code == 302  # the room's allowance
    assert Run.objects.get(owner=students[0].session["browser"]).allowance == room.code
    removed = Member.objects.get(browser=students[1].session["browser"])
    control.remove(room, removed.pk)
    assert students[1].post("/runs/", start).status_code == 302  # the address's share now
    assert Run.objects.get(owner=removed.browser).allowance == ""
    control.close(Room.objects.get(pk=room.code))
    assert students[2].post("/runs/", start).status_code == 429  # the address's share is spent


def test_a_rooms_default_allowance_is_within_the_labs_ceiling() -> None:
    assert Room.objects.create(presenter="x").runs_in_all <= settings.LOCKVIZ_MAX_RUNS
