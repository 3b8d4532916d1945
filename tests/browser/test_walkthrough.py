"""A lesson in a browser: it runs live first, then tells the run and stops to ask."""

from __future__ import annotations

import re
from typing import Any

import pytest

from lockviz.teaching.lessons import course
from tests.conftest import AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]


def jump_to_question(page: Any, start: str, key: str = "n") -> None:
    """Press ``key`` until the checkpoint whose question starts with ``start`` is shown."""
    question = page.locator("#checkpoint:not([hidden]) #question")
    for _ in range(40):
        if question.is_visible() and question.text_content().startswith(start):
            return
        page.keyboard.press(key)
    raise AssertionError(f"no checkpoint {start!r}; at: {page.locator('#event').text_content()}")


def told_answer(page: Any) -> None:
    """Wait for the answer to the checkpoint just answered: the page fetches it only then."""
    page.locator("#result:not([hidden]) #mark:not(:empty)").wait_for()


def judged_live(page: Any, server: AppServer, tries: int = 3) -> None:
    """Wait on a lesson's page for its live run to end; a run that says the machine fell
    behind (inconclusive: a loaded test machine, told honestly) is run again with the page's
    own Re-run button, up to ``tries`` times, as ``told`` does for a run's page. A lesson
    whose run could not keep its story never shows its verdict's headline (issue 34: the suite
    waited 30 s for "fencing saved the data" at the end of such a lesson)."""
    for _ in range(tries):
        page.locator("#live[data-status=finished]").wait_for(timeout=40_000)
        run_id = page.url.split("run=")[1].split("&")[0]
        verdict = page.request.get(f"{server.url}/runs/{run_id}/export.json").json()
        if not verdict.get("inconclusive"):
            return
        page.locator("#rerun").click()
        page.wait_for_url(lambda url, old=run_id: f"run={old}" not in url)
    raise AssertionError(f"{tries} runs of the lesson in a row could not keep their story")


def visible_text(page: Any) -> str:
    return page.locator("body").inner_text()


