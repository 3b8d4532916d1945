"""Private means private: every path that takes a run id refuses a private saved run to a
stranger, as if there were no such run (lockviz.library.access.may_see is the one check).

The URL patterns (lockviz/urls.py) and WebSocket routes (lockviz/routing.py) are walked, not
listed: a route added later that takes a run id is tried here too, and fails this test until
it refuses. Runs named elsewhere than the path (a form's field, a query, a room's state) are
listed below, each with the place it enters.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

import pytest
from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from django.test import Client
from django.urls import URLPattern, URLResolver, reverse

from lockviz import urls
from lockviz.library import saving
from lockviz.models import Plan, Room, Run, Visibility
from lockviz.routing import websocket_urlpatterns
from lockviz.teaching import rooms
from tests.communicator import WebsocketCommunicator
from tests.lockviz.library.helpers import teacher, teachers_run

SECRET = "Ada's secret lecture"  # the private run's title: no refusal may carry it
# A run-taking route that refuses with another status than 404, and why that says nothing.
NOT_404 = {
    "room_share_decide": 400,  # a presenter decides on a share of their own room: none there
}


def private_run() -> Run:
    ada, _ = teacher("ada")
    run = teachers_run(ada)
    Run.objects.filter(pk=run.pk).update(title=SECRET)
    saving.save_run(ada, Run.objects.get(pk=run.pk), Visibility.PRIVATE, SECRET)
    return Run.objects.get(pk=run.pk)


def stranger() -> Client:
    client = Client(REMOTE_ADDR="10.77.0.9")
    client.get("/")
    session = client.session
    session["browser"] = "a stranger"  # a browser with its token, as anyone's who ran something
    session.save()
    return client


def said_none(page: str, run: Run) -> bool:
    """Whether ``page`` says there is no such run (as it says for an id that names none)."""
    return f"there is no run {escape(repr(run.pk))}" in page.lower()


def run_routes(patterns: list[Any], prefix: str = "") -> list[tuple[str, str, list[str]]]:
    """Every route below ``patterns`` that takes a run id in its path: (name, route, kwargs)."""
    found = []
    for entry in patterns:
        if isinstance(entry, URLResolver):
            found += run_routes(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            converters = list(entry.pattern.converters)
            if any("run" in name for name in converters):
                found.append((str(entry.name), prefix + str(entry.pattern), converters))
    return found


def test_the_walk_finds_the_run_routes() -> None:
    names = {name for name, _, _ in run_routes(urls.urlpatterns)}
    assert {"run", "replay", "export_json", "export_mmd", "embed_run", "run_do"} <= names
    assert len(names) >= 15
    assert [n for n, _, _ in run_routes(websocket_urlpatterns)] == ["run_stream"]


@pytest.mark.django_db
def test_every_url_that_takes_a_run_id_refuses_a_private_run_to_a_stranger() -> None:
    run = private_run()
    client = stranger()
    room = rooms.open_room(client.session["browser"])  # a room of the stranger's own
    given = {"run_id": run.pk, "code": room.code, "state": "listed"}
    answered = {}
    for name, route, converters in run_routes(urls.urlpatterns):
        path = reverse(name, kwargs={k: given[k] for k in converters})
        response = client.get(path)
        if response.status_code == 405:
            response = client.post(path, {"run": run.pk})
        answered[name] = response.status_code
        assert SECRET not in response.content.decode(errors="replace"), (name, route)
    expected = {name: NOT_404.get(name, 404) for name in answered}
    assert answered == expected


@pytest.mark.django_db
def test_a_run_named_in_a_form_or_a_query_is_refused_too() -> None:
    run = private_run()
    client = stranger()
    room = Room.objects.get(pk=rooms.open_room(client.session["browser"]).code)
    state = {"view": "replay", "run": run.pk, "at": 5, "order": 1}
    shown = client.post(f"/rooms/{room.code}/show", json.dumps(state), "application/json")
    assert shown.status_code == 400 and f"there is no run {run.pk!r}" in shown.text
    assert Room.objects.get(pk=room.code).state.get("run") is None
    beside = {"view": "run", "run": None, "beside": run.pk, "order": 2}
    assert (
        client.post(f"/rooms/{room.code}/show", json.dumps(beside), "application/json").status_code
        == 400
    )
    asked = client.post(f"/rooms/{room.code}/polls", {"run": run.pk, "step": "1"})
    assert asked.status_code == 404
    editor = client.get(f"/scenarios/new/?run={run.pk}")
    assert said_none(editor.text, run) and SECRET not in editor.text
    compared = client.get(f"/compare/?runs={run.pk}")
    assert said_none(compared.text, run) and SECRET not in compared.text
    lesson = client.get(f"/lessons/{run.slug or 'gc-pause-fenced'}/?run={run.pk}")
    assert lesson.status_code == 404 and SECRET not in lesson.text
    plan = client.post("/plans/new/", {"title": "T", "items-0-kind": "replay",
                                       "items-0-run": run.pk})  # fmt: skip
    assert plan.status_code == 400 and said_none(plan.text, run)
    assert not Plan.objects.filter(title="T").exists()


app = AuthMiddlewareStack(URLRouter(websocket_urlpatterns))


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
async def test_every_stream_that_takes_a_run_id_refuses_a_private_run_to_a_stranger() -> None:
    run = await database_sync_to_async(private_run)()
    for name, _, converters in run_routes(websocket_urlpatterns):
        path = reverse(name, urlconf="lockviz.routing", kwargs={"run_id": run.pk})
        assert converters == ["run_id"]
        ws = WebsocketCommunicator(app, path)
        assert (await ws.connect())[0]
        said = json.loads(await ws.receive_from())
        assert said == {"type": "error", "message": f"there is no run {run.pk!r}"}
        assert (await ws.receive_output())["code"] == 4404
        await ws.disconnect()


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
async def test_a_strangers_room_stream_carries_no_private_run_even_if_its_state_names_one() -> None:
    """The room stream reads the state as stored: a state that names a private run (written
    before shows were checked) sends the class nothing of it."""
    run = await database_sync_to_async(private_run)()
    room = await database_sync_to_async(rooms.open_room)("a stranger")
    state = {"view": "replay", "run": run.pk, "at": 40, "lesson": None, "narration": "",
             "title": "", "beside": None}  # fmt: skip
    await database_sync_to_async(Room.objects.filter(pk=room.code).update)(state=state)
    student = Client()
    await database_sync_to_async(student.post)(f"/r/{room.code}")
    cookie = f"sessionid={student.cookies['sessionid'].value}".encode()
    ws = WebsocketCommunicator(app, f"/ws/rooms/{room.code}/", headers=[(b"cookie", cookie)])
    assert (await ws.connect())[0]
    got = []
    while not await ws.receive_nothing(timeout=1):
        got.append(json.loads(await ws.receive_from()))
    await ws.disconnect()
    assert got and got[0]["type"] == "room"
    assert not [m for m in got if m["type"] == "events" and m["events"]]
