"""The presenter in control of the room: shares wait for approval, members can be removed, joins
stopped, names not asked, the room closed; an idle room expires and is pruned with its polls; a
presenter key takes the room back from another browser."""

from __future__ import annotations

import datetime as dt
import re
import threading
import time

import pytest
from django.core.management import call_command
from django.http import HttpResponse
from django.test import Client
from django.utils import timezone
from django.utils.html import escape

from lockviz.models import Member, Poll, Room, Run, Share, Vote
from lockviz.runs import recovery
from lockviz.teaching import codes, rooms, sharing
from tests.conftest import browser_of

pytestmark = pytest.mark.django_db


def open_room(teacher: Client) -> Room:
    code = teacher.post("/rooms/")["Location"].split("/")[2]
    return Room.objects.get(pk=code)


def joined(room: Room, name: str = "Ada") -> Client:
    student = Client()
    assert student.post(f"/r/{room.code}", {"name": name}).status_code == 302
    rooms.arrived(room, Member.objects.get(room=room, browser=browser_of(student)))  # page open
    return student


def leads_nowhere(response: HttpResponse, room: Room) -> None:
    """The one answer for a code that leads nowhere, whatever the reason (lockviz.teaching.codes):
    a closed room, a removed member, stopped joins say no more than a code of no room."""
    assert response.status_code == 404
    assert escape(codes.no_room(room.code)) in response.content.decode()


def a_fork_of(student: Client) -> Run:
    parent = Run.objects.create(title="t", scenario={}, status=Run.Status.FINISHED, owner="p")
    return Run.objects.create(
        title="What if…? Bob waits", scenario={}, status=Run.Status.FINISHED, parent=parent,
        diverged_seq=3, diverged_ms=100.0, owner=browser_of(student),
    )  # fmt: skip


def test_a_students_share_is_listed_only_once_the_presenter_approves_it() -> None:
    teacher = Client()
    room = open_room(teacher)
    student = joined(room)
    fork = a_fork_of(student)
    assert student.post(f"/rooms/{room.code}/share", {"run": fork.pk}).status_code == 200
    page = teacher.get(f"/rooms/{room.code}/").content.decode()
    waiting = page[page.index('id="shares-waiting"') : page.index('id="share-template"')]
    listed = page[page.index('id="shares-listed"') :]
    assert "Bob waits" in waiting and "Bob waits" not in listed[: listed.index("</details>")]
    assert '<details id="shares-listed">' in page  # the list is folded: off the projector
    assert sharing.shared(room) == []

    approve = f"/rooms/{room.code}/shares/{fork.pk}/listed"
    assert student.post(approve).status_code == 403  # the presenter's alone
    assert teacher.post(approve).status_code == 302
    assert [s["run"] for s in sharing.shared(room)] == [fork.pk]
    assert teacher.post(f"/rooms/{room.code}/shares/{fork.pk}/hidden").status_code == 302
    assert sharing.shared(room) == [] and sharing.shared(room, Share.State.HIDDEN)
    assert teacher.post(f"/rooms/{room.code}/shares/nope/listed").status_code == 400


def test_a_closed_room_refuses_joins_votes_and_shares_as_no_room_would() -> None:
    teacher = Client()
    room = open_room(teacher)
    student = joined(room)
    poll = rooms.ask(room, "Next?", ["Bob", "Alice"])
    assert student.post(f"/rooms/{room.code}/close").status_code == 403
    assert teacher.post(f"/rooms/{room.code}/close").status_code == 302
    # A closed room is a code that leads nowhere: the one answer (lockviz.teaching.codes).
    leads_nowhere(student.get(f"/rooms/{room.code}/follow/"), room)
    leads_nowhere(Client().get(f"/r/{room.code}"), room)
    leads_nowhere(Client().post(f"/r/{room.code}", {"name": "Cy"}), room)
    leads_nowhere(student.post(f"/rooms/{room.code}/polls/{poll.pk}/vote", {"choice": "Bob"}), room)
    assert not Vote.objects.exists() and Member.objects.count() == 1
    page = teacher.get(f"/rooms/{room.code}/").content.decode()
    assert "This room is closed" in page and "This class has ended" in page
    assert 'class="join-qr"' not in page and "stays open" not in page  # no way in is offered
    # Nothing is offered that the class would never see: no question, no allowance, nothing to
    # show; the last poll stays readable, and a new room is one press away.
    assert 'id="ask-form"' not in page and "Show the class something" not in page
    assert 'id="bar-ask-form"' not in page and "closed: the class has ended" in page  # the bar
    assert 'name="joins_open"' not in page  # no joins to open: its code leads nowhere
    assert "Students' own runs" not in page and 'id="new-room"' in page and "Next?" in page
    asked = teacher.post(
        f"/rooms/{room.code}/polls", {"question": "Still there?", "choices": "a\nb"}
    )
    assert asked.status_code == 400 and rooms.ENDED in asked.content.decode()
    allowed = teacher.post(f"/rooms/{room.code}/allowance", {"runs_each": "2", "runs_in_all": "9"})
    assert allowed.status_code == 400 and rooms.ENDED in allowed.content.decode()
    assert Poll.objects.filter(room=room).count() == 1


def test_stopping_joins_keeps_the_class_and_refuses_newcomers() -> None:
    teacher = Client()
    room = open_room(teacher)
    ada = joined(room)
    teacher.post(f"/rooms/{room.code}/settings", {"names": "on"})  # joins_open unticked
    leads_nowhere(Client().get(f"/r/{room.code}"), room)  # to a newcomer, as no room would
    assert ada.get(f"/rooms/{room.code}/follow/").status_code == 200  # already in
    teacher.post(f"/rooms/{room.code}/settings", {"joins_open": "on", "names": "on"})
    assert Client().get(f"/r/{room.code}").status_code == 200