def test_a_checkpoint_stops_before_the_outcome_and_back_hides_it_again(
    app_server: AppServer, page: Any
) -> None:
    lesson = next(item for item in course() if item.slug == "gc-pause-fenced")
    told = (lesson.scenario.description, lesson.takeaway, lesson.scenario.title)
    page.goto(app_server.url + "/lessons/gc-pause-fenced/")
    # Before the run: the setting, never how it ends.
    assert "alice and bob share one lock on Redis" in page.locator("#lesson-setup").text_content()
    assert not any(words in visible_text(page) for words in told)
    page.get_by_role("button", name="Start the lesson on live servers").click()
    page.wait_for_url("**/lessons/gc-pause-fenced/?run=*")
    judged_live(page, app_server)
    # The learner who waited (and did not scroll) is taken to the walkthrough as it begins:
    # the diagram was ~560 px down, under the header and the live line.
    page.wait_for_function(
        "() => document.getElementById('diagram').getBoundingClientRect().top < innerHeight * 0.4"
    )
    live = page.locator("#live[data-status=finished]")
    assert live.text_content().startswith("Ran live on redis-1 127.0.0.1:")
    assert "storage 127.0.0.1:" in live.text_content()

    # First checkpoint, by keyboard: the question stops Next until it is answered.
    jump_to_question(page, "Alice is frozen", key="ArrowRight")
    text = visible_text(page)
    assert not any(words in text for words in told)
    assert page.locator("#say").text_content().startswith("What will the servers do?")
    step = page.locator("svg#diagram .narration[data-step='2']")
    assert step.locator("text.label").text_content() == "bob asks for the lock"  # its click
    assert "higher token" not in step.locator("title").text_content()
    stopped_at = page.locator("#event").text_content()
    page.keyboard.press("ArrowRight")
    assert page.locator("#event").text_content() == stopped_at
    assert page.locator("#pick-first").is_visible()
    leases = page.locator("svg#diagram .lease-label:visible")
    assert leases.count() == 1  # Bob's grant is not drawn yet
    # Each learner sees the choices in an order of their own: press the wrong one's number.
    shown = page.locator("#checkpoint .choice .text").all_text_contents()
    wrong = shown.index("nil: Alice still holds the lock, so Bob must wait")
    page.keyboard.press(str(wrong + 1))
    page.keyboard.press("Enter")
    told_answer(page)
    assert page.locator("#mark").text_content().startswith("✖ Not quite.")
    assert leases.count() == 2  # now it is: token 2

    # Second checkpoint, by mouse: Alice's stale write.
    jump_to_question(page, "Alice wakes and writes with token 1")
    rejected = page.locator("svg#diagram .rejected-write:visible")
    assert rejected.count() == 0
    assert page.locator("#result").is_hidden()
    assert page.locator("#after").is_hidden()  # the outcome waits for the last answer
    page.get_by_text("It rejects the write: it has already seen the higher token 2").click()
    page.get_by_role("button", name="Check my answer").click()
    told_answer(page)
    assert page.locator("#after").is_visible()  # now it has happened: the take-away
    assert lesson.scenario.description in page.locator("#after").text_content()
    assert page.locator("#mark").text_content().startswith("✔ Right")
    assert "highest fencing token" in page.locator("#explain").text_content()
    rejected.first.wait_for()
    assert "<" in rejected.first.text_content()

    # Back to before the write landed (one event, or a few more where a loaded machine's run
    # recorded others in the outcome after it): the rejection is not drawn there.
    for _ in range(8):
        page.get_by_role("button", name="Back").click()
        if rejected.count() == 0:
            break
    assert rejected.count() == 0
    assert page.locator("#mark").text_content().startswith("✔ Right")  # answer remembered
    assert page.locator("#checkpoint input:checked").count() == 1
    page.get_by_role("button", name="Next ▶").click()
    assert rejected.count() == 1

    for _ in range(60):
        if page.locator("#end").is_visible():
            break
        page.keyboard.press("ArrowRight")
    page.locator("#end #verdict .headline").filter(has_text="fencing saved the data").wait_for()
    takeaway = page.locator("#takeaway").text_content()
    assert "checks fencing tokens rejects its stale write" in takeaway
    # The course index remembers it, in this browser: done, with its take-away.
    page.goto(app_server.url + "/lessons/")
    item = page.locator("#lesson-gc-pause-fenced")
    assert item.locator(".mark").text_content() == "✔ done"
    assert item.locator(".takeaway").is_visible()
    assert page.locator("#lesson-contention .takeaway").is_hidden()  # not done: still hidden
    module = page.locator("#module-redis .module-head .module-done")  # its module: Single Redis
    assert module.text_content().startswith("1 of ")
    assert page.errors == []


def test_the_lessons_index_lists_the_lessons_in_course_order(
    app_server: AppServer, page: Any
) -> None:
    page.goto(app_server.url + "/")
    page.get_by_role("link", name="Lessons", exact=True).click()
    page.wait_for_url("**/lessons/")
    items = page.locator(".course > li")
    assert items.evaluate_all("els => els.map(e => e.dataset.slug)") == [
        lesson.slug for lesson in course()
    ]
    modules = page.locator(".module .module-head h2")
    assert modules.first.text_content().strip().endswith("Single Redis")
    assert modules.last.text_content().strip().endswith("Beyond one lock")
    assert page.locator("#module-redis .minutes").first.text_content().startswith("about ")
    said = page.locator("#module-redis .module-head .meta").inner_text().strip()
    assert re.search(r"\d+ lessons$", said), said  # no "·" before a progress not made yet
    first = items.first
    assert first.locator(".number").text_content() == "1"
    assert first.locator(".minutes").text_content().endswith("min")
    first.get_by_role("link", name="Start lesson 1").click()
    page.get_by_role("button", name="Start the lesson on live servers").click()
    page.wait_for_url(f"**/lessons/{course()[0].slug}/?run=*")
    page.locator("#live[data-status=finished], #live[data-status=failed]").wait_for(timeout=40_000)
    assert page.errors == []
