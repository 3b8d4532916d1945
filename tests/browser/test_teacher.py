"""A teacher's preparation and lecture, end to end, as issue 22 asks: log in on one browser,
save a run, write a scenario in the editor (three steps, one mistake fixed after the refusal
that names its row) and keep it, build a lecture plan of three items and present it to a room
of two students; then the same account on a second browser has all of it."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.browser.conftest import entry, separate
from tests.browser.test_editor import fill_row
from tests.browser.test_library import import_run, log_in, make_teacher, save
from tests.browser.test_plans import NOTES, QUESTION, build_plan, no_notes
from tests.browser.test_rooms import join, listen
from tests.conftest import AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]


def write_scenario(page: Any, server: AppServer) -> None:
    """Three steps in the editor, the second a mistake the server names by its row; fixed, and
    kept in the library."""
    page.goto(server.url + "/scenarios/new/")
    page.get_by_label("Title").fill("Ada's pause")
    page.get_by_label("The storage checks").select_option("fenced")
    fill_row(page, 0, "0", "acquire", "alice")
    page.get_by_role("button", name="Add a step").click()
    fill_row(page, 1, "100", "pause", "alice", ms="0")
    page.get_by_role("button", name="Add a step").click()
    fill_row(page, 2, "1000", "release", "alice")
    said = page.locator("#editor-said")
    said.get_by_text("step 2 (pause): ms: a pause must last more than 0 ms").wait_for()
    assert page.locator("#editor-save").count() == 0  # nothing to keep until it is valid
    page.locator("#editor-row-1 input[name=ms_1]").fill("500")
    said.get_by_text("✓ Valid: 3 steps, 2 clients").wait_for()
    page.get_by_label("Who may open it").select_option("unlisted")
    page.get_by_role("button", name="Save to my library").click()
    page.wait_for_url("**/scenarios/saved/*/")


def test_a_teachers_day_is_kept_by_the_account_on_a_second_browser(
    app_server: AppServer, browser: Any
) -> None:
    name = make_teacher(app_server)
    sizes = {"teacher": (1280, 720), "ada": (1280, 800), "bob": (390, 844), "later": (1280, 720)}
    with separate(browser, sizes) as people:
        teacher, ada, bob, later = (people[k] for k in ("teacher", "ada", "bob", "later"))
        log_in(teacher, app_server, name)
        run_id = import_run(teacher, app_server, "gc-pause-fenced")
        save(teacher, "private")
        write_scenario(teacher, app_server)
        plan_id = build_plan(teacher, app_server, run_id)

        teacher.get_by_role("button", name="Present this plan").click()
        teacher.wait_for_url(re.compile(r".*/rooms/[A-Z0-9]+/$"))
        code = teacher.url.rstrip("/").rsplit("/", 1)[1]
        frames = {"ada": listen(ada), "bob": listen(bob)}
        join(ada, app_server, code, "Ada")
        join(bob, app_server, code, "Bob")
        teacher.locator("#present", has_text="2").wait_for()
        teacher.keyboard.press("PageDown")  # item 1: the lesson
        teacher.wait_for_url("**/lessons/gc-pause-fenced/")
        title = teacher.title().replace(" · lockviz", "")
        for student in (ada, bob):
            student.locator("#follow-title", has_text=title).wait_for()
        teacher.keyboard.press("PageDown")  # item 2: the saved run, private, shown to its class
        teacher.wait_for_url(f"**/runs/{run_id}/replay/?to=20#seq=5")
        for student in (ada, bob):
            entry(student)
            student.wait_for_function("() => window.entry.follow.state.view === 'replay'")
        teacher.keyboard.press("PageDown")  # item 3: the poll
        for student in (ada, bob):
            student.locator("#follow-poll .poll-question", has_text=QUESTION).wait_for()
        no_notes(ada, frames["ada"])
        no_notes(bob, frames["bob"])

        # The same account on a second browser: the run, the scenario, the plan, its notes.
        log_in(later, app_server, name)
        library = later.locator("main")
        assert later.locator(f"#run-{run_id}").count() == 1, "the saved run is not listed"
        assert "Ada's pause" in library.inner_text(), "the saved scenario is not listed"
        later.goto(app_server.url + "/plans/")
        later.get_by_role("link", name="Week 3: fencing").click()
        later.wait_for_url(f"**/plans/{plan_id}/")
        assert NOTES[0] in later.locator("main").inner_text()
        assert later.get_by_role("link", name="Edit").count() == 1  # theirs: they may change it
        for page in people.values():
            assert page.errors == [], page.errors
