"""The story of the issue, in a browser: pick the GC-pause scenario, run it, see fencing work."""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.conftest import ROOT, AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]
SHOTS = ROOT / "screenshots"


def test_fenced_gc_pause_shows_the_rejected_write(app_server: AppServer, page: Any) -> None:
    page.goto(app_server.url + "/")
    card = page.locator("#scenario-gc-pause-fenced")
    card.get_by_role("button", name="Run on live servers").click()
    page.wait_for_url("**/runs/*/")
    rejected = page.locator("svg#diagram .rejected-write")
    rejected.first.wait_for(timeout=30_000)
    assert "<" in rejected.first.text_content()  # "REJECTED 1 < 2": the tokens, compared
    page.locator("#verdict .headline").filter(has_text="fencing saved the data").wait_for(
        timeout=30_000
    )
    assert page.locator("svg#diagram .overlap").count() >= 1
    assert page.locator("#run-status").text_content() == "finished"
    os.makedirs(SHOTS, exist_ok=True)
    page.screenshot(path=str(SHOTS / "run-fenced.png"), full_page=True)
    assert page.errors == []


def test_fencing_off_flags_corruption(app_server: AppServer, page: Any) -> None:
    page.goto(app_server.url + "/")
    card = page.locator("#scenario-gc-pause-fenced")
    card.get_by_label("fencing tokens checked by the storage").uncheck()
    card.get_by_role("button", name="Run on live servers").click()
    page.wait_for_url("**/runs/*/")
    headline = page.locator("#verdict .headline")
    headline.filter(has_text="data corrupted").wait_for(timeout=30_000)
    assert page.locator("svg#diagram .damaged-write").count() == 1
    assert page.locator("svg#diagram .rejected-write").count() == 0
    page.screenshot(path=str(SHOTS / "run-unfenced.png"), full_page=True)
    assert page.errors == []


def test_a_bad_ttl_is_named_inline_and_the_page_stays(app_server: AppServer, page: Any) -> None:
    page.goto(app_server.url + "/")
    card = page.locator("#scenario-contention")
    card.locator("input[name=ttl_ms]").evaluate(
        "el => { el.removeAttribute('min'); el.removeAttribute('step'); el.value = '50'; }"
    )
    card.get_by_role("button", name="Run on live servers").click()
    error = page.locator("#scenario-contention .errors")
    error.wait_for(timeout=10_000)
    assert "TTL" in error.text_content() and "100" in error.text_content()
    assert page.url.rstrip("/") == app_server.url


def test_presenter_view_widens_the_diagram_and_is_remembered(
    app_server: AppServer, page: Any
) -> None:
    page.goto(app_server.url + "/")
    page.locator("#scenario-contention").get_by_role("button", name="Run on live servers").click()
    page.wait_for_url("**/runs/*/")
    page.locator("#verdict .headline").wait_for(timeout=30_000)
    before = page.locator("svg#diagram").bounding_box()["width"]
    page.get_by_role("button", name="Presenter view").click()
    assert page.get_by_role("button", name="Presenter view").get_attribute("aria-pressed") == "true"
    after = page.locator("svg#diagram").bounding_box()["width"]
    assert after > before * 1.15  # the side panel moved below: the diagram takes the width
    page.reload()
    assert "presenter" in page.locator("html").get_attribute("class")
    page.keyboard.press("z")  # and the key turns it off again
    assert "presenter" not in (page.locator("html").get_attribute("class") or "")
    assert page.errors == []
