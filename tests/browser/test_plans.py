"""A lecture plan in three browsers: a teacher builds a plan of three items in the editor (a
lesson, a replay of a recorded run from one moment to another, a poll), fixing the mistake the
server names by its item, reorders with the keyboard, and presents it to a room of two students
with one key; each student's page follows each item (the lesson's title, the replay at its
moments, the poll's choices), and the teacher's notes reach no student: not their page, not a
WebSocket frame."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import FLAGS, entry, separate  # noqa: F401 (the same chromium, the same flags)
from tests.browser.recorded import import_run
from tests.browser.test_accessibility import violations
from tests.browser.test_rooms import join, listen, nothing_beyond, settled_at
from tests.conftest import ROOT, AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]
RUNS = Path(__file__).parent / "data" / "runs"
NOTES = ("NOTE-ONE ask who has seen a GC pause", "NOTE-TWO pause at 20", "NOTE-THREE it is Bob")
QUESTION = "Who may write after the pause?"


@pytest.fixture
def people(browser: Any) -> Iterator[dict[str, Any]]:
    """A teacher's and two students' browsers: separate contexts, separate sessions."""
    with separate(browser, dict.fromkeys(("teacher", "ada", "bob"), (1280, 800))) as pages:
        yield pages


def row(page: Any, n: int) -> Any:
    return page.locator(".plan-row").nth(n - 1)


def build_plan(teacher: Any, server: AppServer, run_id: str) -> str:
    """The three items, typed into the editor as a teacher would; the plan's id."""
    teacher.goto(server.url + "/plans/")
    teacher.get_by_role("link", name="New plan").click()
    teacher.get_by_label("Title").fill("Week 3: fencing")
    first = row(teacher, 1)
    first.get_by_label("What").select_option("lesson")
    first.get_by_label("Lesson", exact=True).select_option("gc-pause-fenced")
    first.get_by_label("Your note").fill(NOTES[0])
    # The poll first (item 2), then the replay (item 3): reordered below, by keyboard.
    teacher.get_by_role("button", name="Add an item").click()
    poll = row(teacher, 2)
    poll.get_by_label("What").select_option("poll")
    poll.get_by_label("Question").fill(QUESTION)
    poll.get_by_label("Choices").fill("Alice")  # a mistake: one choice
    poll.get_by_label("Your note").fill(NOTES[2])
    teacher.get_by_role("button", name="Add an item").press("Enter")
    replay = row(teacher, 3)
    assert replay.get_by_label("What").evaluate("e => e === document.activeElement")
    replay.get_by_label("What").select_option("replay")
    replay.get_by_label("Run id").fill(run_id)
    replay.get_by_label("From moment #").fill("5")
    replay.get_by_label("to moment #").fill("20")
    replay.get_by_label("Your note").fill(NOTES[1])
    move_up = replay.get_by_role("button", name="Move up item 3")
    move_up.focus()
    teacher.keyboard.press("Enter")  # the replay is item 2 now, the poll item 3
    assert row(teacher, 2).get_by_label("Run id").input_value() == run_id
    teacher.locator("#plan-moved", has_text="it is item 2 now").wait_for()
    assert (
        row(teacher, 2)
        .get_by_role("button", name="Move up item 2")
        .evaluate("e => e === document.activeElement")
    )  # the focus moved with the item

    teacher.get_by_role("button", name="Save the plan").click()
    problems = teacher.locator("#plan-problems")
    problems.wait_for()
    assert "item 3 (poll): choices: give 2 to 6 different answers" in problems.inner_text()
    assert "choices" in row(teacher, 3).locator(".row-problems").inner_text()
    row(teacher, 3).get_by_label("Choices").fill("Alice\nBob\nBoth of them")
    teacher.get_by_role("button", name="Save the plan").click()
    teacher.wait_for_url(re.compile(r".*/plans/\w+/$"))
    items = teacher.locator(".plan-items > li")
    assert items.count() == 3
    assert "Lesson" in items.nth(0).inner_text() and "Replay" in items.nth(1).inner_text()
    assert QUESTION in items.nth(2).inner_text()
    return str(teacher.url.rstrip("/").rsplit("/", 1)[1])


def no_notes(student: Any, frames: list[str]) -> None:
    """No teacher's note on the student's page, in its HTML or in any frame it received."""
    html = student.content()
    for note in NOTES:
        assert note not in html
        assert not [f for f in frames if note in f]
    assert "NOTE-" not in html and not [f for f in frames if "NOTE-" in f]


