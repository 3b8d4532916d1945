"""The plan pages: the editor's form (problems named by item), ownership (another browser reads
and copies, never edits, deletes or presents), export and import round trip, presenting."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from lockviz.models import Plan, Poll, Room, Run
from tests.conftest import browser_of, builtin_json, wait_for_run
from tests.lockviz.teaching.test_plans import stored_run

pytestmark = pytest.mark.django_db


def form(title: str, *items: dict[str, str]) -> dict[str, str]:
    """The editor's fields for ``items`` (rows numbered with gaps, as after a removal)."""
    data = {"title": title}
    for n, item in enumerate(items):
        data.update({f"items-{n * 3}-{key}": value for key, value in item.items()})
    return data


def a_plan(client: Client) -> Plan:
    run = stored_run()
    response = client.post("/plans/new/", form(
        "Week 3",
        {"kind": "lesson", "lesson": "gc-pause-fenced", "note": "the secret note"},
        {"kind": "replay", "run": run.pk, "from": "2", "to": "4"},
        {"kind": "poll", "question": "Who wins?", "choices": "Alice\nBob\n", "note": "Bob"},
    ))  # fmt: skip
    assert response.status_code == 302, response.content.decode()[:2000]
    return Plan.objects.get(pk=response["Location"].strip("/").split("/")[-1])


def test_the_editor_saves_rows_in_order_and_names_each_problem_by_item(client: Client) -> None:
    plan = a_plan(client)
    assert plan.owner == browser_of(client)
    assert [i["kind"] for i in plan.items] == ["lesson", "replay", "poll"]
    assert plan.items[1]["from"] == 2 and plan.items[2]["choices"] == ["Alice", "Bob"]
    page = client.get(f"/plans/{plan.pk}/").content.decode()
    assert "Present this plan" in page and "the secret note" in page

    response = client.post(f"/plans/{plan.pk}/edit/", form(
        "Week 3",
        {"kind": "lesson", "lesson": "gc-pause-fenced"},
        {"kind": "poll", "question": "Who?", "choices": "only one"},
        {"kind": "scenario", "slug": "json", "scenario": "{not json"},
    ))  # fmt: skip
    text = response.content.decode()
    assert response.status_code == 400
    assert "item 2 (poll): choices: give 2 to 6 different answers" in text
    assert "item 3 (live run): scenario: not valid JSON" in text
    assert 'id="items-1-problems"' in text  # beside its row, too
    assert Plan.objects.get(pk=plan.pk).items == plan.items  # nothing kept

    rows = {f"items-{n}-kind": "lesson" for n in range(31)}
    response = client.post("/plans/new/", {"title": "Too long", **rows})
    assert "items: 31 items; a plan has at most 30" in response.content.decode()


def test_another_browser_reads_and_copies_but_cannot_change_a_plan(client: Client) -> None:
    plan = a_plan(client)
    other = Client()
    page = other.get(f"/plans/{plan.pk}/").content.decode()
    assert "Copy to my plans" in page and "Present this plan" not in page
    for url in (f"/plans/{plan.pk}/edit/", f"/plans/{plan.pk}/delete",
                f"/plans/{plan.pk}/present", f"/plans/{plan.pk}/present/1"):  # fmt: skip
        response = other.post(url, form("Mine now", {"kind": "lesson", "lesson": "contention"}))
        assert response.status_code == 403, url
        assert "Only the browser that made plan" in response.content.decode()
    assert other.get(f"/plans/{plan.pk}/edit/").status_code == 403
    assert Plan.objects.get(pk=plan.pk).title == "Week 3"
    copied = other.post(f"/plans/{plan.pk}/copy")
    copy = Plan.objects.get(pk=copied["Location"].strip("/").split("/")[-1])
    without_notes = [{**item, "note": ""} for item in plan.items]  # the owner's, not shared
    assert copy.owner == browser_of(other) and copy.items == without_notes
    assert "Week 3" in other.get("/plans/").content.decode()
    assert "Week 3" not in Client().get("/plans/").content.decode()  # "my plans" only


