"""Exercises and a class's progress in a real browser, on live servers.

A learner solves a Break-it exercise by adding a fault in the step rows; a run the machine could
not keep to its schedule (its lab host frozen for 3 s: the real thing, not a stand-in) is
inconclusive and counts neither way. A Fix-it exercise refuses, by name, a change it does not
allow. A room's teacher watches two students' progress arrive live, without reloading, and
downloads it as CSV; a student sees only their own. Every new page passes axe-core."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from lockviz.lab import procs
from tests.browser.conftest import entry, separate, settled
from tests.browser.test_accessibility import violations
from tests.browser.test_rooms import join
from tests.conftest import AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]


def add_fault(page: Any, at_ms: int, who: str, verb: str, ms: int) -> None:
    row = page.locator(".step-row").last
    row.locator("select[name^=do_]").select_option(verb)
    row.locator("input[name^=at_ms_]").fill(str(at_ms))
    row.locator("input[name^=who_]").fill(who)
    row.locator("input[name^=ms_]").fill(str(ms))


def judged(page: Any) -> str:
    """Run the answer on the form; the attempt's outcome, once the server has judged it."""
    page.get_by_role("button", name="Run it live").click()
    page.wait_for_url("**attempt=*")
    done = page.locator("#attempt-result:not([data-outcome=pending])")
    done.wait_for(timeout=90_000)
    return str(done.get_attribute("data-outcome"))


def lab_host(app: AppServer) -> int:
    """The pid of the app's own lab host (``serve`` starts it: lockviz/labhost/embedded.py)."""
    found = [pid for pid in app.children() if "labhost" in procs.cmdline(pid)]
    assert len(found) == 1, [procs.cmdline(pid) for pid in app.children()]
    return found[0]


@contextmanager
def frozen_for(pid: int, seconds: float) -> Iterator[None]:
    """``pid`` stopped for ``seconds`` (SIGSTOP, then SIGCONT, whatever happens)."""
    os.kill(pid, signal.SIGSTOP)
    try:
        time.sleep(seconds)
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def test_a_learner_solves_a_break_it_exercise_and_an_inconclusive_run_does_not_count(
    shared_app: AppServer, page: Any
) -> None:
    page.goto(shared_app.url + "/exercises/break-redis-pause/")
    add_fault(page, 200, "alice", "pause", 3500)
    # The lab falls behind as the run's schedule begins (its lab host frozen for 3 s after the
    # first step: alice's lease runs on the server meanwhile): its verdict says the story was
    # not kept, and the attempt counts neither way.
    page.get_by_role("button", name="Run it live").click()
    page.wait_for_url("**attempt=*")
    entry(page)
    page.wait_for_function(
        "() => window.entry.exercise.diagram.events.some((e) => e.kind === 'step')",
        timeout=60_000,
    )
    with frozen_for(lab_host(shared_app), 3.0):
        pass
    page.locator("#attempt-result:not([data-outcome=pending])").wait_for(timeout=90_000)
    result = page.locator("#attempt-result")
    assert result.get_attribute("data-outcome") == "inconclusive", result.inner_text()
    assert "Inconclusive: does not count" in result.inner_text()
    assert "the machine fell behind" in result.inner_text()
    assert page.locator("#solution").count() == 0  # nothing earned
    # The rows keep the answer; run it again on a machine that keeps up.
    assert page.locator("select[name=do_0]").input_value() == "pause"
    for _ in range(3):
        if (outcome := judged(page)) != "inconclusive":
            break
    assert outcome == "solved", page.locator("#attempt-result").inner_text()
    text = page.locator("#attempt-result").inner_text()
    assert "Solved." in text and "Data corrupted" in text
    assert "Solved in 1 attempt" in text  # the inconclusive ones did not count
    assert page.locator("#solution").is_visible()
    page.goto(shared_app.url + "/exercises/")
    assert "solved in 1 attempt" in page.locator("#exercise-break-redis-pause").inner_text()


