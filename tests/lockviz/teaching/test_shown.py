"""A room shows the presenter's newest report, whichever order the reports arrive in
(lockviz.teaching.shown): an older one arriving last is answered "older" and neither saved nor
broadcast; two at once cannot both win; the server's own moves (a plan's poll item) take their
place in the same order; an order that is missing, not whole or far ahead is refused by name."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from channels.testing import HttpCommunicator
from django.core.asgi import get_asgi_application
from django.test import Client

from lockviz.models import Room, Run
from lockviz.teaching import shown
from lockviz.teaching.presenting import POLL_TITLE
from tests.lockviz.views.test_plans import a_plan


def opened(teacher: Client) -> Room:
    code = teacher.post("/rooms/")["Location"].strip("/").split("/")[-1]
    Run.objects.get_or_create(id="r1", defaults={"title": "r1", "scenario": {}})
    return Room.objects.get(pk=code)


def at(n: int, order: int) -> str:
    return json.dumps({"view": "lesson", "run": "r1", "at": n, "title": "GC", "order": order})


def page_order(page: str) -> int:
    """The order a presenter's page counts on from (its page data: lockviz.views.pagedata)."""
    data = re.search(r'<script id="page-data" type="application/json">(.*?)</script>', page, re.S)
    assert data is not None
    return int(json.loads(data.group(1))["presenting"]["order"])


