"""Each metric moves where its thing happens: a refusal where the app refuses, a viewer while a
stream is open, a publish when the layer takes a message; runs and slots as they are at the
scrape."""

from __future__ import annotations

import time

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from django.test import Client
from django.test.utils import override_settings

from lockviz.lab import capacity
from lockviz.lab.capacity import Machine
from lockviz.live import broadcast
from lockviz.models import Run
from lockviz.ops import metrics
from lockviz.routing import websocket_urlpatterns
from lockviz.runs import admission
from lockviz.teaching import rooms
from tests.communicator import WebsocketCommunicator
from tests.conftest import browser_of, builtin_json

HTMX = {"HTTP_HX_REQUEST": "true"}


def sample(name: str, **labels: str) -> float:
    return metrics.REGISTRY.get_sample_value(name, labels) or 0.0


def refusals(reason: str) -> float:
    return sample("lockviz_refusals_total", reason=reason)


def stored_run(status: str, owner: str = "") -> Run:
    return Run.objects.create(
        title="t", scenario=builtin_json("contention"), status=status, owner=owner
    )


@pytest.mark.django_db
def test_a_click_on_someone_elses_run_is_counted_as_not_owner(client: Client) -> None:
    run = stored_run(Run.Status.RUNNING, owner="someone-else")
    before = refusals("not_owner")
    response = client.post(f"/runs/{run.pk}/do", {"do": "crash", "client": "alice"}, **HTMX)
    assert response["X-Fault"] == "refused"
    assert refusals("not_owner") == before + 1
    scraped = client.get("/metrics").content.decode()
    assert f'lockviz_refusals_total{{reason="not_owner"}} {before + 1}' in scraped


@pytest.mark.django_db
def test_a_click_on_an_ended_run_is_counted_as_not_live(client: Client) -> None:
    run = stored_run(Run.Status.FINISHED, owner=browser_of(client))
    before = refusals("not_live")
    assert client.post(f"/runs/{run.pk}/do", {"do": "crash", "client": "alice"}).status_code == 409
    assert client.post(f"/runs/{run.pk}/finish").status_code == 409
    assert refusals("not_live") == before + 2


@pytest.mark.django_db
@override_settings(LOCKVIZ_MAX_PER_BROWSER=0, LOCKVIZ_MAX_QUEUE=0)
def test_a_busy_lab_and_a_browser_with_enough_runs_are_counted_apart(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    busy, too_many = refusals("lab_busy"), refusals("over_share")
    assert client.post("/runs/", {"scenario": "contention"}).status_code == 429
    full = Machine(ceiling=1, sample=False)
    full.running.add("playing")
    full._queue.append("waiting")
    monkeypatch.setattr(admission, "machine", lambda: full)
    assert client.post("/runs/", {"scenario": "contention"}).status_code == 503
    assert (refusals("lab_busy"), refusals("over_share")) == (busy + 1, too_many + 1)


@pytest.mark.django_db
def test_runs_are_counted_by_status_at_each_scrape() -> None:
    for status in (Run.Status.RUNNING, Run.Status.RUNNING, Run.Status.FINISHED):
        stored_run(status)
    assert sample("lockviz_runs", status="running") == 2
    assert sample("lockviz_runs", status="finished") == 1
    assert sample("lockviz_runs", status="cancelled") == 0  # every status, zero too
    Run.objects.filter(status=Run.Status.RUNNING).update(status=Run.Status.INTERRUPTED)
    assert sample("lockviz_runs", status="running") == 0
    assert sample("lockviz_runs", status="interrupted") == 2


@pytest.mark.django_db
def test_lab_slots_and_queue_are_the_machines_now(monkeypatch: pytest.MonkeyPatch) -> None:
    machine = Machine(ceiling=8, start_limit=3, sample=False)
    machine.running.add("a")
    machine._queue.extend(["b", "c"])
    monkeypatch.setattr(capacity, "machine", lambda: machine)
    assert sample("lockviz_lab_slots", state="in_use") == 1
    assert sample("lockviz_lab_slots", state="free") == 2
    assert sample("lockviz_lab_limit") == 3
    assert sample("lockviz_queue_length") == 2


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
async def test_viewers_count_open_streams_of_runs_and_rooms() -> None:
    app = URLRouter(websocket_urlpatterns)
    run = await database_sync_to_async(stored_run)(Run.Status.FINISHED)
    room = await database_sync_to_async(rooms.open_room)("a-presenter")
    runs_before, rooms_before = (
        sample("lockviz_viewers", stream="run"),
        sample("lockviz_viewers", stream="room"),
    )
    watching = WebsocketCommunicator(app, f"/ws/runs/{run.pk}/")
    following = WebsocketCommunicator(app, f"/ws/rooms/{room.code}/")
    assert (await watching.connect())[0] and (await following.connect())[0]
    await watching.receive_from(timeout=10)  # connected through: its status came
    await following.receive_from(timeout=10)  # the room as it is now
    assert sample("lockviz_viewers", stream="run") == runs_before + 1
    assert sample("lockviz_viewers", stream="room") == rooms_before + 1
    await watching.disconnect()
    await following.disconnect()
    assert sample("lockviz_viewers", stream="run") == runs_before
    assert sample("lockviz_viewers", stream="room") == rooms_before


@pytest.mark.live
def test_a_published_message_is_timed_from_queue_to_layer() -> None:
    before = sample("lockviz_event_publish_seconds_count")
    broadcast.publish_frame("room.METRICS", {"type": "state", "state": {}})
    deadline = time.monotonic() + 20
    while sample("lockviz_event_publish_seconds_count") == before:
        assert time.monotonic() < deadline, "the publish was never observed"
        time.sleep(0.05)
    assert sample("lockviz_event_publish_seconds_sum") > 0
    assert sample("lockviz_event_publish_seconds_bucket", le="+Inf") >= before + 1
