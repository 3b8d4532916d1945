"""Side by side in a browser: fenced against plain storage, both live, on one time axis."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import entry
from tests.conftest import ROOT, AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]
SHOTS = ROOT / "screenshots"


def side_by_side(page: Any, tries: int = 3) -> Any:
    """Press "Run them side by side" on the compare page, and wait for both lanes' verdicts:
    the lanes. A lane whose run says the machine fell behind (inconclusive: a loaded test
    machine, told honestly) is pressed again, up to ``tries`` times, as ``told`` does."""
    lanes = page.locator(".lane")
    for _ in range(tries):
        before = page.url  # a try again starts from the last try's lanes: wait for new ones
        page.get_by_role("button", name="Run them side by side, live").click()
        page.wait_for_url(lambda url, last=before: "/compare/?runs=" in url and url != last)
        assert lanes.count() == 2
        for i in range(2):
            page.locator(".lane[data-done=finished]").nth(i).wait_for(timeout=40_000)
        headlines = page.locator(".lane-headline:not(.pending)")
        headlines.nth(1).wait_for()  # fetched once each lane has ended
        said = [h or "" for h in headlines.all_text_contents()]
        if not any(h.startswith("⚠ Inconclusive") for h in said):
            return lanes
    raise AssertionError(f"{tries} comparisons in a row could not keep their story: {said}")


def test_fenced_against_plain_side_by_side(app_server: AppServer, page: Any) -> None:
    page.goto(app_server.url + "/")
    page.get_by_role("link", name="Compare", exact=True).click()
    page.get_by_label("Scenario").select_option("gc-pause-fenced")
    # The defaults are the comparison: as written with fenced storage, and with plain storage.
    assert page.locator("#id_storage_1").input_value() == "fenced"
    assert page.locator("#id_storage_2").input_value() == "plain"
    lanes = side_by_side(page)
    on, off = lanes.nth(0), lanes.nth(1)
    on.locator(".lane-headline").filter(has_text="fencing saved the data").wait_for()
    off.locator(".lane-headline").filter(has_text="data corrupted").wait_for()
    assert on.locator(".rejected-write").count() == 1
    assert off.locator(".damaged-write").count() == 1

    # Side by side, and one time axis: same pxPerMs, same on-screen scale, same top.
    boxes = [lane.locator("svg").bounding_box() for lane in (on, off)]
    assert boxes[1]["x"] >= boxes[0]["x"] + boxes[0]["width"]
    assert abs(boxes[0]["y"] - boxes[1]["y"]) < 1
    entry(page)
    scales = page.evaluate(
        """() => window.entry.compare.views.map((v) => [v.diagram.px,
             v.diagram.svg.getBoundingClientRect().width / v.diagram.width])"""
    )
    assert scales[0][0] == scales[1][0]
    assert abs(scales[0][1] - scales[1][1]) < 0.01
    # Drawn compact in their share of the width, not shrunk: every word at least 12 px.
    assert min(lane.evaluate(SMALLEST_TEXT) for lane in (on, off)) >= 12
    assert page.errors == []


def test_a_variant_that_cannot_run_is_named_next_to_it(app_server: AppServer, page: Any) -> None:
    page.goto(app_server.url + "/compare/")
    page.locator("#id_backend_3").select_option("redlock")
    page.get_by_role("button", name="Run them side by side, live").click()
    error = page.locator("#variant-3 .errors")
    error.wait_for()
    assert "Redlock cannot fence" in error.text_content()
    assert page.locator("#variant-1 .errors").count() == 0
    assert page.locator("#id_backend_3").input_value() == "redlock"  # nothing lost
    assert page.locator("#id_storage_2").input_value() == "plain"
    assert "?runs=" not in page.url
    assert page.errors == []
    response = page.goto(app_server.url + "/compare/?runs=nope,<x>")
    assert response.status == 404  # the page still says why
    problems = page.locator("#compare-problems")
    assert "There is no run 'nope'." in problems.text_content()
    assert "'<x>' is not a run id" in problems.text_content()


def test_a_lane_on_another_lock_service_does_not_tell_the_original_story(
    app_server: AppServer, page: Any
) -> None:
    page.goto(app_server.url + "/compare/?scenario=gc-pause-fenced")
    page.locator("#id_storage_2").select_option("fenced")
    page.locator("#id_backend_2").select_option("zookeeper")
    page.get_by_role("button", name="Run them side by side, live").click()
    page.wait_for_url("**/compare/?runs=*")
    for i in range(2):
        page.locator(".lane[data-done=finished]").nth(i).wait_for(timeout=60_000)
    redis, zookeeper = page.locator(".lane").nth(0), page.locator(".lane").nth(1)
    told = zookeeper.locator(".narration > title").all_text_contents()
    assert told and not any("Redis" in t for t in told)  # its clicks, not "Alice asks Redis"
    assert any(
        "Alice asks Redis" in t for t in redis.locator(".narration > title").all_text_contents()
    )
    assert "czxid" in zookeeper.locator(".lease-label text").first.text_content()
    assert page.errors == []


OVERFLOW = """() => [...document.querySelectorAll('.variant *, .scenario-pick *')].filter((e) => {
    const box = (e.closest('.variant') || e.closest('.scenario-pick')).getBoundingClientRect();
    const r = e.getBoundingClientRect();
    return r.width && (r.right > box.right + 1 || r.left < box.left - 1);
}).map((e) => e.tagName + ' ' + e.textContent.trim().slice(0, 30))"""


# The smallest text a lane's diagram shows, in px on screen: its font size times the svg's scale.
SMALLEST_TEXT = """lane => { const svg = lane.querySelector('svg');
    const k = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    return Math.min(...[...svg.querySelectorAll('text')]
      .filter(t => t.textContent.trim() && t.getClientRects().length)
      .map(t => parseFloat(getComputedStyle(t).fontSize) * k)); }"""


@pytest.mark.parametrize("width", [390, 700, 1280])
def test_the_compare_form_and_its_errors_fit_their_boxes(
    app_server: AppServer, browser: Any, width: int
) -> None:
    page = browser.new_page(viewport={"width": width, "height": 900})
    page.goto(app_server.url + "/compare/?scenario=redlock-gc-pause")
    page.locator("#id_backend_1").select_option("same")
    page.locator("#id_storage_1").select_option("fenced")  # Redlock cannot fence: a long error
    page.get_by_role("button", name="Run them side by side, live").click()
    page.locator("#variant-1 .errors").wait_for()
    assert page.evaluate(OVERFLOW) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
    page.close()


def test_four_storages_fit_the_width_of_a_720p_projector(
    app_server: AppServer, browser: Any
) -> None:
    """Four lanes never cut: side by side where they are readable (a wide screen), one under
    the other at 1280 px, each whole, its words at least 12 px."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    context.add_init_script("localStorage.setItem('lockviz-presenter', '1')")
    page = context.new_page()
    try:
        page.goto(
            f"{app_server.url}/compare/?scenario=gc-pause-fenced&lanes=fenced,plain,sequencer,cas"
        )
        page.locator("#compare-form button.run-button").click()
        page.wait_for_url("**/compare/?runs=*")
        lanes = page.locator(".lane")
        assert lanes.count() == 4
        for n in range(4):
            page.locator(f".lane[data-done] >> nth={n}").wait_for(timeout=60_000)
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        for n in range(4):
            box = lanes.nth(n).bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= 1280
            assert lanes.nth(n).evaluate(SMALLEST_TEXT) >= 12
        page.screenshot(path=str(SHOTS / "compare-four-1280x720.png"))
        # A screen wide enough has them side by side, every lane whole.
        page.set_viewport_size({"width": 2700, "height": 1000})
        page.wait_for_function(
            "() => !document.getElementById('lanes').classList.contains('stacked')"
        )
        boxes = [lanes.nth(n).bounding_box() for n in range(4)]
        assert len({round(b["y"]) for b in boxes}) == 1
        assert all(b["x"] >= 0 and b["x"] + b["width"] <= 2700 for b in boxes)
    finally:
        context.close()
