"""A class in four browsers: one presenter, three students — join, follow (never ahead of the
presenter: read in each follower's DOM and WebSocket frames), poll, a reveal on the projector
too, late join, detach and rejoin, and a student who tries to break the presenter's run."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import (
    FLAGS,  # noqa: F401 (the same chromium, the same flags)
    entry,
    separate,
)
from tests.browser.test_walkthrough import jump_to_question, told_answer
from tests.conftest import ROOT, AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]


@pytest.fixture
def people(browser: Any) -> Iterator[dict[str, Any]]:
    """A teacher's and three students' browsers: separate contexts, separate sessions."""
    sizes = {"teacher": (1280, 720), "ada": (1280, 800), "bob": (390, 844), "cy": (1024, 768)}
    with separate(browser, sizes) as pages:
        yield pages


def join(page: Any, server: AppServer, code: str, name: str) -> None:
    page.goto(f"{server.url}/r/{code}")
    page.get_by_label("Your name").fill(name)
    page.get_by_role("button", name="Join and follow").click()
    page.wait_for_url(f"**/rooms/{code}/follow/")
    page.locator("#follow-status", has_text="following").wait_for()


def listen(page: Any) -> list[str]:
    """Every WebSocket frame ``page`` receives from now on, as text."""
    frames: list[str] = []

    def on_socket(ws: Any) -> None:
        ws.on("framereceived", lambda p: frames.append(p if isinstance(p, str) else p.decode()))

    page.on("websocket", on_socket)
    return frames


def seqs_in_frames(frames: list[str]) -> list[int]:
    """The seq of every run event the frames carried (room stream or run stream)."""
    found: list[int] = []
    for text in frames:
        message = json.loads(text)
        if message.get("type") == "events" and "events" in message:
            found += [e["seq"] for e in message["events"]]
        elif message.get("type") == "events":
            found += [f["event"]["seq"] for f in message.get("frames", [])]
        elif message.get("type") == "event":
            found.append(message["event"]["seq"])
    return found


def presenter_at(teacher: Any) -> int:
    """The seq of the event the presenter's walkthrough shows (0 before the telling)."""
    entry(teacher)
    return int(teacher.evaluate("(w => w.events[w.pos].seq)(window.entry.walkthrough)"))


def settled_at(page: Any, at: int) -> int:
    """Once the follower shows the run up to ``at``: how many events it shows."""
    entry(page)
    page.wait_for_function(
        """(at) => { const f = window.entry.follow;
             return f.state.at === at && f.events.length && f.events[f.events.length - 1].seq === at
               && f.shown === f.events.length; }""",
        arg=at,
        timeout=20_000,
    )
    return int(page.evaluate("window.entry.follow.shown"))


def nothing_beyond(student: Any, frames: list[str], at: int) -> None:
    """The follower holds no event past the presenter's position ``at``: not in its diagram's
    DOM, not in its page's memory, not in any frame it has received."""
    in_dom = student.evaluate(
        "() => [...document.querySelectorAll('#diagram [data-seq]')].map(g => +g.dataset.seq)"
    )
    entry(student)
    held = student.evaluate(
        "() => window.entry.follow ? window.entry.follow.events.map(e => e.seq) : []"
    )
    assert max([0, *in_dom, *held, *seqs_in_frames(frames)]) <= at, (at, in_dom[-3:], held[-3:])


