"""Nothing before the reveal: a student reads a lesson run's export, run page, replay (and its
chunks of events, with their stored words), walkthrough, fork page and follow data, and finds no
checkpoint's answer, explanation or narration until the presenter reveals it; then that
checkpoint's, and only that one's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.test import Client

from lockviz.models import Poll, Room, Run, RunEvent
from lockviz.scenarios.library import builtin
from tests.conftest import browser_of

pytestmark = pytest.mark.django_db
RECORDED = Path(__file__).parents[2] / "browser" / "data" / "runs" / "gc-pause-fenced.json"


def teachers_run(teacher: Client) -> Run:
    """The presenter's run of the lesson, as the lab recorded one (tests/browser/data/runs)."""
    recorded = json.loads(RECORDED.read_text())
    run = Run.objects.create(
        title="GC pause", slug="gc-pause-fenced", scenario=recorded["scenario"],
        status=Run.Status.FINISHED, verdict=recorded["verdict"], owner=browser_of(teacher),
    )  # fmt: skip
    RunEvent.objects.bulk_create(
        RunEvent(run=run, seq=e["seq"], t_ms=e["t_ms"], actor=e["actor"], kind=e["kind"], data=e)
        for e in recorded["events"]
    )
    return run


def secrets_of(run: Run) -> dict[int, list[str]]:
    """Per checkpoint: what gives its answer away (the explanation and the step's narration; the
    answer itself is one of the choices, so its key is what must not appear)."""
    steps = run.scenario["steps"]
    return {
        i: [s["ask"]["explain"][:50], s["say"][:50]] for i, s in enumerate(steps) if s.get("ask")
    }


def everything(client: Client, run: Run, outcome: str = "?outcome=shown") -> str:
    """Every page, export and data a student can fetch about the run, as one text."""
    urls = [f"/runs/{run.pk}/export.json", f"/runs/{run.pk}/export.mmd",
            f"/runs/{run.pk}/{outcome}", f"/runs/{run.pk}/replay/{outcome}",
            f"/runs/{run.pk}/follow.json", f"/runs/{run.pk}/scenario.json",
            f"/lessons/gc-pause-fenced/?run={run.pk}", f"/runs/{run.pk}/fork/?at=30",
            f"/runs/{run.pk}/events.json?after=0",
            f"/runs/{run.pk}/events.json?after=5"]  # fmt: skip
    texts = []
    for url in urls:
        response = client.get(url)
        assert response.status_code in (200, 403), url
        texts.append(response.content.decode())
    return "\n".join(texts)


def found(text: str, secret: str) -> bool:
    """``secret`` in ``text`` as a page or JSON may write it (escaped either way)."""
    forms = {secret, json.dumps(secret)[1:-1], secret.replace("'", "&#x27;")}
    forms |= {json.dumps(secret, ensure_ascii=False)[1:-1], secret.replace("'", "\\u0027")}
    return any(form in text for form in forms)


def answer_keys(text: str) -> int:
    return len(re.findall(r'"answer":', text))


def open_class(teacher: Client, student: Client) -> Room:
    code = teacher.post("/rooms/")["Location"].split("/")[2]
    student.post(f"/r/{code}", {"name": "Ada"})
    return Room.objects.get(pk=code)


def test_a_student_reads_no_answer_before_the_reveal_and_each_after_its_own() -> None:
    teacher, student = Client(), Client()
    room = open_class(teacher, student)
    run = teachers_run(teacher)
    secrets = secrets_of(run)
    assert sorted(secrets) == [2, 5]

    seen = everything(student, run)
    for step, words in secrets.items():
        for secret in words:
            assert not found(seen, secret), (step, secret)
    assert answer_keys(seen) == 0
    assert "mutual_exclusion" not in json.loads(student.get(f"/runs/{run.pk}/follow.json").content)[
        "scenario"
    ].get("expect", {})

    # The presenter sees everything of their own run.
    own = everything(teacher, run, "")
    assert all(found(own, secret) for words in secrets.values() for secret in words)

    # The presenter asks and reveals the first checkpoint: that one is out, the second is not.
    asked = teacher.post(f"/rooms/{room.code}/polls", {"run": run.pk, "step": "2"}).json()
    assert asked["poll"]["step"] == 2 and "answer" not in asked["poll"]
    assert everything(student, run).count("Redis knows nothing about Alice") == 0  # asked only
    teacher.post(f"/rooms/{room.code}/polls/{asked['poll']['id']}/reveal")
    assert Poll.objects.get(pk=asked["poll"]["id"]).state == Poll.State.REVEALED
    seen = everything(student, run)
    assert all(found(seen, secret) for secret in secrets[2])
    assert not any(found(seen, secret) for secret in secrets[5])


def test_a_student_is_asked_before_a_page_shows_the_outcome() -> None:
    teacher, student, stranger = Client(), Client(), Client()
    open_class(teacher, student)
    run = teachers_run(teacher)
    for page in (f"/runs/{run.pk}/replay/?room=ABCDE", f"/runs/{run.pk}/"):
        asked = student.get(page).content.decode()
        assert "This shows how the run ends" in asked and 'id="show-outcome"' in asked
        assert 'id="page-data"' in asked and '"events"' not in asked  # no event on this page
    shown = student.get(f"/runs/{run.pk}/replay/?room=ABCDE&outcome=shown").content.decode()
    assert "This shows how the run ends" not in shown and '"events"' in shown
    # Someone in no class of this presenter's is not asked (the answers stay out all the same).
    other = stranger.get(f"/runs/{run.pk}/replay/").content.decode()
    assert "This shows how the run ends" not in other and "Redis knows nothing" not in other


def test_the_walkthrough_of_anothers_run_is_refused_to_a_student() -> None:
    teacher, student = Client(), Client()
    open_class(teacher, student)
    run = teachers_run(teacher)
    refused = student.get(f"/lessons/gc-pause-fenced/?run={run.pk}")
    assert refused.status_code == 403 and "another browser" in refused.content.decode()
    assert teacher.get(f"/lessons/gc-pause-fenced/?run={run.pk}").status_code == 200


def test_a_learner_alone_gets_each_answer_only_by_answering() -> None:
    learner, other = Client(), Client()
    run = teachers_run(learner)  # their own run of the lesson
    secrets = secrets_of(run)
    page = learner.get(f"/lessons/gc-pause-fenced/?run={run.pk}").content.decode()
    assert answer_keys(page) == 0
    assert not any(found(page, s) for words in secrets.values() for s in words)
    url = "/lessons/gc-pause-fenced/answer"
    assert other.post(url, {"run": run.pk, "step": "2"}).status_code == 403  # not theirs
    assert learner.post(url, {"run": run.pk, "step": "0"}).status_code == 400  # asks nothing
    got = learner.post(url, {"run": run.pk, "step": "2"}).json()
    assert got["answer"] == builtin()["gc-pause-fenced"].steps[2].ask.answer  # "OK: Bob gets…"
    assert got["explain"].startswith(secrets[2][0]) and got["say"].startswith(secrets[2][1])
    page = learner.get(f"/lessons/gc-pause-fenced/?run={run.pk}").content.decode()
    assert all(found(page, s) for s in secrets[2]) and answer_keys(page) == 1
    assert not any(found(page, s) for s in secrets[5])  # the next one is still to answer
