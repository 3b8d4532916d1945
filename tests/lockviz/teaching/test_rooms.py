"""Rooms over HTTP: open, join, follow, show, polls — roles checked on every change."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from lockviz.models import ROOM_ALPHABET, Member, Poll, Room, Run, Vote
from lockviz.scenarios.library import builtin
from lockviz.teaching import rooms
from tests.conftest import browser_of

pytestmark = pytest.mark.django_db


def open_room(teacher: Client) -> Room:
    response = teacher.post("/rooms/")
    assert response.status_code == 302
    code = re.fullmatch(r"/rooms/([A-Z0-9]+)/", response["Location"])
    assert code is not None
    return Room.objects.get(pk=code.group(1))


def join(student: Client, room: Room, name: str = "") -> Member:
    """``student`` joins through the room's link, and its class page is open (present)."""
    assert student.post(f"/r/{room.code}", {"name": name}).status_code == 302
    member = Member.objects.get(room=room, browser=student.session["browser"])
    rooms.arrived(room, member)  # as its room stream does
    return member


def test_a_teacher_opens_a_room_with_a_short_unambiguous_code_a_link_and_a_qr(
    client: Client,
) -> None:
    room = open_room(client)
    assert len(room.code) == 6 and set(room.code) <= set(ROOM_ALPHABET)
    assert not set(room.code) & set("0O1IL2Z5S8B6G")
    page = client.get(f"/rooms/{room.code}/").content.decode()
    assert room.code in page and f"/r/{room.code}" in page and "<svg" in page
    assert 'id="room-bar"' in page  # this browser now presents


def test_students_join_by_link_or_code_and_joining_starts_nothing() -> None:
    teacher, student = Client(), Client()
    room = open_room(teacher)
    assert student.get(f"/rooms/{room.code}/")["Location"] == f"/r/{room.code}"
    assert student.post("/join", {"code": room.code.lower()})["Location"] == f"/r/{room.code}"
    missing = student.post("/join", {"code": "QQQQQ"})
    assert missing.status_code == 404 and "There is no open room" in missing.content.decode()
    # A link with a bad code gets the same page: the sentence, and the form to try again.
    for answer in (missing, student.get("/r/qqqqq"), student.post("/r/QQQQQ", {"name": "Ada"})):
        page = answer.content.decode()
        assert answer.status_code == 404
        assert "There is no open room with the code QQQQQ that you can join" in page
        assert 'id="join-code"' in page and 'value="QQQQQ"' in page
    joined = student.post(f"/r/{room.code}", {"name": "Ada"})
    assert joined["Location"] == f"/rooms/{room.code}/follow/"
    page = student.get(joined["Location"]).content.decode()
    assert "page-data" in page and f"/ws/rooms/{room.code}/" in page
    assert Member.objects.get(room=room).name == "Ada"
    assert not Run.objects.exists()  # joining never starts servers


def test_only_the_presenter_says_what_the_class_sees() -> None:
    teacher, student = Client(), Client()
    room = open_room(teacher)
    for run_id in ("abc123", "fork1", "orig1"):  # runs the presenter may see (any unsaved run)
        Run.objects.create(id=run_id, title=run_id, scenario={})
    state = {"view": "replay", "run": "abc123", "at": 7, "title": "GC pause", "order": 1}
    ok = teacher.post(f"/rooms/{room.code}/show", json.dumps(state), content_type="text/plain")
    assert ok.status_code == 200 and ok.json()["saved"] is True
    room.refresh_from_db()
    assert room.state["at"] == 7 and room.state["view"] == "replay"
    refused = student.post(f"/rooms/{room.code}/show", json.dumps(state), content_type="text/plain")
    assert refused.status_code == 403 and "Only the presenter" in refused.content.decode()
    bad = teacher.post(f"/rooms/{room.code}/show", '{"view": "tv", "at": -1}', content_type="x")
    assert bad.status_code == 400 and bad.content.decode().startswith("view:")
    # A fork shown beside its original: the class is told both runs.
    beside = {"view": "run", "run": "fork1", "beside": "orig1", "title": "Side by side", "order": 2}
    ok = teacher.post(f"/rooms/{room.code}/show", json.dumps(beside), content_type="text/plain")
    assert ok.status_code == 200 and ok.json()["saved"] is True
    room.refresh_from_db()
    assert (room.state["run"], room.state["beside"]) == ("fork1", "orig1")
    odd = json.dumps({**beside, "beside": "../x"})
    bad = teacher.post(f"/rooms/{room.code}/show", odd, content_type="text/plain")
    assert bad.status_code == 400 and bad.content.decode().startswith("beside:")
    none = json.dumps({**beside, "beside": "nosuchrun"})  # a run that is not there: refused
    bad = teacher.post(f"/rooms/{room.code}/show", none, content_type="text/plain")
    assert bad.status_code == 400 and "beside: there is no run 'nosuchrun'" in bad.text


