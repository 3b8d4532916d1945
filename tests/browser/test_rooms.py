"""A class in four browsers: one presenter, three students — join, follow, poll, reveal, late
join, detach and rejoin, and a student who tries to break the presenter's run."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import (
    FLAGS,  # noqa: F401 (the same chromium, the same flags)
    entry,
)
from tests.browser.test_walkthrough import jump_to_question
from tests.conftest import AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]


@pytest.fixture
def people(browser: Any) -> Iterator[dict[str, Any]]:
    """A teacher's and three students' browsers: separate contexts, separate sessions."""
    contexts, pages = [], {}
    for name, size in (("teacher", (1280, 720)), ("ada", (1280, 800)), ("bob", (390, 844)),
                       ("cy", (1024, 768))):  # fmt: skip
        context = browser.new_context(viewport={"width": size[0], "height": size[1]})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
        page.errors = errors
        contexts.append(context)
        pages[name] = page
    yield pages
    for context in contexts:
        context.close()


def join(page: Any, server: AppServer, code: str, name: str) -> None:
    page.goto(f"{server.url}/r/{code}")
    page.get_by_label("Your name").fill(name)
    page.get_by_role("button", name="Join and follow").click()
    page.wait_for_url(f"**/rooms/{code}/follow/")
    page.locator("#follow-status", has_text="following").wait_for()


def follows(page: Any, events_at_least: int) -> None:
    entry(page)
    page.wait_for_function(f"() => window.entry.follow.shown >= {events_at_least}", timeout=40_000)


def settled_at(page: Any, at: int) -> int:
    """Once the page holds the whole run and shows it up to ``at``: how many events it shows."""
    entry(page)
    page.wait_for_function(
        """(at) => { const f = window.entry.follow;
             return f.state.at === at && f.events.some((e) => e.kind === "run_finished")
               && f.shown === f.events.filter((e) => e.seq <= at).length; }""",
        arg=at,
        timeout=20_000,
    )
    return int(page.evaluate("window.entry.follow.shown"))


def test_a_class_follows_its_presenter(app_server: AppServer, people: dict[str, Any]) -> None:
    teacher, ada, bob, cy = people["teacher"], people["ada"], people["bob"], people["cy"]
    teacher.goto(app_server.url + "/")
    teacher.get_by_role("button", name="Teach a class").click()
    teacher.wait_for_url(re.compile(r".*/rooms/[A-Z0-9]+/$"))
    code = teacher.url.rstrip("/").rsplit("/", 1)[1]
    assert teacher.locator(".join-code").text_content() == code
    assert teacher.locator(".join-qr svg").count() == 1

    join(ada, app_server, code, "Ada")
    page_code = re.sub(r"\s", "", teacher.locator("body").inner_text())
    assert code in page_code
    teacher.locator("#present", has_text="1").wait_for()
    join(bob, app_server, code, "Bob")
    teacher.locator("#present", has_text="2").wait_for()

    # The presenter starts a lesson: the class sees its run stream in, live.
    teacher.goto(app_server.url + "/lessons/gc-pause-fenced/")
    teacher.get_by_role("button", name="Start the lesson on live servers").click()
    teacher.wait_for_url("**/lessons/gc-pause-fenced/?run=*")
    teacher.locator("#live[data-status=finished]").wait_for(timeout=40_000)
    for student in (ada, bob):
        student.locator("#follow-title", has_text="Lesson").wait_for()

    # At a checkpoint, the presenter asks the class; each answers on their own device.
    jump_to_question(teacher, "Alice is frozen", key="ArrowRight")
    teacher.keyboard.press("2")  # the presenter answers the first one alone
    teacher.keyboard.press("Enter")
    jump_to_question(teacher, "Alice wakes and writes with token 1")
    entry(teacher)  # where the presenter is: the walkthrough's current event
    at = teacher.evaluate("(w => w.events[w.pos].seq)(window.entry.walkthrough)")
    for student in (ada, bob):  # they follow the walkthrough's position, not the live end
        follows(student, 5)
    shown = settled_at(ada, at)
    narration = ada.locator("#follow-narration")
    narration.filter(has_text="Alice wakes and writes with token 1").wait_for()  # the question,
    assert "rejects" not in narration.text_content()  # never the narration that answers it
    assert settled_at(bob, at) == shown
    assert shown < ada.evaluate("window.entry.follow.events.length")  # no spoiler
    teacher.get_by_role("button", name="Ask the class this checkpoint").click()
    for student in (ada, bob):
        student.locator("#follow-poll .poll-question", has_text="Alice wakes").wait_for()
    ada.get_by_role("button", name=re.compile("It rejects the write")).click()
    bob.get_by_role("button", name=re.compile("It accepts")).click()
    teacher.locator(".room-tally", has_text="2 of 2 answered").wait_for()
    assert ada.locator(".poll-reveal").is_hidden()  # nobody sees the tally before the reveal

    # A late joiner lands on the current moment: the same question, the same position.
    join(cy, app_server, code, "Cy")
    cy.locator("#follow-poll .poll-question", has_text="Alice wakes").wait_for()
    assert settled_at(cy, at) == shown

    teacher.get_by_role("button", name="Reveal").click()
    for student in (ada, bob, cy):
        answer = student.locator(".poll-answer")
        answer.wait_for()
        assert "It rejects the write" in answer.text_content()
    assert bob.locator(".poll-reveal li.right .n").text_content() == "1"
    # On Bob's phone each of the follower's link-buttons is one box, even where its line wraps.
    buttons = bob.locator(".follow-actions a.button:visible")
    assert buttons.count() == 2
    assert buttons.evaluate_all("els => els.map((e) => e.getClientRects().length)") == [1, 1]

    # Ada explores alone (a read-only replay of the same run), then rejoins with one click.
    ada.get_by_role("link", name="Explore alone ▸").click()
    ada.wait_for_url("**/replay/?room=*")
    ada.get_by_role("link", name="← Rejoin the class").click()
    ada.wait_for_url(f"**/rooms/{code}/follow/")
    ada.locator("#follow-poll .poll-answer").wait_for()

    # Bob opens the presenter's run page: no menus, and a click is refused with a reason.
    run_id = teacher.url.split("run=")[1]
    bob.goto(f"{app_server.url}/runs/{run_id}/")
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
