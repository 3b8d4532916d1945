"""The presenter view of a live run, as a room and a class see it: at 1280×720 the diagram and
the verdict on the first screen, labels of at least 18 px, what the room need not see folded,
every lifeline there from the start, the latest moment followed while the run streams; and the
same view on a phone."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError

from tests.browser.recorded import DATA as RECORDED
from tests.browser.recorded import import_run
from tests.browser.test_accessibility import violations
from tests.browser.test_replay import run_live
from tests.browser.test_walkthrough import jump_to_question
from tests.conftest import ROOT, AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]
SHOTS = ROOT / "screenshots"
INCONCLUSIVE = ROOT / "tests" / "lockviz" / "data" / "gc-pause-fenced-inconclusive-run.json"
LABEL_PX = """() => {
    const svg = document.getElementById('diagram');
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    return [...svg.querySelectorAll('text.label')]
        .filter(t => getComputedStyle(t).visibility !== 'hidden' && t.getClientRects().length)
        .map(t => parseFloat(getComputedStyle(t).fontSize) * scale);
}"""


def presenter_page(browser: Any, width: int, height: int) -> Any:
    context = browser.new_context(viewport={"width": width, "height": height})
    context.add_init_script("localStorage.setItem('lockviz-presenter', '1')")
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.on("console", lambda msg: msg.type == "error" and page.errors.append(msg.text))
    return page


def presenter_run(browser: Any, server: AppServer, size: tuple[int, int], scenario: str) -> Any:
    """A presenter's page of ``size`` that has pressed ``scenario``'s live run on the index."""
    page = presenter_page(browser, *size)
    page.goto(server.url + "/")
    page.locator(f"#scenario-{scenario}").get_by_role("button", name="Run on live servers").click()
    page.wait_for_url("**/runs/*/")
    return page


def close_clean(page: Any, shot: str) -> None:
    """Keep a screenshot of the page as it ends, check it had no script error, close it."""
    page.screenshot(path=str(SHOTS / shot))
    assert page.errors == []
    page.context.close()


def test_a_projector_sees_the_diagram_and_the_verdict_at_1280x720(
    app_server: AppServer, browser: Any
) -> None:
    page = presenter_run(browser, app_server, (1280, 720), "gc-pause-fenced")
    # Every lifeline from the start: the servers' columns are there before their first event.
    headers = page.locator("svg#diagram .lifeline-header")
    assert headers.evaluate_all("hs => hs.map(h => h.dataset.actor)") == [
        "alice", "bob", "redis-1", "storage",
    ]  # fmt: skip
    storage_x = page.locator("svg#diagram [data-actor=storage] text.name").get_attribute("x")
    assert page.locator("html").get_attribute("class") == "presenter"
    page.locator("#verdict .headline").wait_for(timeout=40_000)
    assert (
        page.locator("svg#diagram [data-actor=storage] text.name").get_attribute("x") == storage_x
    )
    # The first screen: the verdict above the diagram, both in view, wherever the page followed.
    verdict = page.locator(".verdict-slot").bounding_box()
    diagram = page.locator("svg#diagram").bounding_box()
    assert 0 <= verdict["y"] < 720 - 60 and diagram["y"] < 720
    assert page.evaluate("window.scrollY") > 0  # it followed the run down
    end = page.locator("svg#diagram .run-end line").bounding_box()
    assert 0 < end["y"] < 720  # and the end of the run is on screen
    sizes = page.evaluate(LABEL_PX)
    assert sizes and min(sizes) >= 18
    # Folded: the description, the servers, the exports; a toggle shows each.
    assert page.locator("#fold-description").is_hidden()
    assert page.locator("#servers").is_hidden()
    page.get_by_role("button", name="Description").click()
    assert page.locator("#fold-description").is_visible()
    close_clean(page, "presenter-1280x720.png")


def test_a_phone_following_the_class_gets_the_same_view_fitted(
    app_server: AppServer, browser: Any
) -> None:
    page = presenter_run(browser, app_server, (390, 844), "contention")
    page.locator("#verdict .headline").wait_for(timeout=40_000)
    assert page.evaluate("document.documentElement.scrollWidth") <= 391  # no page overflow
    assert page.locator(".verdict-slot").bounding_box()["y"] < 844
    assert min(page.evaluate(LABEL_PX)) >= 7
    close_clean(page, "presenter-phone.png")


TEXT_PX = """() => {
    const svg = document.getElementById('diagram');
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    return [...svg.querySelectorAll('text')]
        .filter(t => t.textContent.trim() && t.getClientRects().length
                     && getComputedStyle(t).visibility !== 'hidden')
        .map(t => [parseFloat(getComputedStyle(t).fontSize) * scale, t.textContent]);
}"""
DIAGRAM_TOP = "() => document.getElementById('diagram').getBoundingClientRect().top + scrollY"


def test_redlock_on_a_720p_projector_fits_reads_and_keeps_still(
    app_server: AppServer, browser: Any
) -> None:
    page = presenter_run(browser, app_server, (1280, 720), "redlock-gc-pause")
    page.locator("svg#diagram .lifeline-header").first.wait_for()
    page.locator("#verdict .pending").wait_for()
    # Measured once the run plays: a queued run's status ("waiting for the lab (place 3 in the
    # queue)") may wrap its line, and that is before anything is drawn.
    page.locator("#run-status[data-status=running]").wait_for(timeout=40_000)
    before = page.evaluate(DIAGRAM_TOP)
    page.locator("#verdict .headline").wait_for(timeout=40_000)
    page.wait_for_timeout(300)  # the page's last follow
    # Room was kept for the verdict: the diagram did not move down when it came.
    assert abs(page.evaluate(DIAGRAM_TOP) - before) < 2
    diagram = page.locator("svg#diagram").bounding_box()
    verdict = page.locator(".verdict-slot").bounding_box()
    # All seven lifelines within the width; the diagram fills ≥ 60% of the height, under the
    # verdict, with the run's end on screen.
    assert diagram["x"] >= 0 and diagram["x"] + diagram["width"] <= 1280
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    shown = min(720, diagram["y"] + diagram["height"]) - max(0, diagram["y"])
    assert shown >= 0.6 * 720
    assert verdict["y"] >= 0 and verdict["y"] + verdict["height"] <= 720
    end = page.locator("svg#diagram .run-end line").bounding_box()
    assert verdict["y"] + verdict["height"] < end["y"] < 720
    # Every word in the diagram at least 12 px (the per-node replies too), and no caption cut.
    texts = page.evaluate(TEXT_PX)
    assert any("redis-3" in text for _, text in texts)
    assert min(px for px, _ in texts) >= 12
    captions = page.locator("svg#diagram text.say-short").all_text_contents()
    assert captions and not any("…" in caption for caption in captions)
    close_clean(page, "presenter-redlock-1280x720.png")


def box_of(page: Any, selector: str) -> Any:
    """``selector``'s box, once it is on the page: a finished run's page fetches its verdict
    again when the stream says so, and the box read as htmx swaps it in is none."""
    for _ in range(50):
        box = page.locator(selector).bounding_box()
        if box is not None:
            return box
        page.wait_for_timeout(100)
    raise AssertionError(f"{selector} never showed")


def test_an_inconclusive_verdict_on_a_projector_is_as_tall_as_a_judged_one(
    app_server: AppServer, browser: Any
) -> None:
    """Its headline says why it was not judged; the summary under it says only what the run
    showed (the page, not the projector, says both), so an inconclusive run moves nothing."""
    judged = import_run(
        app_server, json.loads((RECORDED / "runs" / "gc-pause-fenced.json").read_text())
    )
    unjudged = import_run(app_server, json.loads(INCONCLUSIVE.read_text()))
    page = presenter_page(browser, 1280, 720)
    heights = {}
    for run_id in (judged, unjudged):
        page.goto(f"{app_server.url}/runs/{run_id}/")
        page.locator("#run-status[data-status=finished]").wait_for()
        heights[run_id] = box_of(page, "#verdict")["height"]
    headline = page.locator("#verdict .headline").inner_text()
    assert headline.startswith("⚠ Inconclusive: the machine fell behind by")
    summary = page.locator("#verdict .summary")
    assert summary.inner_text().startswith("Mutual exclusion violated: alice and bob")
    assert page.locator("#verdict .summary .unjudged").is_hidden()
    assert heights[unjudged] == heights[judged]
    page.get_by_role("button", name="Presenter").click()  # the page says why, too
    assert summary.inner_text().startswith("Inconclusive: the machine fell behind by")
    assert "What it showed: Mutual exclusion violated" in summary.inner_text()
    close_clean(page, "presenter-inconclusive.png")


TALLER = """() => {
    const verdict = document.getElementById('verdict');
    const damage = verdict.querySelector('.damage');
    for (let i = 0; i < 3; i++) damage.append(damage.firstElementChild.cloneNode(true));
    const summary = verdict.querySelector('.summary');
    summary.textContent = summary.textContent.repeat(3);
}"""


def test_a_verdict_taller_than_its_room_scrolls_inside_it_and_moves_nothing(
    app_server: AppServer, browser: Any
) -> None:
    """A room's verdict may be longer than the room kept for it (a summary that wraps, several
    damaged writes: seen on a loaded machine, where the diagram then moved down a line as the
    verdict came): it scrolls inside its slot, which a keyboard can reach."""
    run_id = import_run(
        app_server, json.loads((RECORDED / "runs" / "gc-pause-unfenced.json").read_text())
    )
    page = presenter_page(browser, 1280, 720)
    page.goto(f"{app_server.url}/runs/{run_id}/")
    page.locator("#run-status[data-status=finished]").wait_for()
    page.locator("#verdict .damage li").first.wait_for()
    # The verdict may be fetched again as the stream ends (run/verdict-fetch.js); made taller before
    # that, it was replaced by the plain one on a loaded machine (CI): let it settle first.
    page.wait_for_load_state("networkidle")
    slot = box_of(page, ".verdict-slot")
    top = page.evaluate(DIAGRAM_TOP)
    page.evaluate(TALLER)
    assert page.evaluate(DIAGRAM_TOP) == top
    assert box_of(page, ".verdict-slot")["height"] == slot["height"]
    scrolls = "(s) => s.scrollHeight > s.clientHeight + 20 && getComputedStyle(s).overflowY"
    assert page.locator(".verdict-slot").evaluate(scrolls) == "auto"
    assert page.locator(".verdict-slot").get_attribute("tabindex") == "0"
    page.locator(".verdict-slot").focus()
    page.keyboard.press("PageDown")
    page.wait_for_function("document.querySelector('.verdict-slot').scrollTop > 0")
    assert violations(page) == []
    page.get_by_role("button", name="Presenter").click()  # the page shows it all, unscrolled
    assert page.locator(".verdict-slot").get_attribute("tabindex") is None
    assert page.locator(".verdict-slot").evaluate("(s) => s.scrollHeight <= s.clientHeight")
    close_clean(page, "presenter-long-verdict.png")


def test_a_lesson_on_a_720p_projector_leaves_the_diagram_60_percent(
    app_server: AppServer, browser: Any
) -> None:
    page = presenter_page(browser, 1280, 720)
    page.goto(app_server.url + "/lessons/gc-pause-unfenced/")
    page.get_by_role("button", name="Start the lesson on live servers").click()
    page.wait_for_url("**/lessons/gc-pause-unfenced/?run=*")
    page.locator("#live[data-status=finished]").wait_for(timeout=40_000)
    jump_to_question(page, "Alice is frozen")
    page.wait_for_timeout(300)  # the page's scroll to the current moment
    telling = page.locator("#telling").bounding_box()
    diagram = page.locator(".walk .diagram-wrap").bounding_box()
    assert telling["y"] + telling["height"] <= 720 + 1  # the telling, whole, at the bottom
    shown = min(telling["y"], diagram["y"] + diagram["height"]) - max(0, diagram["y"])
    assert shown >= 0.6 * 720
    # The current moment (the step asked about) is on screen above the telling, whole.
    current = page.locator("svg#diagram g.narration.current text.say-short").bounding_box()
    assert current and current["y"] >= 0 and current["y"] + current["height"] <= telling["y"]
    # Next waits for an answer: it looks as disabled as it is.
    next_button = page.locator("#next")
    assert next_button.get_attribute("aria-disabled") == "true"
    assert float(next_button.evaluate("b => getComputedStyle(b).opacity")) < 0.7
    assert next_button.evaluate("b => getComputedStyle(b).cursor") == "not-allowed"
    close_clean(page, "presenter-lesson-1280x720.png")


def test_an_early_checkpoint_on_a_720p_projector_shows_its_moment_above_the_question(
    app_server: AppServer, browser: Any
) -> None:
    """Found on redlock-two-down: a checkpoint 0.4 s into the run. The page kept the moment in
    view before the question made the telling's band taller; the band then covered it, and the
    room saw the question over nothing but the lifelines' heads."""
    page = presenter_page(browser, 1280, 720)
    page.goto(app_server.url + "/lessons/contention/")
    page.get_by_role("button", name="Start the lesson on live servers").click()
    page.wait_for_url("**/lessons/contention/?run=*")
    page.locator("#live[data-status=finished]").wait_for(timeout=40_000)
    jump_to_question(page, "Alice holds the lock.")  # bob's acquire, 0.3 s in
    telling = page.locator("#telling").bounding_box()
    current = page.locator("svg#diagram g.narration.current text.say-short").bounding_box()
    above = current and current["y"] >= 0 and current["y"] + current["height"] <= telling["y"]
    assert above, (current, telling)
    close_clean(page, "presenter-early-checkpoint-1280x720.png")