def test_a_poll_is_answered_once_each_tallied_for_the_presenter_and_revealed_to_all() -> None:
    teacher, ada, bob = Client(), Client(), Client()
    room = open_room(teacher)
    asked = teacher.post(
        f"/rooms/{room.code}/polls",
        {"question": "What happens next?", "choices": "Bob gets it\nAlice keeps it"},
    )
    assert asked.status_code == 200
    poll = Poll.objects.get(room=room)
    assert asked.json()["poll"] == {
        "id": poll.pk, "question": "What happens next?",
        "choices": ["Bob gets it", "Alice keeps it"], "state": "open",
    }  # fmt: skip
    vote = f"/rooms/{room.code}/polls/{poll.pk}/vote"
    join(ada, room)
    join(bob, room)
    assert ada.post(vote, {"choice": "Bob gets it"}).json()["poll"]["mine"] == "Bob gets it"
    assert ada.post(vote, {"choice": "Alice keeps it"}).status_code == 200  # changed her mind
    assert bob.post(vote, {"choice": "Alice keeps it"}).status_code == 200
    assert bob.post(vote, {"choice": "Carol"}).content.decode().startswith("choice:")
    assert Vote.objects.filter(poll=poll).count() == 2
    assert teacher.post(vote, {"choice": "Bob gets it"}).status_code == 403
    assert ada.post(f"/rooms/{room.code}/polls/{poll.pk}/reveal").status_code == 403
    revealed = teacher.post(f"/rooms/{room.code}/polls/{poll.pk}/reveal").json()["poll"]
    assert revealed["state"] == "revealed"
    assert revealed["counts"] == {"Bob gets it": 0, "Alice keeps it": 2}
    assert "mine" not in revealed and "browser" not in json.dumps(revealed)  # nobody's name
    late = ada.post(vote, {"choice": "Bob gets it"})
    assert late.status_code == 400 and "answered already" in late.content.decode()


def test_a_checkpoint_poll_keeps_its_answer_until_the_reveal() -> None:
    teacher = Client()
    room = open_room(teacher)
    run = Run.objects.create(
        title="t", slug="gc-pause-fenced", scenario=builtin()["gc-pause-fenced"].to_json(),
        owner=browser_of(teacher), status=Run.Status.FINISHED,
    )  # fmt: skip
    index = next(i for i, s in enumerate(builtin()["gc-pause-fenced"].steps) if s.ask)
    asked = teacher.post(f"/rooms/{room.code}/polls", {"run": run.pk, "step": str(index)})
    poll = asked.json()["poll"]
    assert poll["question"].startswith("Alice is frozen") and "answer" not in poll
    nothing = teacher.post(f"/rooms/{room.code}/polls", {"run": run.pk, "step": "0"})
    assert nothing.status_code == 400 and "asks nothing" in nothing.content.decode()
    follow = Client().get(f"/runs/{run.pk}/follow.json").json()
    asks = [step["ask"] for step in follow["scenario"]["steps"] if "ask" in step]
    assert asks and all(set(ask) == {"question"} for ask in asks)  # never the answer
    assert "expect" not in follow["scenario"]


def test_a_poll_needs_a_question_and_two_to_six_different_choices() -> None:
    teacher = Client()
    room = open_room(teacher)
    url = f"/rooms/{room.code}/polls"
    assert teacher.post(url, {"question": "", "choices": "a\nb"}).content.startswith(b"question:")
    for choices in ("only one", "same\nsame", "\n".join("abcdefg")):
        response = teacher.post(url, {"question": "?", "choices": choices})
        assert response.status_code == 400 and response.content.startswith(b"choices:")


def test_after_the_reveal_the_room_page_says_revealed_with_the_counts_and_no_stale_count() -> None:
    teacher, ada = Client(), Client()
    room = open_room(teacher)
    teacher.post(f"/rooms/{room.code}/polls", {"question": "Next?", "choices": "Bob\nAlice"})
    poll = Poll.objects.get(room=room)
    join(ada, room)  # only a member answers (lockviz.teaching.members)
    assert (
        ada.post(f"/rooms/{room.code}/polls/{poll.pk}/vote", {"choice": "Alice"}).status_code == 200
    )
    before = teacher.get(f"/rooms/{room.code}/").content.decode()
    assert "the class does not see this until you reveal" in before
    teacher.post(f"/rooms/{room.code}/polls/{poll.pk}/reveal")
    after = teacher.get(f"/rooms/{room.code}/").content.decode()
    assert "Revealed ✔" in after and "until you reveal" not in after
    assert 'class="reveal-form"' not in after  # no Reveal button, disabled or not
    assert re.search(r'data-choice="Alice"><span class="bar-label">Alice</span>.*?"n">1<', after)
    assert "after 12 h without you" in after  # the room's stated idle time
