"""A learner's progress kept on the server, and a room's class view and CSV: no servers (the
runs are rows; the live ones: tests/browser/test_exercises.py)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from lockviz.exercises import classview, progress
from lockviz.models import Attempt, CheckpointAnswer, LessonMark, Member, Room, Run
from lockviz.teaching import lessons
from tests.conftest import browser_of

pytestmark = pytest.mark.django_db
LESSON = "gc-pause-unfenced"


def checkpoints() -> list[int]:
    found = lessons.lesson(LESSON)
    assert found is not None
    return [i for i, s in enumerate(found.scenario.steps) if s.ask is not None]


def answer(client: Client, run: Run, step: int, choice: str = "", skipped: bool = False) -> None:
    form = {"run": run.pk, "step": str(step), "choice": choice}
    if skipped:
        form["skipped"] = "1"
    assert client.post(f"/lessons/{LESSON}/answer", form).status_code == 200


def test_a_lessons_answers_and_marks_are_kept_and_scored(client: Client) -> None:
    client.get("/lessons/")
    me = browser_of(client)
    run = Run.objects.create(slug=LESSON, title="t", scenario={}, owner=me, status="finished")
    scored: list[tuple[str, float]] = []
    progress.scored.connect(
        lambda sender, learner, item, score, **_: scored.append((item, score)), weak=False,
        dispatch_uid="test",
    )  # fmt: skip
    try:
        lesson = lessons.lesson(LESSON)
        assert lesson is not None
        steps = checkpoints()
        first = lesson.scenario.steps[steps[0]].ask
        assert first is not None
        answer(client, run, steps[0], first.answer)
        client.post(f"/lessons/{LESSON}/answer", {"run": run.pk, "step": str(steps[0])})  # a fetch
        assert CheckpointAnswer.objects.get(learner=me, step=steps[0]).correct is True
        assert not scored  # not every checkpoint answered yet
        for step in steps[1:]:
            answer(client, run, step, skipped=True)
        assert scored == [(f"lesson:{LESSON}", 1 / len(steps))]
    finally:
        progress.scored.disconnect(dispatch_uid="test")
    client.post(f"/progress/lessons/{LESSON}", {"state": "done"})
    client.post(f"/progress/lessons/{LESSON}", {"state": "started"})  # done stays done
    assert progress.lessons(me) == {LESSON: "done"}
    assert '"progress": {"gc-pause-unfenced": "done"}' in client.get("/lessons/").content.decode()


def test_a_rooms_class_view_names_each_members_work_and_only_its_presenter_sees_it() -> None:
    teacher, ann, bob = Client(), Client(), Client()
    teacher.post("/rooms/")
    room = Room.objects.get()
    for who, name in ((ann, "Ann"), (bob, "Bob")):
        who.get(f"/r/{room.code}")
        who.post(f"/r/{room.code}", {"name": name})
    ann_id, bob_id = (m.browser for m in Member.objects.order_by("joined"))
    LessonMark.objects.create(learner=ann_id, lesson=LESSON, state="done")
    CheckpointAnswer.objects.create(learner=ann_id, lesson=LESSON, step=checkpoints()[0],
                                    choice="Both", correct=False)  # fmt: skip
    for outcome in ("unsolved", "inconclusive", "solved"):
        Attempt.objects.create(exercise="fix-redis-fencing", title="t", learner=bob_id, answer={},
                               goal="safe", outcome=outcome)  # fmt: skip
    table = classview.table(room)
    assert [c.key for c in table.columns] == [f"lesson:{LESSON}", "exercise:fix-redis-fencing"]
    cells = {line.name: line.cells for line in table.lines}
    assert cells["Ann"][0].text.startswith("done · 0 of") and "Both ✘" in cells["Ann"][0].detail
    assert cells["Bob"][1].text == "✔ solved in 2 attempts"  # the inconclusive one did not count
    assert cells["Bob"][0].text == "not started"
    page = teacher.get(f"/rooms/{room.code}/progress/").content.decode()
    assert "solved in 2 attempts" in page and "Ann" in page
    csv = teacher.get(f"/rooms/{room.code}/progress.csv")
    assert csv["Content-Type"].startswith("text/csv")
    assert "Bob,not started,✔ solved in 2 attempts" in csv.content.decode()
    assert ann.get(f"/rooms/{room.code}/progress/").status_code == 403  # a student: not theirs
    assert ann.get(f"/rooms/{room.code}/progress.csv").status_code == 403
    assert "solved in 2 attempts" not in ann.get("/progress/").content.decode()  # only her own


def test_a_browser_that_logs_in_brings_its_progress() -> None:
    client = Client()
    client.get("/lessons/")
    token = browser_of(client)
    LessonMark.objects.create(learner=token, lesson=LESSON, state="started")
    Attempt.objects.create(exercise="fix-redis-fencing", title="t", learner=token, answer={},
                           goal="safe", outcome="solved")  # fmt: skip
    user = User.objects.create_user("ada", password="a long password 1")
    client.post("/accounts/login/", {"username": "ada", "password": "a long password 1"})
    owner = f"account:{user.pk}"
    assert progress.lessons(owner) == {LESSON: "started"}
    assert progress.exercises(owner)["fix-redis-fencing"].solved