def test_a_class_follows_its_presenter_never_ahead_and_sees_the_reveal(
    app_server: AppServer, people: dict[str, Any]
) -> None:
    teacher, ada, bob, cy = people["teacher"], people["ada"], people["bob"], people["cy"]
    teacher.goto(app_server.url + "/")
    teacher.get_by_role("button", name="Teach a class").click()
    teacher.wait_for_url(re.compile(r".*/rooms/[A-Z0-9]+/$"))
    code = teacher.url.rstrip("/").rsplit("/", 1)[1]
    assert teacher.locator(".join-code").text_content() == code
    assert teacher.locator(".join-qr svg").count() == 1

    frames = {name: listen(people[name]) for name in ("ada", "bob", "cy")}
    join(ada, app_server, code, "Ada")
    teacher.locator("#present", has_text="1").wait_for()
    join(bob, app_server, code, "Bob")
    teacher.locator("#present", has_text="2").wait_for()
    two = (("ada", ada), ("bob", bob))

    # The presenter starts a lesson: while its run plays live the projector shows nothing of
    # it, and neither does any follower (its events are not even sent to them).
    teacher.goto(app_server.url + "/lessons/gc-pause-fenced/")
    teacher.get_by_role("button", name="Start the lesson on live servers").click()
    teacher.wait_for_url("**/lessons/gc-pause-fenced/?run=*")
    for _, student in two:
        student.locator("#follow-waiting", has_text="the telling starts when it ends").wait_for()
    teacher.locator("#live[data-status=finished]").wait_for(timeout=40_000)
    for name, student in two:
        student.locator("#follow-title", has_text="Lesson").wait_for()
        nothing_beyond(student, frames[name], presenter_at(teacher))

    # The presenter steps to the first checkpoint: the class follows, event by event, no further.
    jump_to_question(teacher, "Alice is frozen", key="ArrowRight")
    at = presenter_at(teacher)
    for name, student in two:
        settled_at(student, at)
        nothing_beyond(student, frames[name], at)
        assert student.locator("#follow-verdict").inner_text() == ""  # no verdict yet
    ada.locator("#follow-narration").filter(has_text="Alice is frozen").wait_for()  # the question
    assert "higher token" not in ada.locator("body").inner_text()  # never the narration

    teacher.get_by_role("button", name="Ask the class this checkpoint").click()
    for _, student in two:
        student.locator("#follow-poll .poll-question", has_text="Alice is frozen").wait_for()
    # The narration line was the question: it gives way to the poll, at a laptop's width too.
    assert ada.locator("body").inner_text().count("Alice is frozen") == 1
    ada.get_by_role("button", name=re.compile("Bob gets the lock")).click()
    bob.get_by_role("button", name=re.compile("Alice still holds")).click()
    teacher.locator(".room-tally", has_text="2 of 2 answered").wait_for()
    assert ada.locator(".poll-reveal").is_hidden()  # nobody sees the tally before the reveal

    # A late joiner lands on the current moment: the same question, the same position.
    join(cy, app_server, code, "Cy")
    cy.locator("#follow-poll .poll-question", has_text="Alice is frozen").wait_for()
    settled_at(cy, at)
    nothing_beyond(cy, frames["cy"], at)

    # Reveal: the projector shows the answer, the explanation and the class's distribution;
    # the lesson takes the class's answer as its own and goes on to the outcome.
    teacher.locator("#room-reveal").click()
    shown = teacher.locator("#room-revealed")
    shown.wait_for()
    assert "OK: Bob gets the lock" in shown.locator(".poll-answer").text_content()
    assert "Redis knows nothing about Alice" in shown.locator(".poll-explain").text_content()
    right = shown.locator(".bars li.right")
    assert "Bob gets the lock" in right.locator(".bar-label").text_content()
    assert right.locator(".n").text_content() == "1"
    assert shown.locator(".bars li").count() == 3
    assert shown.bounding_box()["y"] < 720  # on the projector's first screen
    teacher.screenshot(path=str(ROOT / "screenshots" / "room-reveal-1280x720.png"))
    teacher.locator(".room-tally", has_text="revealed ✔").wait_for()
    for student in (ada, bob, cy):
        answer = student.locator(".poll-answer")
        answer.wait_for()
        assert "OK: Bob gets the lock" in answer.text_content()
    assert bob.locator(".poll-reveal li.right .n").text_content() == "1"
    # The presenter moves on without touching the lesson's own prediction box.
    told_answer(teacher)  # the lesson took the class's reveal as its answer
    teacher.wait_for_timeout(1000)  # the room bar looks every 0.3 s: the reveal stays up
    assert shown.is_visible()  # at the checkpoint's outcome, until the presenter moves on
    assert teacher.locator("#check").is_hidden()
    assert teacher.locator("#next-say").get_attribute("aria-disabled") == "false"
    jump_to_question(teacher, "Alice wakes")
    teacher.wait_for_function("() => document.getElementById('room-revealed').hidden")
    at = presenter_at(teacher)
    for name, student in (*two, ("cy", cy)):
        settled_at(student, at)
        nothing_beyond(student, frames[name], at)
        student.locator("#poll-again").wait_for()  # the revealed question folded away
        assert student.locator("#follow-poll").is_hidden()

    # Ada explores alone: before the reveal the replay asks first; she goes back, no spoilers.
    ada.get_by_role("link", name="Explore alone ▸").click()
    ada.wait_for_url("**/replay/?room=*")
    assert "This shows how the run ends" in ada.locator("h1").text_content()
    assert seqs_in_frames(frames["ada"]) and max(seqs_in_frames(frames["ada"])) <= at
    ada.get_by_role("link", name="← Back to the class, no spoilers").click()
    ada.wait_for_url(f"**/rooms/{code}/follow/")
    settled_at(ada, at)
    nothing_beyond(ada, frames["ada"], at)

    # Bob opens the presenter's run page (saying he wants the outcome): no menus, and a click
    # is refused with a reason.
    run_id = teacher.url.split("run=")[1]
    bob.goto(f"{app_server.url}/runs/{run_id}/?outcome=shown")
    assert bob.locator(".fault-menu, #faults-alice").count() == 0
    assert (
        "only the browser that started it can change it" in bob.locator(".watching").text_content()
    )
    status = bob.evaluate(
        """async (url) => {
             const token = document.querySelector('body').getAttribute('hx-headers')
               .match(/"X-CSRFToken": "([^"]*)"/)[1];
             const r = await fetch(url, {method: 'POST', headers: {'X-CSRFToken': token},
               body: new URLSearchParams({do: 'crash', client: 'alice'})});
             return [r.status, await r.text()];
           }""",
        f"{app_server.url}/runs/{run_id}/do",
    )
    assert status[0] == 403 and "Only the browser that started run" in status[1]

    # The presenter removes Cy (told alone, live), then closes the room: the class is told,
    # live, and its code leads nowhere any more (lockviz.teaching.codes).
    teacher.goto(f"{app_server.url}/rooms/{code}/")
    teacher.get_by_role("button", name="Remove Cy from the room").click()
    cy.locator("#follow-removed", has_text="removed you").wait_for()
    assert ada.locator("#follow-removed").is_hidden()
    teacher.get_by_role("button", name="Close the room").click()
    teacher.locator(".room-ended", has_text="This room is closed").wait_for()
    teacher.screenshot(path=str(ROOT / "screenshots" / "room-closed.png"), full_page=True)
    ada.locator("#follow-ended", has_text="This class has ended").wait_for()
    ada.screenshot(path=str(ROOT / "screenshots" / "follow-ended.png"))
    bob.goto(f"{app_server.url}/r/{code}")  # a closed room: the one answer of a code for nobody
    said = f"There is no open room with the code {code} that you can join"
    assert said in bob.locator(".errors").text_content()
    for name, page in people.items():
        assert page.errors == [], name


