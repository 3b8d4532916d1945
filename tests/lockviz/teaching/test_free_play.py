"""A free-play session: a live run that takes the learner's clicks as steps, then saves them."""

from __future__ import annotations

import time

import pytest

from lockviz.errors import NotLive, ScenarioError
from lockviz.models import Run
from lockviz.runs import launcher, recorder
from lockviz.scenarios.schema import parse
from lockviz.teaching import play as free_play

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]


def wait(condition, timeout_s: float = 20) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def kinds(run: Run) -> list[tuple[str, str]]:
    return [(e.actor, e.kind) for e in run.events.order_by("seq")]


def test_clicks_become_steps_and_then_a_scenario() -> None:
    scenario = parse(
        {"format": 1, "title": "Free play", "backend": "redis", "fencing": True,
         "ttl_ms": 800, "clients": ["alice", "bob"], "steps": []},
        allow_empty=True,
    )  # fmt: skip
    run = launcher.create_run(scenario)
    recorder.start(run, scenario, open_ended=True)
    wait(lambda: recorder.is_live(run.pk) and recorder._engines[run.pk].started.is_set())
    launcher.inject(run.pk, {"do": "acquire", "client": "alice"})
    wait(lambda: ("alice", "granted") in kinds(run))
    launcher.inject(run.pk, {"do": "pause", "client": "alice", "ms": 1500})
    launcher.inject(run.pk, {"do": "acquire", "client": "bob", "timeout_ms": 3000})
    wait(lambda: ("bob", "granted") in kinds(run))
    with pytest.raises(ScenarioError) as bad:
        launcher.inject(run.pk, {"do": "pause", "client": "mallory", "ms": 10})
    assert bad.value.problems == [
        "client: 'mallory' is not one of the scenario's clients ['alice', 'bob']"
    ]
    launcher.finish(run.pk)
    wait(lambda: Run.objects.get(pk=run.pk).status == Run.Status.FINISHED)
    run.refresh_from_db()
    assert run.verdict["mutual_exclusion"] == "violated"  # alice froze past her lease
    saved = free_play.scenario_from_run(run)
    assert [s["do"] for s in saved["steps"]] == ["acquire", "pause", "acquire"]
    assert saved["steps"][0]["at_ms"] <= saved["steps"][1]["at_ms"] <= saved["steps"][2]["at_ms"]
    assert parse(saved).steps[1].ms == 1500  # a valid scenario, ready to replay
    with pytest.raises(NotLive):  # not a problem with the step: the session has ended
        launcher.inject(run.pk, {"do": "acquire", "client": "alice"})