def visible_height(page: Any, selector: str) -> float:
    box = page.locator(selector).bounding_box()
    return min(720, box["y"] + box["height"]) - max(0, box["y"])


def shows_at_least(page: Any, selector: str, height: float) -> None:
    """Wait (5 s at most) until ``selector`` shows ``height`` px of itself: a step follows the
    moment with a smooth scroll, which a loaded machine draws slowly; then check it."""
    try:
        page.wait_for_function(
            """([selector, height]) => {
                 const r = document.querySelector(selector).getBoundingClientRect();
                 return Math.min(720, r.bottom) - Math.max(0, r.top) >= height;
               }""",
            arg=[selector, height],
            timeout=5000,
        )
    except PlaywrightError:  # say where the page was, not only that it was not there
        where = page.evaluate(
            """(selector) => {
                 const r = document.querySelector(selector).getBoundingClientRect();
                 const bar = document.querySelector('.replay-bar, .verdict-slot');
                 return {top: r.top, bottom: r.bottom, scrollY, at: document.querySelector(
                   '#rp-when, #position')?.textContent, above: bar?.getBoundingClientRect().bottom};
               }""",
            selector,
        )
        raise AssertionError(f"{selector} shows less than {height:.0f} px: {where}") from None


END_UNDER_VERDICT = """() => {
    const end = document.querySelector('svg#diagram .run-end line').getBoundingClientRect();
    const verdict = document.querySelector('.verdict-slot').getBoundingClientRect();
    return verdict.bottom < end.top && end.top < 720;
}"""