def test_joining_by_code_never_starts_a_server(app_server: AppServer, page: Any) -> None:
    page.goto(app_server.url + "/join")
    page.get_by_label("The code on the projector").fill("qqqqq")
    page.get_by_role("button", name="Join").click()
    assert "There is no open room with the code QQQQQ" in page.locator(".errors").text_content()


def test_a_student_on_a_phone_sees_one_header_row_the_choices_and_the_whole_diagram(
    app_server: AppServer, people: dict[str, Any]
) -> None:
    teacher, phone = people["teacher"], people["bob"]  # bob's is a 390×844 phone
    teacher.goto(app_server.url + "/")
    teacher.get_by_role("button", name="Teach a class").click()
    teacher.wait_for_url(re.compile(r".*/rooms/[A-Z0-9]+/$"))
    code = teacher.url.rstrip("/").rsplit("/", 1)[1]
    join(phone, app_server, code, "Bob")
    # One row, and only what a student uses: no "Teach a class", no "Presenter view".
    header = phone.locator("header.site")
    assert header.bounding_box()["height"] < 64
    assert header.get_by_role("button").count() == 0
    assert header.get_by_role("link", name="Leave the class").is_visible()
    assert code in header.inner_text()

    teacher.goto(app_server.url + "/lessons/gc-pause-fenced/")
    teacher.get_by_role("button", name="Start the lesson on live servers").click()
    teacher.wait_for_url("**/lessons/gc-pause-fenced/?run=*")
    teacher.locator("#live[data-status=finished]").wait_for(timeout=40_000)
    jump_to_question(teacher, "Alice is frozen", key="ArrowRight")
    teacher.get_by_role("button", name="Ask the class this checkpoint").click()
    phone.locator("#follow-poll .poll-question", has_text="Alice is frozen").wait_for()
    phone.locator("svg#diagram .lifeline-header").first.wait_for()
    # The choices on the first screen, the question said once where it is read.
    choices = phone.locator("#follow-poll .choice")
    assert choices.count() >= 2
    last = choices.nth(choices.count() - 1).bounding_box()
    assert last["y"] + last["height"] <= 844
    visible = phone.locator("body").inner_text()
    assert visible.count("Alice is frozen") == 1
    # The diagram fits the width; a button zooms it to full size, which then scrolls.
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    box = phone.locator("svg#diagram").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    wrap = phone.locator("svg#diagram").locator("xpath=..")
    assert wrap.evaluate("e => e.scrollWidth <= e.clientWidth")
    zoom = phone.get_by_role("button", name="Zoom the diagram to full size")
    zoom.click()
    assert zoom.get_attribute("aria-pressed") == "true"
    assert wrap.evaluate("e => e.scrollWidth > e.clientWidth")
    assert phone.errors == []
