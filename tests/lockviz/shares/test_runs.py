"""Fair shares of the lab's runs: per address for visitors in no room, per room allowance for a
room's members, whatever cookie jars a script brings.

Admission is what is tested, not the lab: the runs are admitted and stored as queued (what the
count reads) but not executed.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.test.utils import override_settings

from lockviz.models import Room, Run
from lockviz.runs import recorder

pytestmark = pytest.mark.django_db
NAT = "10.20.30.40"  # a campus NAT: every browser of the class comes from it
PLAY = {"backend": "redis", "clients": "2", "ttl_ms": "800"}


@pytest.fixture(autouse=True)
def _admitted_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recorder, "start", lambda run, scenario, open_ended=False, **_: None)


def jar() -> Client:
    """A fresh cookie jar (a new session) behind the NAT."""
    return Client(REMOTE_ADDR=NAT)


def start(client: Client) -> int:
    return client.post("/runs/", {"scenario": "contention"}).status_code


@override_settings(LOCKVIZ_MAX_PER_ADDRESS=3)
def test_fresh_cookie_jars_at_one_address_in_no_room_get_429_past_the_share() -> None:
    assert [start(jar()) for _ in range(3)] == [302, 302, 302]
    refused = jar().post("/runs/", {"scenario": "contention"})
    assert refused.status_code == 429 and 1 <= int(refused["Retry-After"]) <= 60
    assert "This address has 3 runs queued or running" in refused.content.decode()
    assert Run.objects.filter(address=NAT).count() == 3  # the refused one was not made
    assert start(Client(REMOTE_ADDR="10.9.9.9")) == 302  # another address has its own share


@override_settings(LOCKVIZ_MAX_PER_ADDRESS=2, LOCKVIZ_PLAY_PER_ADDRESS=1)
def test_free_play_sessions_have_a_share_of_their_own() -> None:
    assert jar().post("/play/", PLAY).status_code == 302
    refused = jar().post("/play/", PLAY)
    assert refused.status_code == 429 and "1 free-play sessions open" in refused.content.decode()
    assert start(jar()) == 302  # a scripted run still fits the address's share


@override_settings(LOCKVIZ_MAX_PER_ADDRESS=3)
def test_thirty_members_of_one_room_behind_one_address_each_start_a_run() -> None:
    teacher = Client(REMOTE_ADDR=NAT)
    code = re.fullmatch(r"/rooms/(\w+)/", teacher.post("/rooms/")["Location"])
    assert code is not None
    room = Room.objects.get(pk=code[1])
    assert "Students may start runs of their own" in teacher.get(f"/rooms/{room.code}/").text
    switch = {"student_runs": "on", "runs_each": "1", "runs_in_all": "30"}
    too_many = teacher.post(f"/rooms/{room.code}/allowance", {**switch, "runs_in_all": "999"})
    assert too_many.status_code == 400 and too_many.text.startswith("runs_in_all: from 1 to 200")
    assert jar().post(f"/rooms/{room.code}/allowance", switch).status_code == 403  # presenter's
    assert teacher.post(f"/rooms/{room.code}/allowance", switch).status_code == 302
    students = [jar() for _ in range(31)]
    for student in students:
        assert student.post(f"/r/{room.code}", {"name": "s"}).status_code == 302
    assert [start(s) for s in students[:30]] == [302] * 30
    assert Run.objects.filter(allowance=room.code, address=NAT).count() == 30
    assert start(students[0]) == 429  # each may have one going (the presenter's choice)
    full = students[30].post("/runs/", {"scenario": "contention"})
    assert full.status_code == 429 and "as many as its presenter lets" in full.content.decode()
    outsider = jar().post("/runs/", {"scenario": "contention"})  # the NAT's share is untouched
    assert outsider.status_code == 302


@override_settings(LOCKVIZ_MAX_PER_ADDRESS=2)
def test_without_the_presenters_switch_members_take_their_address_share() -> None:
    room_code = Client().post("/rooms/")["Location"].split("/")[2]
    students = [jar() for _ in range(3)]
    for student in students:
        student.post(f"/r/{room_code}")
    assert [start(s) for s in students] == [302, 302, 429]