def test_export_and_import_round_trip_and_a_bad_file_is_named(client: Client) -> None:
    plan = a_plan(client)
    exported = client.get(f"/plans/{plan.pk}/export.json")
    assert exported["Content-Disposition"].endswith(f'lockviz-plan-{plan.pk}.json"')
    other = Client()
    response = other.post(
        "/plans/import", {"file": SimpleUploadedFile("p.json", exported.content), "text": ""}
    )
    again = Plan.objects.get(pk=response["Location"].strip("/").split("/")[-1])
    assert (again.title, again.items) == (plan.title, plan.items)
    assert again.owner == browser_of(other) != plan.owner
    broken: dict[str, Any] = json.loads(exported.content)
    broken["items"][2]["choices"] = ["Alice"]
    refused = other.post("/plans/import", {"text": json.dumps(broken)})
    assert refused.status_code == 400
    assert "item 3 (poll): choices: give 2 to 6" in refused.content.decode()


def test_presenting_steps_through_the_items_and_asks_the_poll(client: Client) -> None:
    plan = a_plan(client)
    response = client.post(f"/plans/{plan.pk}/present")
    code = response["Location"].strip("/").split("/")[-1]
    room = Room.objects.get(pk=code)
    assert room.presenter == browser_of(client)
    bar = client.get(f"/rooms/{code}/").content.decode()
    assert "ready: 3 items" in bar and 'id="plan-next"' in bar
    assert client.post(f"/plans/{plan.pk}/present/1")["Location"] == "/lessons/gc-pause-fenced/"
    page = client.get("/lessons/gc-pause-fenced/").content.decode()
    assert "item 1 of 3: Lesson" in page and "the secret note" in page
    replay = client.post(f"/plans/{plan.pk}/present/2")["Location"]
    assert replay.endswith("/replay/?to=4#seq=2")
    assert client.post(f"/plans/{plan.pk}/present/3")["Location"] == f"/rooms/{code}/"
    poll = Poll.objects.get(room=room)
    assert (poll.question, poll.choices) == ("Who wins?", ["Alice", "Bob"])
    client.post(f"/plans/{plan.pk}/present/3")  # again: the same poll, not a second one
    assert Poll.objects.filter(room=room).count() == 1
    room.refresh_from_db()
    assert "Bob" not in json.dumps(room.state)  # the note ("Bob") is in no state
    assert "secret" not in json.dumps(room.state)


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_a_scenario_item_starts_its_run_live_once_and_again_on_start_again(
    client: Client,
) -> None:
    own = builtin_json("contention")
    own["title"] = "My own contention"
    response = client.post("/plans/new/", form(
        "Live",
        {"kind": "scenario", "slug": "gc-pause-fenced"},
        {"kind": "scenario", "slug": "json", "scenario": json.dumps(own)},
    ))  # fmt: skip
    plan = Plan.objects.get(pk=response["Location"].strip("/").split("/")[-1])
    assert plan.items[1]["scenario"]["title"] == "My own contention"
    client.post(f"/plans/{plan.pk}/present")
    first = client.post(f"/plans/{plan.pk}/present/1")["Location"]
    run = wait_for_run(first.strip("/").split("/")[-1])
    assert (run.slug, run.owner) == ("gc-pause-fenced", browser_of(client))
    assert run.status == Run.Status.FINISHED
    assert client.post(f"/plans/{plan.pk}/present/1")["Location"] == first  # not again
    again = client.post(f"/plans/{plan.pk}/present/1", {"again": "1"})["Location"]
    assert again != first
    wait_for_run(again.strip("/").split("/")[-1])
    mine = wait_for_run(client.post(f"/plans/{plan.pk}/present/2")["Location"].split("/")[-2])
    assert mine.title == "My own contention" and mine.status == Run.Status.FINISHED


def test_add_to_plan_appends_one_item_checked_and_numbered(client: Client) -> None:
    plan = a_plan(client)
    own = json.dumps(builtin_json("contention"))
    response = client.post(f"/plans/{plan.pk}/add", {"kind": "scenario", "scenario": own})
    assert response.status_code == 302
    plan.refresh_from_db()
    assert plan.items[3]["kind"] == "scenario" and plan.items[3]["scenario"]["backend"]
    refused = client.post(f"/plans/{plan.pk}/add", {"kind": "poll", "question": "Q?"})
    assert refused.status_code == 400
    assert "item 5 (poll): choices: give 2 to 6" in refused.content.decode()
    assert Client().post(f"/plans/{plan.pk}/add", {"kind": "lesson"}).status_code == 403
    assert len(Plan.objects.get(pk=plan.pk).items) == 4
