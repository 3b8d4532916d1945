"""An htmx request that fails says so in a sentence (static/lockviz/request-problems.js): a
proxy's 502, a connection that drops; and where lockviz answered a refusal with its own words,
those words are what the learner reads."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]
START = "Run on live servers"


def start_button(page: Any) -> Any:
    return page.locator("#scenario-gc-pause-fenced").get_by_role("button", name=START)


def script_errors(page: Any) -> list[str]:
    """Errors other than the failed request's own (the browser and htmx log those)."""
    expected = ("Failed to load resource", "Response Status Error", "htmx:", "net::ERR_FAILED")
    return [e for e in page.errors if not any(part in e for part in expected)]


def test_a_start_that_the_proxy_answers_502_says_so(app_server: AppServer, page: Any) -> None:
    page.goto(app_server.url + "/")
    alert = page.locator("#request-problem")
    assert alert.get_attribute("role") == "alert" and alert.text_content() == ""
    page.route("**/runs/", lambda route: route.fulfill(status=502, body="Bad Gateway"))
    start_button(page).click()
    alert.get_by_text("lockviz is not answering right now").wait_for(timeout=10_000)
    text = alert.text_content()
    assert text.startswith("Not done.") and "(502" in text and "Wait a moment" in text
    assert alert.is_visible()
    assert page.url.rstrip("/") == app_server.url  # nothing else happened
    alert.get_by_role("button", name="Dismiss").click()
    assert alert.text_content() == ""
    assert script_errors(page) == []


def test_a_dropped_connection_says_to_check_it(app_server: AppServer, page: Any) -> None:
    page.goto(app_server.url + "/")
    page.route("**/runs/", lambda route: route.abort("connectionreset"))
    start_button(page).click()
    alert = page.locator("#request-problem")
    alert.get_by_text("Could not reach lockviz: check your connection").wait_for(timeout=10_000)
    assert alert.is_visible()
    page.unroute("**/runs/")
    page.route("**/runs/", lambda route: route.fulfill(status=403, body="Forbidden"))
    start_button(page).click()  # a new request clears the old sentence; this one says its own
    alert.get_by_text("The server refused this (403").wait_for(timeout=10_000)
    assert "Could not reach" not in alert.text_content()
    assert script_errors(page) == []


def test_lockviz_own_words_for_a_refusal_win(app_server: AppServer, page: Any) -> None:
    page.goto(app_server.url + "/")
    said = '<p class="fault-result refused" id="said">Not done: this run has ended.</p>'
    page.route(
        "**/runs/",
        lambda route: route.fulfill(status=409, body=said, headers={"X-Fault": "refused"}),
    )
    start_button(page).click()
    page.locator("#scenario-gc-pause-fenced #said").wait_for(timeout=10_000)
    assert page.locator("#request-problem").text_content() == ""
    assert script_errors(page) == []