def test_a_replay_on_a_720p_projector_leaves_the_diagram_60_percent(
    app_server: AppServer, browser: Any
) -> None:
    page = presenter_page(browser, 1280, 720)
    run_id = run_live(app_server, page)
    page.goto(f"{app_server.url}/runs/{run_id}/replay/")
    page.locator("#rp-seq").filter(has_text="#").wait_for()
    page.wait_for_timeout(300)
    # The controls at the top, the diagram under them: 60% of the screen from the start…
    assert page.locator(".replay-bar").bounding_box()["y"] < 60
    assert visible_height(page, "svg#diagram") >= 0.6 * 720 - 1
    for _ in range(8):
        page.keyboard.press("ArrowRight")
    shows_at_least(page, "svg#diagram", 0.6 * 720 - 1)
    # …to the end, with the verdict and the run's end on the same screen.
    page.keyboard.press("End")
    page.locator("#rp-verdict.shown .headline").wait_for()
    shows_at_least(page, "svg#diagram", 0.6 * 720 - 1)
    # Once the smooth scroll to the end has come to rest (slow on a loaded machine): the run's
    # end on screen, under the verdict.
    page.wait_for_function(END_UNDER_VERDICT, timeout=5000)
    end = page.locator("svg#diagram .run-end line").bounding_box()
    verdict = page.locator(".verdict-slot").bounding_box()
    assert verdict["y"] + verdict["height"] < end["y"] < 720
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    close_clean(page, "presenter-replay-1280x720.png")