def test_a_fix_it_exercise_refuses_a_change_it_does_not_allow_by_name(
    shared_app: AppServer, page: Any
) -> None:
    page.goto(shared_app.url + "/exercises/fix-redis-fencing/")
    assert "fixed by this exercise" in page.locator("[data-knob=ttl_ms]").inner_text()
    page.get_by_label("Lease (ttl_ms)").fill("9000")
    page.get_by_label("The storage checks").select_option("fenced")
    page.get_by_role("button", name="Run it live").click()
    problem = page.locator("#exercise-problems")
    problem.wait_for()
    assert (
        "ttl_ms: this exercise fixes the lease (ttl_ms) at 2000; you may change only the "
        "storage kind" in problem.inner_text()
    )
    assert page.get_by_label("Lease (ttl_ms)").input_value() == "9000"  # as the learner left it
    assert page.locator("#attempt-result").get_attribute("data-outcome") == "none"  # no run


def test_a_teacher_sees_two_students_progress_live_and_downloads_it(
    shared_app: AppServer, browser: Any, tmp_path: Any
) -> None:
    sizes = {"teacher": (1280, 900), "ann": (1024, 768), "bob": (390, 844)}
    with separate(browser, sizes) as people:
        teacher, ann, bob = people["teacher"], people["ann"], people["bob"]
        teacher.goto(shared_app.url + "/")
        teacher.get_by_role("button", name="Teach a class").click()
        teacher.wait_for_url("**/rooms/*/")
        code = teacher.url.rstrip("/").rsplit("/", 1)[1]
        join(ann, shared_app, code, "Ann")
        join(bob, shared_app, code, "Bob")
        table = teacher.locator("#class-progress-table")
        table.get_by_text("2 students, nothing started yet").wait_for()
        # Each predicts, and the lab decides: Ann right, Bob wrong. The teacher's page is not
        # reloaded: the room's stream says progress moved, and the table is fetched again.
        for student, choice in ((ann, "A client waits in vain"), (bob, "The lock does its job")):
            student.goto(shared_app.url + "/exercises/predict-redis-no-ttl/")
            student.get_by_label(choice).check()
            student.get_by_role("button", name="Predict, then run it live").click()
            student.wait_for_url("**attempt=*")
        rows = {name: teacher.locator("#class-table tr", has_text=name) for name in ("Ann", "Bob")}
        rows["Ann"].get_by_text("solved in 1 attempt").wait_for(timeout=90_000)
        rows["Bob"].get_by_text("1 attempt, not solved yet").wait_for(timeout=90_000)
        assert not violations(teacher), violations(teacher)  # the filled table, too
        with teacher.expect_download() as download:
            teacher.get_by_role("link", name="Download as CSV").click()
        csv = download.value.path().read_text()
        assert (
            csv.splitlines()[0]
            == 'learner,"Exercise: Predict: a lock without a lease, and a crash"'
        )
        assert "Ann,✔ solved in 1 attempt" in csv and 'Bob,"1 attempt, not solved yet"' in csv
        # A student sees only their own: the class view is the presenter's.
        refused = bob.request.get(f"{shared_app.url}/rooms/{code}/progress/")
        assert refused.status == 403
        bob.goto(shared_app.url + "/progress/")
        mine = bob.locator("main").inner_text()
        assert "1 attempt, not solved yet" in mine and "Ann" not in mine


def test_the_new_pages_pass_axe(shared_app: AppServer, browser: Any) -> None:
    found: dict[str, list[str]] = {}
    with separate(browser, {"wide": (1280, 720), "phone": (390, 844)}) as pages:
        for size, page in pages.items():
            for path in ("/exercises/", "/exercises/break-redis-pause/",
                         "/exercises/fix-pg-pooled/", "/exercises/predict-zk-partition/",
                         "/progress/"):  # fmt: skip
                page.goto(shared_app.url + path)
                settled(page)
                if problems := violations(page):
                    found[f"{path} ({size})"] = problems
        page = pages["wide"]
        page.goto(shared_app.url + "/exercises/fix-redis-fencing/")
        page.get_by_label("Lease (ttl_ms)").fill("9000")
        page.get_by_role("button", name="Run it live").click()
        page.locator("#exercise-problems").wait_for()
        found.update({"a refused fix": p} if (p := violations(page)) else {})
        page.goto(shared_app.url + "/")
        page.get_by_role("button", name="Teach a class").click()
        page.wait_for_url("**/rooms/*/")
        page.locator("#class-table-empty").wait_for()
        found.update({"a room's class view": p} if (p := violations(page)) else {})
    assert not found, found
