"""A lesson in a browser: it runs live first, then tells the run and stops to ask."""

from __future__ import annotations

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


def test_a_checkpoint_stops_before_the_outcome_and_back_hides_it_again(
    app_server: AppServer, page: Any
) -> None:
    page.goto(app_server.url + "/lessons/gc-pause-fenced/")
    page.get_by_role("button", name="Start the lesson on live servers").click()
    page.wait_for_url("**/lessons/gc-pause-fenced/?run=*")
    live = page.locator("#live[data-status=finished]")
    live.wait_for(timeout=40_000)
    assert live.text_content().startswith("Ran live on redis-1 127.0.0.1:")
    assert "storage 127.0.0.1:" in live.text_content()

    # First checkpoint, by keyboard: the question stops Next until it is answered.
    jump_to_question(page, "Alice is frozen", key="ArrowRight")
    stopped_at = page.locator("#event").text_content()
    page.keyboard.press("ArrowRight")
    assert page.locator("#event").text_content() == stopped_at
    assert page.locator("#pick-first").is_visible()
    assert page.locator("svg#diagram .lease-label").count() == 1  # Bob's grant is not drawn yet
    page.keyboard.press("1")  # "nil: Alice still holds the lock" is wrong
    page.keyboard.press("Enter")
    assert page.locator("#mark").text_content().startswith("✖ Not quite.")
    assert page.locator("svg#diagram .lease-label").count() == 2  # now it is: token 2

    # Second checkpoint, by mouse: Alice's stale write.
    jump_to_question(page, "Alice wakes and writes with token 1")
    rejected = page.locator("svg#diagram .rejected-write")
    assert rejected.count() == 0
    assert page.locator("#result").is_hidden()
    page.get_by_text("It rejects the write: it has already seen token 2").click()
    page.get_by_role("button", name="Check my answer").click()
    assert page.locator("#mark").text_content().startswith("✔ Right")
    assert "highest fencing token" in page.locator("#explain").text_content()
    rejected.first.wait_for()
    assert "<" in rejected.first.text_content()

    page.get_by_role("button", name="Back").click()
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
    assert "fencing token checked by the storage" in page.locator("#takeaway").text_content()
    assert page.errors == []


def test_the_lessons_index_lists_the_lessons_in_course_order(
    app_server: AppServer, page: Any
) -> None:
    page.goto(app_server.url + "/")
    page.get_by_role("link", name="Lessons", exact=True).click()
    page.wait_for_url("**/lessons/")
    items = page.locator("#course > li")
    assert items.evaluate_all("els => els.map(e => e.dataset.slug)") == [
        lesson.slug for lesson in course()
    ]
    first = items.first
    assert first.locator(".number").text_content() == "1"
    assert first.locator(".minutes").text_content().endswith("min")
    first.get_by_role("link", name="Start lesson 1").click()
    page.get_by_role("button", name="Start the lesson on live servers").click()
    page.wait_for_url(f"**/lessons/{course()[0].slug}/?run=*")
    page.locator("#live[data-status=finished], #live[data-status=failed]").wait_for(timeout=40_000)
    assert page.errors == []