def test_names_are_asked_for_only_when_the_room_wants_them() -> None:
    teacher = Client()
    room = open_room(teacher)
    joined(room, "Ada")
    teacher.post(f"/rooms/{room.code}/settings", {"joins_open": "on"})  # names unticked
    assert list(Member.objects.values_list("name", flat=True)) == [""]  # not kept either
    assert 'name="name"' not in Client().get(f"/r/{room.code}").content.decode()
    joined(room, "Mallory wrote this on the projector")
    assert set(Member.objects.values_list("name", flat=True)) == {""}


def test_a_removed_member_cannot_come_back() -> None:
    teacher = Client()
    room = open_room(teacher)
    ada, bob = joined(room, "Ada"), joined(room, "Bob")
    member = Member.objects.get(room=room, name="Ada")
    poll = rooms.ask(room, "Next?", ["Bob", "Alice"])
    assert (
        ada.post(f"/rooms/{room.code}/polls/{poll.pk}/vote", {"choice": "Bob"}).status_code == 200
    )
    assert rooms.counts(poll) == {"Bob": 1, "Alice": 0}
    remove = f"/rooms/{room.code}/members/{member.pk}/remove"
    assert bob.post(remove).status_code == 403
    assert teacher.post(remove).status_code == 302
    assert rooms.counts(poll) == {"Bob": 0, "Alice": 0}  # its answer counts no more
    leads_nowhere(ada.get(f"/rooms/{room.code}/follow/"), room)  # told live; then nowhere
    leads_nowhere(ada.post(f"/r/{room.code}", {"name": "Ada"}), room)
    assert bob.get(f"/rooms/{room.code}/follow/").status_code == 200
    assert "Ada" not in teacher.get(f"/rooms/{room.code}/").content.decode()


def test_an_idle_room_expires_and_is_pruned_with_its_polls() -> None:
    teacher = Client()
    old, fresh = open_room(teacher), open_room(Client())
    joined(old)
    poll = rooms.ask(old, "Next?", ["Bob", "Alice"])
    Vote.objects.create(poll=poll, browser="b", choice="Bob")
    Room.objects.filter(pk=old.pk).update(presenter_seen=timezone.now() - dt.timedelta(hours=13))
    assert Client().get(f"/r/{old.code}").status_code == 404  # gone at once
    assert Client().get(f"/r/{fresh.code}").status_code == 200
    call_command("prune", verbosity=0)
    assert list(Room.objects.values_list("pk", flat=True)) == [fresh.pk]
    assert not Poll.objects.exists() and not Vote.objects.exists()
    assert not Member.objects.exists()


@pytest.mark.django_db(transaction=True)  # the keeper's thread has a connection of its own
def test_a_serving_app_prunes_an_idle_room_without_a_restart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    old = open_room(Client())
    Room.objects.filter(pk=old.pk).update(presenter_seen=timezone.now() - dt.timedelta(hours=13))
    monkeypatch.setattr(recovery, "HEARTBEAT_S", 0.05)
    monkeypatch.setattr(recovery, "PRUNE_EVERY_S", 0.2)
    keeper = threading.Thread(target=recovery._keeping, args=(list, lambda *_: None, True))
    keeper.start()
    try:
        deadline = time.monotonic() + 30
        while Room.objects.filter(pk=old.pk).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not Room.objects.filter(pk=old.pk).exists()
    finally:
        recovery._forever.clear()  # a keeper with no runs then ends after two beats
        keeper.join(10)
    assert not keeper.is_alive()


def test_a_presenter_key_shown_once_takes_the_room_to_another_browser() -> None:
    teacher, laptop = Client(), Client()
    room = open_room(teacher)
    projected = teacher.get(f"/rooms/{room.code}/").text  # the page on the projector
    assert 'id="room-key-link"' not in projected and "/take/" not in projected
    assert 'id="room-key-open"' in projected  # where the key waits, on a page of its own
    first = teacher.get(f"/rooms/{room.code}/key").text
    link = re.search(r'id="room-key-link">([^<]+)<', first)
    assert link is not None
    path = link.group(1).removeprefix("http://testserver")
    assert f"/rooms/{room.code}/take/" in path
    assert 'id="room-key-link"' not in teacher.get(f"/rooms/{room.code}/key").text  # once
    assert 'id="room-key-open"' not in teacher.get(f"/rooms/{room.code}/").text
    assert Client().get(f"/rooms/{room.code}/key").status_code in (302, 403, 404)

    assert laptop.get(f"/rooms/{room.code}/")["Location"] == f"/r/{room.code}"
    asked = laptop.get(path)
    assert asked.status_code == 200 and 'id="take-back"' in asked.content.decode()
    assert Room.objects.get(pk=room.pk).presenter == browser_of(teacher)  # a GET changes nothing
    assert laptop.post(path)["Location"] == f"/rooms/{room.code}/"
    assert 'id="room-bar"' in laptop.get(f"/rooms/{room.code}/").content.decode()
    assert teacher.get(f"/rooms/{room.code}/")["Location"] == f"/r/{room.code}"

    laptop.post(f"/rooms/{room.code}/key")  # a new key: the old link stops working
    assert teacher.post(path).status_code == 403
    assert Room.objects.get(pk=room.pk).presenter == browser_of(laptop)
