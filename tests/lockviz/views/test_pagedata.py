"""What every page hands its script: one ``#page-data`` element built by page_data, its common
keys always there, its stream paths the named WebSocket routes'; and no ``/ws/`` path written
by hand in a view or a script."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from lockviz.models import Room, Run
from lockviz.routing import room_stream, run_stream
from lockviz.views.pagedata import COMMON
from tests.lockviz.teaching.test_forks import stored

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = re.compile(
    r'<script id="([^"]*-data|[^"]*-verbs)" type="application/json">(.*?)</script>', re.S
)


def page_data(client: Client, url: str) -> dict[str, Any]:
    """The page's one JSON element, parsed (and no other JSON element beside it)."""
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    found = SCRIPT.findall(response.content.decode())
    assert [name for name, _ in found] == ["page-data"], url
    data = json.loads(found[0][1])
    assert set(COMMON) <= set(data), url
    return data


def test_the_stream_paths_are_the_named_routes() -> None:
    assert run_stream("abc") == "/ws/runs/abc/"
    assert room_stream("QQQQQ") == "/ws/rooms/QQQQQ/"
    assert run_stream("abc") == reverse("run_stream", urlconf="lockviz.routing", args=["abc"])


def test_every_page_with_a_script_hands_it_page_data(client: Client) -> None:
    run = stored()
    lesson = Run.objects.create(
        slug="gc-pause-fenced", title=run.title, scenario=run.scenario, status=run.status
    )
    run_pages = {
        "run": reverse("run", args=[run.pk]),
        "replay": reverse("replay", args=[run.pk]),
        "play": reverse("play_session", args=[run.pk]),
        "fork": reverse("fork", args=[run.pk]),
        "lesson": f"{reverse('lesson', args=['gc-pause-fenced'])}?run={lesson.pk}",
    }
    for name, url in run_pages.items():
        data = page_data(client, url)
        shown = lesson if name == "lesson" else run
        assert data["run"] == shown.pk and data["status"] == shown.status, name
        assert data["ws"] == reverse("run_stream", urlconf="lockviz.routing", args=[shown.pk])
        assert data["presenting"] is None
    assert page_data(client, reverse("run", args=[run.pk]))["scenario"]["title"] == run.title
    assert page_data(client, reverse("fork", args=[run.pk]))["verbs"]["pause"]
    lanes = page_data(client, f"{reverse('compare')}?runs={run.pk}")["lanes"]
    assert [lane["ws"] for lane in lanes] == [run_stream(run.pk)]
    for url in (reverse("index"), reverse("lessons"), reverse("play"), reverse("import")):
        assert page_data(client, url)["run"] is None  # the common keys, even with nothing in them


def test_a_room_s_pages_hand_its_stream(client: Client) -> None:
    run = stored()
    code = client.post(reverse("open_room"))["Location"].strip("/").split("/")[-1]
    room = Room.objects.get(code=code)
    presenting = {
        "room": code,
        "ws": reverse("room_stream", urlconf="lockviz.routing", args=[code]),
    }
    for url in (reverse("index"), reverse("room", args=[code]), reverse("run", args=[run.pk])):
        handed = page_data(client, url)["presenting"]
        order = handed.pop("order")  # where its reports count on from: past the room's
        assert handed == presenting  # the room bar's stream
        assert isinstance(order, int) and order > Room.objects.get(code=code).state_order
    follower = Client()
    follower.post(reverse("join_room", args=[code]))  # a member follows
    data = page_data(follower, reverse("follow_room", args=[code]))
    assert data["room"] == room.code and data["room_ws"] == room_stream(code)
    assert data["state"] == room.state and data["presenting"] is None
    meta = follower.get(reverse("run_follow", args=[run.pk])).json()
    assert meta["run"] == run.pk and meta["ws"] == run_stream(run.pk)


def test_no_websocket_path_is_written_by_hand() -> None:
    """Only lockviz/routing.py names ``/ws/...``; views ask it, scripts read the page data."""
    sources = [
        *(ROOT / "lockviz" / "views").glob("*.py"),
        *(ROOT / "static" / "lockviz").rglob("*.js"),
    ]
    sources += [*(ROOT / "templates").rglob("*.html")]
    code = re.compile(r"^\s*(#|//|\*|/\*\*)")  # comments may say where a stream is
    written = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sources
        for n, line in enumerate(path.read_text().splitlines(), start=1)
        if "/ws/" in line and not code.match(line)
    ]
    assert written == []
