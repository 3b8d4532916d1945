"""What if…? forks: the steps up to a moment fixed, the rest edited, the fork a run like any
other (stored, replayable, exported, forked again), beside its original with the moment marked."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from lockviz.errors import ScenarioError
from lockviz.models import Member, Room, Run, RunEvent, Share
from lockviz.teaching import control, forks, rooms, sharing
from tests.conftest import browser_of, wait_for_run
from tests.lockviz.runs.test_exports import recorded

pytestmark = pytest.mark.django_db


def stored(owner: str = "someone") -> Run:
    """The recorded gc-pause-fenced run, as the app stores a finished run."""
    data = recorded("gc-pause-fenced")
    run = Run.objects.create(
        slug="gc-pause-fenced", title=data["scenario"]["title"], scenario=data["scenario"],
        status=Run.Status.FINISHED, verdict=data["verdict"], owner=owner,
    )  # fmt: skip
    RunEvent.objects.bulk_create(
        RunEvent(run=run, seq=e["seq"], t_ms=e["t_ms"], actor=e["actor"], kind=e["kind"], data=e)
        for e in data["events"]
    )
    return run


def form(at: forks.Split, **changes: Any) -> dict[str, Any]:
    """The editor's form as the page fills it in, with ``changes`` (``ms_1``...) on top."""
    data: dict[str, Any] = {"at": at.moment.seq}
    rows = forks.rows(at)
    data["rows"] = len(rows)
    for i, row in enumerate(rows):
        for name in (*forks.FIELDS, "orig"):
            data[f"{name}_{i}"] = row[name]
        if row["keep"]:
            data[f"keep_{i}"] = "on"
    data.update(changes)
    return {k: v for k, v in data.items() if v is not False}


def test_the_steps_dispatched_by_the_moment_are_fixed_and_the_rest_editable() -> None:
    run = stored()
    at = forks.split(run, 9)  # bob's acquire has just been dispatched (step 3)
    assert at is not None and at.moment.at_ms == 2800
    assert [s["do"] for s in at.fixed] == ["acquire", "pause", "acquire"]
    assert [s["do"] for s in at.rest] == ["write", "release", "write", "release"]
    assert forks.split(run, 1).fixed == []  # type: ignore[union-attr]  (the start)
    assert forks.split(run, 99999) is None


def test_a_shorter_pause_becomes_the_forks_scenario() -> None:
    run = stored()
    at = forks.split(run, 2)  # alice's acquire dispatched; her pause not yet
    assert at is not None and at.rest[0]["do"] == "pause"
    scenario_ = forks.fork_scenario(
        run, at, forks.rest_from_form(form(at, ms_0="1000"), at, parse_run(run)), "fenced"
    )
    steps = scenario_.steps
    assert steps[0].do == "acquire" and steps[1].do == "pause" and steps[1].ms == 1000
    assert steps[1].say is None  # edited: the original's words no longer fit it
    assert steps[2].say  # unchanged: its words stay
    assert scenario_.expect is None and scenario_.title.startswith("What if…? ")
    assert all(step.ask is None for step in steps)


def parse_run(run: Run) -> Any:
    from lockviz.scenarios.schema import parse

    return parse(run.scenario)


def test_steps_are_dropped_added_and_the_storage_switched() -> None:
    run = stored()
    at = forks.split(run, 9)
    n = len(at.rest)
    data = form(at, **{f"keep_{n - 1}": False})  # drop alice's release at the end
    data.update({f"do_{n}": "crash", f"who_{n}": "storage", f"at_ms_{n}": "3000"})  # a fault
    rest = forks.rest_from_form(data, at, parse_run(run))
    assert [s["do"] for s in rest] == ["write", "release", "write", "crash"]
    assert rest[-1] == {"do": "crash", "node": "storage", "at_ms": 3000}
    built = forks.fork_scenario(run, at, rest, "sequencer")
    assert built.storage == "sequencer" and len(built.steps) == 7


def test_an_edit_before_the_moment_or_a_bad_field_is_named_by_its_step() -> None:
    run = stored()
    at = forks.split(run, 9)
    with pytest.raises(ScenarioError) as info:
        rest = forks.rest_from_form(form(at, at_ms_0="100"), at, parse_run(run))
        forks.fork_scenario(run, at, rest, "fenced")
    assert info.value.problems == [
        "step 4.at_ms: 100 ms is before the moment the fork parts from the run (2800 ms); the "
        "steps before it are fixed"
    ]
    with pytest.raises(ScenarioError) as info:
        forks.rest_from_form(form(at, ms_1="soon", do_1="pause"), at, parse_run(run))
    assert info.value.problems == ["step 5: ms: 'soon' is not a whole number of milliseconds"]
    with pytest.raises(ScenarioError) as info:  # someone the run does not have
        forks.rest_from_form(form(at, who_1="mallory"), at, parse_run(run))
    assert info.value.problems == [
        "step 5: who: 'mallory' is not in this run; choose one of alice, bob, redis-1, storage"
    ]
    with pytest.raises(ScenarioError) as info:  # the schema's own problems, by the same number
        rest = forks.rest_from_form(form(at, value_1="v" * 201, do_1="write"), at, parse_run(run))
        forks.fork_scenario(run, at, rest, "fenced")
    assert info.value.problems == ["step 5.value: String should have at most 200 characters"]


