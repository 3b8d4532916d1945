"""``POST /runs/<id>/do`` under hostile clicks, generated: never a 500; a click is done or
refused with each problem in the answer.

The run is a free-play session whose engine is built but not started (its steps are recorded,
not run): what is tested is the way in, from form fields to ``check_step`` and the run's
limits (a click's pause, clicks per run), not the lab.
"""

from __future__ import annotations

import html
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from django.utils.html import escape
from hypothesis import example, given
from hypothesis import strategies as st

from lockviz.lab.engine import RunEngine
from lockviz.lab.labs import LocalLab
from lockviz.models import Run, RunEvent
from lockviz.runs import recorder
from lockviz.scenarios.schema import Step
from lockviz.scenarios.verbs import VERB_FIELDS, VERBS
from lockviz.teaching.play import session_scenario
from tests.conftest import browser_of
from tests.strategies import FUZZ, LONGEST_PROBLEM, field_path

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}
FORM_TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=30) | st.sampled_from(
    ["alice", "bob", "redis-1", "storage", "mallory", "x" * 300, "<b>", "lab"]
)
ODD_NUMBERS = ["", " ", "1e9", "-0", "\u22125", "1,5", "0x10", "3600", "3601", "60", "59.999"]
NUMBERISH = (
    st.integers(-(10**12), 10**12).map(str)
    | st.floats(allow_nan=True, allow_infinity=True).map(str)
    | st.sampled_from([*ODD_NUMBERS, "1_000", "nan", "inf", "¼"])
    | FORM_TEXT
)


@st.composite
def clicks(draw: st.DrawFn) -> dict[str, Any]:
    """The fields a click may carry (teaching/play.py), each as any text a form can send."""
    form: dict[str, Any] = {"do": draw(st.sampled_from([*VERBS, "", "dance"]) | FORM_TEXT)}
    for name in draw(st.lists(st.sampled_from(["client", "node", "value", "mode"]), max_size=3)):
        form[name] = draw(FORM_TEXT)
    numbers = sorted({*VERB_FIELDS, "s"} - {"nodes", "value", "mode", "check_lease"})
    for name in draw(st.lists(st.sampled_from(numbers), max_size=3)):
        form[name] = draw(NUMBERISH)
    if draw(st.booleans()):
        form["nodes"] = draw(st.lists(FORM_TEXT, max_size=3))
    if draw(st.booleans()):
        form["check_lease"] = draw(st.sampled_from(["on", "off", "", "1"]))
    return form


@pytest.fixture
def session() -> Iterator[tuple[Client, Run, list[Step]]]:
    """A live free-play session of the client's browser; the steps its engine was given."""
    client = Client()
    scenario = session_scenario("redis", 3, True, 2000)
    run = Run.objects.create(
        title=scenario.title, scenario=scenario.to_json(), status=Run.Status.RUNNING,
        owner=browser_of(client), host=recorder.recovery.process_id(),
    )  # fmt: skip
    RunEvent.objects.create(run=run, seq=1, t_ms=0, actor="lab", kind="run_started", data={})
    engine = RunEngine(scenario, LocalLab(), open_ended=True)
    engine._t0_ns = time.monotonic_ns()  # as if it had just started
    engine.started.set()
    taken = engine.steps  # what inject would schedule, kept instead
    engine.inject = taken.append  # type: ignore[method-assign]
    recorder._engines[run.pk] = engine
    yield client, run, taken
    recorder._engines.pop(run.pk, None)


@FUZZ
@given(click=clicks(), htmx=st.booleans())
@example(click={"do": "pause", "client": "alice", "s": "3600"}, htmx=False)  # an hour's pause
@example(click={"do": "partition", "client": "bob", "nodes": ["redis-1", "x" * 300]}, htmx=True)
@example(click={"do": "delay", "client": "bob", "ms": "9" * 100_000}, htmx=False)
def test_a_click_is_done_or_refused_never_a_server_error(
    session: tuple[Client, Run, list[Step]], click: dict[str, Any], htmx: bool
) -> None:
    client, run, taken = session
    taken.clear()  # each case starts a fresh session, far from its last click
    response = client.post(f"/runs/{run.pk}/do", click, **(HTMX if htmx else {}))
    page = response.content.decode()
    if response["X-Fault"] == "done":
        assert response.status_code == 200 and "done: " in page and len(taken) == 1
        return
    assert response.status_code == (200 if htmx else 400) and not taken
    problems = [html.unescape(p) for p in re.findall(r"<li>(.*?)</li>", page, re.S)]
    assert problems and [p for p in problems if field_path(p) is None] == []
    assert [p for p in problems if len(p) > LONGEST_PROBLEM] == []
    if click == {"do": "pause", "client": "alice", "s": "3600"}:
        assert problems[0].startswith("ms: a click may pause a client for at most 60 s now")


def test_a_click_past_the_last_one_allowed_is_refused(
    session: tuple[Client, Run, list[Step]],
) -> None:
    client, run, taken = session
    for _ in range(recorder.MAX_CLICKS):
        assert client.post(f"/runs/{run.pk}/do", {"do": "release", "client": "bob"})["X-Fault"] == (
            "done"
        )
    response = client.post(f"/runs/{run.pk}/do", {"do": "release", "client": "bob"})
    assert response.status_code == 400
    assert escape(f"this run has taken its {recorder.MAX_CLICKS} clicks") in (
        response.content.decode()
    )
    assert len(taken) == recorder.MAX_CLICKS