@pytest.fixture
def frames(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every frame the room broadcasts (to its followers: lockviz.live.broadcast)."""
    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(
        "lockviz.teaching.rooms.broadcast.publish_frame", lambda group, frame: sent.append(frame)
    )
    return sent


@pytest.mark.django_db
def test_an_older_report_arriving_after_a_newer_one_is_answered_older_and_changes_nothing(
    client: Client, frames: list[dict[str, Any]]
) -> None:
    room = opened(client)
    start = page_order(client.get(f"/rooms/{room.code}/").content.decode())
    newer = client.post(f"/rooms/{room.code}/show", at(13, start + 300), "text/plain")
    older = client.post(f"/rooms/{room.code}/show", at(9, start), "text/plain")  # held up
    assert newer.status_code == 200 and newer.json()["saved"] is True
    assert older.status_code == 200 and older.json()["saved"] is False  # not an error
    assert "newer" in older.json()["older"] and older.json()["order"] == start + 300
    room.refresh_from_db()
    assert room.state["at"] == 13 and room.state_order == start + 300
    assert [f["state"]["at"] for f in frames if f["type"] == "state"] == [13]
    again = client.post(f"/rooms/{room.code}/show", at(13, start + 300), "text/plain")
    assert again.json()["saved"] is False  # the same order twice: only once


@pytest.mark.django_db
def test_an_order_missing_not_whole_or_far_ahead_is_refused_by_name(client: Client) -> None:
    room = opened(client)
    assert client.post(f"/rooms/{room.code}/show", at(4, 10), "text/plain").status_code == 200
    body = json.dumps({"view": "lesson", "run": "r1", "at": 5})
    missing = client.post(f"/rooms/{room.code}/show", body, "text/plain")
    assert missing.status_code == 400 and missing.text.startswith("order: missing")
    for order in ("12", 1.5, True, -1, 2**53, [1], None):
        body = json.dumps({"view": "lesson", "run": "r1", "at": 5, "order": order})
        bad = client.post(f"/rooms/{room.code}/show", body, "text/plain")
        assert bad.status_code == 400 and bad.text.startswith("order: "), (order, bad.text)
    forged = client.post(f"/rooms/{room.code}/show", at(5, shown.now_ms() + 2 * 3600_000), "x")
    assert forged.status_code == 400 and "more than an hour ahead" in forged.text
    room.refresh_from_db()
    assert room.state["at"] == 4 and room.state_order == 10  # nothing lost


@pytest.mark.django_db
def test_an_order_just_under_the_bound_does_not_wedge_the_room(client: Client) -> None:
    room = opened(client)
    ahead = shown.now_ms() + 3600_000 - 60_000
    assert client.post(f"/rooms/{room.code}/show", at(1, ahead), "x").json()["saved"] is True
    start = page_order(client.get(f"/rooms/{room.code}/").content.decode())
    assert start == ahead + 1  # a page rendered now counts on from past it
    assert client.post(f"/rooms/{room.code}/show", at(2, start), "x").json()["saved"] is True
    answer = client.post(f"/rooms/{room.code}/show", at(3, 5), "x").json()  # a slow clock
    assert answer["saved"] is False and answer["order"] == start  # it learns, and counts on
    assert client.post(f"/rooms/{room.code}/show", at(3, start + 1), "x").json()["saved"]


@pytest.mark.django_db
def test_a_plans_poll_item_wins_over_a_stale_report_and_the_next_page_wins_over_it(
    client: Client, frames: list[dict[str, Any]]
) -> None:
    plan = a_plan(client)
    code = client.post(f"/plans/{plan.pk}/present")["Location"].strip("/").split("/")[-1]
    Run.objects.get_or_create(id="r1", defaults={"title": "r1", "scenario": {}})
    lesson = page_order(client.get("/lessons/gc-pause-fenced/").content.decode())
    assert client.post(f"/plans/{plan.pk}/present/3")["Location"] == f"/rooms/{code}/"
    room = Room.objects.get(pk=code)
    assert room.state["title"] == POLL_TITLE and room.state_order > lesson
    # The lesson page's report, made before Next was pressed, arrives after the poll item.
    stale = client.post(f"/rooms/{code}/show", at(7, lesson), "text/plain").json()
    assert stale["saved"] is False
    room.refresh_from_db()
    assert room.state["title"] == POLL_TITLE
    # The page the presenter opens next counts on from past the poll item: its report wins.
    after = page_order(client.get(f"/rooms/{code}/").content.decode())
    assert client.post(f"/rooms/{code}/show", at(8, after), "text/plain").json()["saved"]
    room.refresh_from_db()
    assert room.state["at"] == 8
    assert [f["state"].get("at") for f in frames if f["type"] == "state"] == [None, 8]


@pytest.mark.django_db(transaction=True)
def test_reports_at_once_through_the_asgi_handler_end_on_the_newest(
    frames: list[dict[str, Any]],
) -> None:
    """Django's ASGI handler (as Daphne calls it) runs each request in a thread of its own:
    eight reports at once, three times over, and the room always ends on the newest."""
    teacher = Client()
    room = opened(teacher)
    page = teacher.get(f"/rooms/{room.code}/").content.decode()
    start, csrf = page_order(page), re.search(r'"X-CSRFToken": "([^"]*)"', page)
    assert csrf is not None
    cookies = "; ".join(f"{name}={c.value}" for name, c in teacher.cookies.items())
    headers = [(b"host", b"testserver"), (b"cookie", cookies.encode()),
               (b"x-csrftoken", csrf.group(1).encode())]  # fmt: skip
    app = get_asgi_application()

    async def report(order: int) -> dict[str, Any]:
        path = f"/rooms/{room.code}/show"
        asked = HttpCommunicator(app, "POST", path, at(order, order).encode(), headers)
        answer = await asked.get_response(timeout=60)
        assert answer["status"] == 200, answer["body"][:300]
        return dict(json.loads(answer["body"]))

    async def at_once(orders: list[int]) -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(report(order) for order in orders)))

    for round_ in range(3):
        orders = [start + 100 * round_ + n for n in range(8)]
        answers = asyncio.run(at_once(orders[::-1]))  # the newest is asked first
        room.refresh_from_db()
        assert room.state["at"] == room.state_order == orders[-1], (round_, answers)
        assert answers[0]["saved"] is True  # the newest: whenever it ran, nothing beat it
        assert all(a["saved"] or a["order"] > o for a, o in zip(answers, orders[::-1], strict=True))
        assert orders[-1] in [f["order"] for f in frames]