def test_the_fork_page_shows_the_moment_the_fixed_steps_and_the_rows(client: Client) -> None:
    run = stored()
    page = client.get(f"/runs/{run.pk}/fork/?at=9").content.decode()
    assert 'id="fork-moment"' in page and "after event #9, at 2800 ms" in page
    assert page.count('<li><span class="when">') == 3  # the three fixed steps
    assert 'name="ms_0"' in page and 'name="keep_0" checked' in page
    assert client.get(f"/runs/{run.pk}/fork/?at=abc").status_code == 404
    posted = client.post(f"/runs/{run.pk}/fork/", {"at": "abc", "rows": "1"})
    assert posted.status_code == 404 and "has no event &#x27;abc&#x27;" in posted.content.decode()
    live = Run.objects.create(title="t", scenario=run.scenario, status=Run.Status.RUNNING)
    assert client.get(f"/runs/{live.pk}/fork/").status_code == 409


def test_a_refused_fork_keeps_the_learners_edits(client: Client) -> None:
    run = stored()
    at = forks.split(run, 9)
    response = client.post(f"/runs/{run.pk}/fork/", form(at, at_ms_0="100", value_0="Z"))
    page = response.content.decode()
    assert response.status_code == 400 and "before the moment the fork parts" in page
    assert 'name="value_0" value="Z"' in page and Run.objects.count() == 1


def test_a_fork_is_exported_with_its_parent_and_opens_beside_it(client: Client) -> None:
    parent = stored()
    fork = Run.objects.create(
        title="What if…? t", scenario=parent.scenario, status=Run.Status.FINISHED,
        parent=parent, diverged_seq=9, diverged_ms=2800.2, owner=browser_of(client),
    )  # fmt: skip
    exported = client.get(f"/runs/{fork.pk}/export.json").json()
    assert exported["fork"] == {"parent": parent.pk, "diverged_seq": 9, "diverged_ms": 2800.2}
    page = client.get(f"/compare/?runs={parent.pk},{fork.pk}").content.decode()
    data = json.loads(page.split('id="page-data" type="application/json">')[1].split("<")[0])
    marks = [lane["marks"] for lane in data["lanes"]]
    assert marks[0] == marks[1] == [{"t_ms": 2800.2, "label": "what if…? parts from here (2.80 s)"}]
    assert "What if…? (from 2.80 s)" in page
    assert f"/runs/{fork.pk}/fork/" in page  # forkable again
    replay = client.get(f"/runs/{fork.pk}/replay/").content.decode()
    assert f'a What if…? fork of <a href="/runs/{parent.pk}/replay/">' in replay
    assert 'id="rp-whatif"' in replay


def test_a_student_shares_a_fork_with_the_presenter_only(client: Client) -> None:
    room = rooms.open_room("the-presenter")
    student = browser_of(client)
    Member.objects.create(room=room, browser=student, name="Ada")
    parent = stored("the-presenter")
    fork = Run.objects.create(
        title="What if…? t", scenario=parent.scenario, status=Run.Status.FINISHED,
        parent=parent, diverged_seq=9, diverged_ms=2800.0, owner=student,
    )  # fmt: skip
    page = client.get(f"/compare/?runs={parent.pk},{fork.pk}").content.decode()
    assert f"Share with the presenter of room {room.code}" in page
    assert client.post(f"/rooms/{room.code}/share", {"run": parent.pk}).status_code == 403
    response = client.post(f"/rooms/{room.code}/share", {"run": fork.pk})
    assert response.status_code == 200 and response.json()["shared"]["name"] == "Ada"
    assert sharing.shared(room) == []  # listed once the presenter approves it
    assert sharing.shared(room, Share.State.WAITING)[0]["run"] == fork.pk
    control.decide(room, fork.pk, Share.State.LISTED)
    assert sharing.shared(room)[0]["compare"] == f"/compare/?runs={parent.pk},{fork.pk}"
    other = Room.objects.create(presenter="x")
    assert client.post(f"/rooms/{other.code}/share", {"run": fork.pk}).status_code == 403


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_a_fork_runs_live_and_can_be_forked_again(client: Client) -> None:
    parent = stored()
    at = forks.split(parent, 2)  # alice holds the lock, her pause is still to come
    assert at is not None and at.rest[1]["client"] == "bob" and at.rest[1]["do"] == "acquire"
    response = client.post(f"/runs/{parent.pk}/fork/", form(at, keep_1=False))  # no bob
    assert response.status_code == 302 and response["Location"].startswith("/compare/?runs=")
    fork = wait_for_run(response["Location"].split(",")[1])
    assert (fork.parent_id, fork.diverged_seq, fork.owner) == (parent.pk, 2, browser_of(client))
    assert fork.verdict["mutual_exclusion"] == "held"  # nobody else ever took the lock
    assert fork.scenario["steps"][0] == {**parent.scenario["steps"][0]}  # the fixed step
    again = forks.split(fork, 2)
    assert again is not None and [s["do"] for s in again.fixed] == ["acquire"]
