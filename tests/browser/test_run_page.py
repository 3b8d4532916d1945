"""The story of the issue, in a browser: pick the GC-pause scenario, run it, see fencing work."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

from tests.browser.conftest import entry, told
from tests.conftest import ROOT, AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]
SHOTS = ROOT / "screenshots"


def press_run(page: Any, server: AppServer, storage: str = "") -> Callable[[], None]:
    """The index page's Run button of the GC-pause scenario (with ``storage`` chosen)."""

    def press() -> None:
        page.goto(server.url + "/")
        card = page.locator("#scenario-gc-pause-fenced")
        if storage:
            card.get_by_label("what the storage checks").select_option(storage)
        card.get_by_role("button", name="Run on live servers").click()

    return press


def test_fenced_gc_pause_shows_the_rejected_write(app_server: AppServer, page: Any) -> None:
    told(page, press_run(page, app_server), "fencing saved the data")
    rejected = page.locator("svg#diagram .rejected-write")
    rejected.first.wait_for(timeout=30_000)
    assert "<" in rejected.first.text_content()  # "REJECTED 1 < 2": the tokens, compared
    assert page.locator("svg#diagram .overlap").count() >= 1
    assert page.locator("#run-status").text_content() == "finished"
    os.makedirs(SHOTS, exist_ok=True)
    page.screenshot(path=str(SHOTS / "run-fenced.png"), full_page=True)
    assert page.errors == []


def test_fencing_off_flags_corruption(app_server: AppServer, page: Any) -> None:
    told(page, press_run(page, app_server, "plain"), "data corrupted")
    assert page.locator("svg#diagram .rejected-write").count() == 0
    # The damage, drawn at the storage where and when the stale write lands, in red, saying
    # what it destroyed.
    damage = page.locator("svg#diagram .damaged-write")
    assert damage.count() == 1
    label = damage.locator("text.damage-label")
    assert label.text_content() == "A (token 1) overwrote B (token 2)"
    red = {"rgb(164, 14, 38)", "rgb(192, 23, 43)"}  # --danger, --danger-fill
    assert label.evaluate("n => getComputedStyle(n).fill") in red
    assert damage.locator(".warn-triangle").evaluate("n => getComputedStyle(n).fill") in red
    storage_x = float(page.locator("svg#diagram [data-actor=storage] text.name").get_attribute("x"))
    tip = damage.locator(".warn-triangle").get_attribute("points").split()[0]
    assert abs(float(tip.split(",")[0]) - storage_x) < 1  # on the storage's lifeline
    seq = int(damage.get_attribute("data-seq"))  # drawn with the write's reply: when it lands
    entry(page)
    kind = page.evaluate("s => window.entry.run.diagram.events.find(e => e.seq === s).kind", seq)
    assert kind == "reply"
    link = page.locator("#verdict a.moment-link")  # the verdict links to that moment
    assert link.get_attribute("href").endswith(f"/replay/#seq={seq}")
    link.click()
    assert "current" in damage.get_attribute("class")
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


def test_the_redlock_card_cannot_choose_fenced_storage(app_server: AppServer, page: Any) -> None:
    page.goto(app_server.url + "/")
    redlock = page.locator("#scenario-redlock-gc-pause")
    fenced = redlock.get_by_label("what the storage checks").locator("option[value=fenced]")
    assert fenced.is_disabled()
    assert "Redlock cannot fence" in redlock.locator(".no-fencing").text_content()
    assert (
        page.locator("#scenario-gc-pause-fenced")
        .get_by_label("what the storage checks")
        .locator("option[value=fenced]")
        .is_enabled()
    )


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