def test_a_teacher_builds_a_plan_of_three_items_and_presents_it_to_two_students(
    app_server: AppServer, people: dict[str, Any]
) -> None:
    teacher, ada, bob = people["teacher"], people["ada"], people["bob"]
    recorded = json.loads((RUNS / "gc-pause-fenced.json").read_text())
    run_id = import_run(app_server, recorded)
    plan_id = build_plan(teacher, app_server, run_id)

    teacher.get_by_role("button", name="Present this plan").click()
    teacher.wait_for_url(re.compile(r".*/rooms/[A-Z0-9]+/$"))
    code = teacher.url.rstrip("/").rsplit("/", 1)[1]
    assert "ready: 3 items" in teacher.locator("#plan-bar").inner_text()
    frames = {"ada": listen(ada), "bob": listen(bob)}
    join(ada, app_server, code, "Ada")
    join(bob, app_server, code, "Bob")
    teacher.locator("#present", has_text="2").wait_for()
    students = (("ada", ada), ("bob", bob))

    # Item 1, a lesson: one key; the class sees the lesson's title.
    teacher.keyboard.press("PageDown")
    teacher.wait_for_url("**/lessons/gc-pause-fenced/")
    bar = teacher.locator("#plan-bar")
    assert "item 1 of 3: Lesson" in bar.inner_text()
    assert NOTES[0] in teacher.locator("#plan-note").inner_text()
    lesson_title = teacher.title().replace(" · lockviz", "")  # "Lesson 4: Fencing tokens…"
    assert lesson_title.startswith("Lesson ")
    for _, student in students:
        student.locator("#follow-title", has_text=lesson_title).wait_for()

    # Item 2, the replay: it opens at its from-moment, and playing stops at its to-moment.
    teacher.keyboard.press("PageDown")
    teacher.wait_for_url(f"**/runs/{run_id}/replay/?to=20#seq=5")
    assert "item 2 of 3: Replay" in teacher.locator("#plan-bar").inner_text()
    assert NOTES[1] in teacher.locator("#plan-note").inner_text()
    assert "Playing stops at #20" in teacher.locator("#rp-stop").inner_text()
    entry(teacher)
    teacher.wait_for_function("() => window.entry.replay.seq === 5")
    for name, student in students:
        settled_at(student, 5)
        nothing_beyond(student, frames[name], 5)
        assert student.evaluate("window.entry.follow.state.view") == "replay"
    teacher.evaluate("window.entry.replay.play()")
    teacher.wait_for_function(
        "() => !window.entry.replay.playing && window.entry.replay.seq === 20", timeout=30_000
    )
    for name, student in students:
        settled_at(student, 20)
        nothing_beyond(student, frames[name], 20)

    # Item 3, the poll: the room is asked it, with its choices.
    teacher.keyboard.press("PageDown")
    teacher.wait_for_url(f"**/rooms/{code}/")
    assert "item 3 of 3: Poll: " + QUESTION in teacher.locator("#plan-bar").inner_text()
    assert NOTES[2] in teacher.locator("#plan-note").inner_text()
    assert teacher.locator("#plan-next").is_disabled()  # the last item
    for _, student in students:
        student.locator("#follow-poll .poll-question", has_text=QUESTION).wait_for()
        assert student.locator("#follow-title").inner_text() == "A question for the class"
        choices = student.locator("#follow-poll .choice").all_inner_texts()
        assert [c.strip() for c in choices] == ["Alice", "Bob", "Both of them"]
    ada.get_by_role("button", name=re.compile("^Bob")).click()
    teacher.locator(".room-tally", has_text="1 of 2 answered").wait_for()

    # One key back: the replay again, where the class follows it.
    teacher.keyboard.press("PageUp")
    teacher.wait_for_url(f"**/runs/{run_id}/replay/?to=20#seq=5")
    for _, student in students:
        student.wait_for_function("() => window.entry.follow.state.view === 'replay'")

    for name, student in students:
        no_notes(student, frames[name])
    teacher.goto(f"{app_server.url}/plans/{plan_id}/")
    for name, page in people.items():
        assert page.errors == [], name


CLASS = {"teacher": (1280, 720), "laptop": (1366, 768), "phone": (390, 844), "screen": (1024, 768)}
IN_VIEW = """() => { const n = document.querySelector('svg#diagram .current');
  if (!n) return null; const r = n.getBoundingClientRect();
  return r.bottom > 0 && r.top < innerHeight; }"""