# The diagram's share of a 720p screen: what of it shows, above the telling's band if any.
DIAGRAM_SHARE = """() => { const d = document.querySelector('svg#diagram').getBoundingClientRect();
    const t = document.querySelector('#telling');
    const band = t ? t.getBoundingClientRect().top : innerHeight;
    return Math.max(0, Math.min(innerHeight, band, d.bottom) - Math.max(0, d.top)) / innerHeight;
}"""


def diagram_share(page: Any, shot: str) -> float:
    """The diagram's share of the screen, once what moves has come to rest; a screenshot."""
    page.wait_for_timeout(500)  # a step's smooth scroll to its moment
    page.screenshot(path=str(SHOTS / shot))
    return float(page.evaluate(DIAGRAM_SHARE))


def test_a_720p_projector_gives_the_diagram_60_percent_at_every_moment(
    app_server: AppServer, browser: Any
) -> None:
    """A finished run's page showed the diagram on 46% of the screen (the title, the save
    notice and the verdict above it), a lesson in a room 23% before its first step (issue
    34). The save notice and the title fold away; a lesson's telling starts with the diagram
    at the top of the screen, under the room's bar."""
    page = presenter_run(browser, app_server, (1280, 720), "gc-pause-fenced")
    assert diagram_share(page, "presenter-60-live.png") >= 0.6
    page.locator("#verdict .headline").wait_for(timeout=40_000)
    page.reload()
    page.evaluate("window.scrollTo(0, 0)")
    assert diagram_share(page, "presenter-60-finished.png") >= 0.6
    assert page.locator("#save-box").is_hidden()  # behind its toggle
    page.get_by_role("button", name="Save", exact=True).click()
    assert page.locator("#save-box").is_visible()
    page.goto(app_server.url + "/")
    page.get_by_role("button", name="Teach a class").click()  # a room: its bar on top
    page.wait_for_url("**/rooms/**")
    page.goto(app_server.url + "/lessons/gc-pause-fenced/")
    page.get_by_role("button", name="Start the lesson on live servers").click()
    page.wait_for_url("**/lessons/gc-pause-fenced/?run=*")
    page.locator("#live[data-status=finished]").wait_for(timeout=40_000)
    assert page.locator("#room-bar").is_visible()
    assert diagram_share(page, "presenter-60-lesson-start.png") >= 0.6
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    assert diagram_share(page, "presenter-60-lesson-stepping.png") >= 0.6
    jump_to_question(page, "Alice is frozen")
    assert diagram_share(page, "presenter-60-lesson-checkpoint.png") >= 0.6
    close_clean(page, "presenter-60-lesson-end.png")