def test_a_plan_carries_the_class_from_item_to_item(app_server: AppServer, browser: Any) -> None:
    """Each item brings every student to its top, or to the moment the presenter shows; the
    page says what is so (a lesson opened, not yet run); a poll item shows the poll and no empty
    diagram; its reveal is an overlay on the projector, as a checkpoint's is."""
    recorded = json.loads((RUNS / "gc-pause-fenced.json").read_text())
    run_id = import_run(app_server, recorded)
    plan = {"lockviz_plan": 1, "title": "Week 4", "items": [
        {"kind": "lesson", "lesson": "gc-pause-fenced"},
        {"kind": "replay", "run": run_id, "from": 5, "to": 20},
        {"kind": "poll", "question": QUESTION, "choices": ["Alice", "Bob", "Both of them"]},
    ]}  # fmt: skip
    with separate(browser, CLASS) as people:
        teacher = people["teacher"]
        teacher.context.add_init_script("localStorage.setItem('lockviz-presenter', '1')")
        students = [people[name] for name in ("laptop", "phone", "screen")]
        teacher.goto(app_server.url + "/plans/")
        teacher.locator("#plan-text").fill(json.dumps(plan))
        teacher.get_by_role("button", name="Import the plan").click()
        teacher.get_by_role("button", name="Present this plan").click()
        teacher.wait_for_url(re.compile(r".*/rooms/[A-Z0-9]+/$"))
        code = teacher.url.rstrip("/").rsplit("/", 1)[1]
        for n, student in enumerate(students):
            join(student, app_server, code, f"Student {n}")
            assert student.locator("#follow-lanes").is_hidden()  # nothing shown: no empty box

        # Item 1, a lesson not started yet: the class is told so, not that it plays.
        teacher.keyboard.press("PageDown")
        teacher.wait_for_url("**/lessons/gc-pause-fenced/")
        for student in students:
            student.locator("#follow-waiting", has_text="has not started yet").wait_for()
            assert "playing on live servers" not in student.locator("body").inner_text()

        # Item 2, the replay: every student lands on the presenter's moment; one who scrolls
        # away is brought back when it moves.
        teacher.keyboard.press("PageDown")
        teacher.wait_for_url(f"**/runs/{run_id}/replay/?to=20#seq=5")
        for student in students:
            settled_at(student, 5)
            student.wait_for_function(IN_VIEW)
            assert violations(student) == []
            student.evaluate("window.scrollTo(0, document.body.scrollHeight)")
        entry(teacher)
        teacher.evaluate("window.entry.replay.play()")
        teacher.wait_for_function(
            "() => !window.entry.replay.playing && window.entry.replay.seq === 20", timeout=30_000
        )
        for student in students:
            settled_at(student, 20)
            student.wait_for_function(IN_VIEW)
            student.evaluate("window.scrollTo(0, document.body.scrollHeight)")  # and away again

        # Item 3, the poll: each student at the top of the page, the question and its choices
        # there, no diagram and no word of the replay's run.
        teacher.keyboard.press("PageDown")
        teacher.wait_for_url(f"**/rooms/{code}/")
        for student in students:
            student.locator("#follow-poll .poll-question", has_text=QUESTION).wait_for()
            student.wait_for_function("() => window.scrollY === 0")
            assert student.locator("#follow-lanes").is_hidden()
            assert student.locator("#follow-status").inner_text() == "following"
            box = student.locator("#follow-poll .choice").last.bounding_box()
            assert box and box["y"] + box["height"] <= student.viewport_size["height"]
            assert violations(student) == []
        students[0].get_by_role("button", name=re.compile("^Bob")).click()
        students[1].get_by_role("button", name=re.compile("^Both")).click()
        teacher.locator(".room-tally", has_text="2 of 3 answered").wait_for()

        # Reveal: on the projector, an overlay on its first screen, as a checkpoint's.
        teacher.locator("#room-reveal").click()
        shown = teacher.locator("#room-revealed")
        shown.wait_for()
        assert QUESTION in shown.locator(".poll-question").inner_text()
        assert shown.locator(".bars li").count() == 3
        box = shown.bounding_box()
        assert box and box["y"] < 720 / 2 and box["y"] + box["height"] <= 720
        teacher.screenshot(path=str(ROOT / "screenshots" / "plan-poll-reveal-1280x720.png"))
        assert violations(teacher) == []
        for student in students:
            student.locator(".poll-answer, .poll-reveal .bars li").first.wait_for()
            assert violations(student) == []

        # One key back: the replay, each student at its moment again.
        teacher.keyboard.press("PageUp")
        teacher.wait_for_url(f"**/runs/{run_id}/replay/?to=20#seq=5")
        for student in students:
            settled_at(student, 5)
            student.wait_for_function(IN_VIEW)
        for name, page in people.items():
            assert page.errors == [], name
