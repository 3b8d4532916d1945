"""What if…? in a browser: from a replay's moment, a shorter pause and a switched storage run
live beside the original, on one time axis, with the moment they part marked; and in a room,
a student's private fork shared with the presenter and put beside the original."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.browser.conftest import entry
from tests.browser.test_compare import SMALLEST_TEXT
from tests.browser.test_free_play import GRANTED_TO, alice_holds
from tests.browser.test_replay import current, run_live
from tests.browser.test_rooms import join
from tests.conftest import ROOT, AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]


# Where each lane's line across the moment the fork parts is, on screen, read at one moment.
PARTING_LINES = """() => Array.from(document.querySelectorAll('.lane .time-mark-line'),
  (line) => line.getBoundingClientRect().y)"""


def to_moment(page: Any, kind: str, actor: str) -> int:
    """Step the replay to the first event of ``kind`` by ``actor``; its seq."""
    page.keyboard.press("Home")
    for _ in range(200):
        if page.locator("#rp-kind").text_content() == kind and (
            page.locator("#rp-actor").text_content() == actor
        ):
            return current(page)
        page.keyboard.press("ArrowRight")
    raise AssertionError(f"no {kind} of {actor}")


def test_what_if_from_a_replay_runs_beside_the_original(app_server: AppServer, page: Any) -> None:
    original = run_live(app_server, page)
    page.goto(f"{app_server.url}/runs/{original}/replay/")
    # The moment alice's lock is granted: her pause (3.5 s) is still to come.
    seq = to_moment(page, "granted", "alice")
    what_if = page.get_by_role("link", name="What if…?")
    assert what_if.get_attribute("href").endswith(f"/fork/?at={seq}")
    what_if.click()
    page.wait_for_url(f"**/runs/{original}/fork/?at={seq}")
    assert f"after event #{seq}" in page.locator("#fork-moment").text_content()
    assert page.locator("#fork-fixed li").count() == 1  # alice's acquire, as it happened
    # Each row shows the fields its verb takes; a blank row, until a verb is chosen, none.
    shown = lambda row: [  # noqa: E731
        f for f in ("ms", "value", "nodes", "timeout_ms", "key", "mode")
        if row.locator(f"label[data-field={f}]").is_visible()
    ]  # fmt: skip
    assert shown(page.locator(".fork-row", has_text="alice paused for 3500 ms")) == ["ms"]
    assert shown(page.locator(".fork-row", has_text="writes 'A'")) == ["value", "key"]
    blank = page.locator(".fork-row.new").first
    assert shown(blank) == []
    blank.locator("select[name^=do_]").select_option("partition")
    assert shown(blank) == ["nodes", "mode"]
    blank.locator("select[name^=do_]").select_option("")

    pause = page.locator(".fork-row", has_text="alice paused for 3500 ms")
    pause.locator("input[name^=ms_]").fill("1000")  # what if her pause were shorter?
    page.locator("#fork-storage").select_option("sequencer")  # and the storage asked the lock?
    page.get_by_role("button", name="Run the fork live, beside the original").click()
    page.wait_for_url(re.compile(rf".*/compare/\?runs={original},\w+$"))

    lanes = page.locator(".lane")
    assert lanes.count() == 2
    page.locator(".lane[data-done=finished]").nth(1).wait_for(timeout=40_000)
    fork = lanes.nth(1)
    assert "What if…? (from" in fork.locator("h2").text_content()
    # Both lanes marked at the same height: the moment the fork parts. Read in one go: between
    # two reads the page may move (the fork's verdict, fetched once it ended, grows the lanes'
    # heads: a CI run under load read the original's line before it came, the fork's after, 57 px
    # lower).
    marks = page.evaluate(PARTING_LINES)
    assert len(marks) == 2 and abs(marks[0] - marks[1]) < 1, marks
    assert "parts from here" in fork.locator(".time-mark-label").text_content()
    # The fork's verdict, once in, made the lanes' heads taller; the page still keeps the moment
    # they part where it put it, at 40% of the window's height (it moved 57 px down with it).
    fork.locator(".lane-headline:not(.pending)").wait_for()
    kept = page.evaluate(f"() => ({PARTING_LINES})().map((y) => y - 0.4 * innerHeight)")
    assert all(abs(y) < 2 for y in kept), kept
    # The sequencer storage asked redis-1 at each write: arrows from storage to the lock node.
    assert fork.locator("g.request[data-seq]").count() > 0
    entry(page)
    checks = page.evaluate(
        """() => window.entry.compare.views[1].diagram.events.filter(
             (e) => e.actor === 'storage' && e.kind === 'request' && e.op === 'check').length"""
    )
    assert checks >= 1

    # The fork is a run like any other: its replay says whose fork it is and forks again.
    fork_id = page.url.rsplit(",", 1)[1]
    page.goto(f"{app_server.url}/runs/{fork_id}/replay/")
    assert f"a What if…? fork of {original}" in page.locator(".run-head .meta").first.inner_text()
    page.get_by_role("link", name="What if…?").click()
    page.wait_for_url(f"**/runs/{fork_id}/fork/**")
    assert page.errors == []


def test_a_student_shares_a_private_fork_with_the_presenter(
    app_server: AppServer, browser: Any
) -> None:
    teacher_ctx, ada_ctx = browser.new_context(), browser.new_context()
    teacher, ada = teacher_ctx.new_page(), ada_ctx.new_page()
    try:
        teacher.goto(app_server.url + "/")
        teacher.get_by_role("button", name="Teach a class").click()
        teacher.wait_for_url(re.compile(r".*/rooms/[A-Z0-9]+/$"))
        code = teacher.url.rstrip("/").rsplit("/", 1)[1]
        join(ada, app_server, code, "Ada")
        original = run_live(app_server, teacher)  # the presenter runs it; the class follows
        ada.locator("#what-if").wait_for(state="visible", timeout=30_000)
        ada.locator("#what-if").click()  # a fork of her own, from the moment shown
        ada.wait_for_url(f"**/runs/{original}/fork/**")
        ada.get_by_role("button", name="Run the fork live, beside the original").click()
        ada.wait_for_url(re.compile(rf".*/compare/\?runs={original},\w+$"))
        fork_id = ada.url.rsplit(",", 1)[1]
        teacher.goto(f"{app_server.url}/rooms/{code}/")
        teacher.locator("#shares-waiting .none").wait_for()
        teacher.wait_for_function(  # its room stream is open: the bar counts who follows
            "() => document.querySelector('.room-present').textContent !== '…'"
        )
        ada.get_by_role("button", name=f"Share with the presenter of room {code}").click()
        ada.get_by_text(f"Shared with the presenter of room {code}.").wait_for()
        waiting = teacher.locator("#shares-waiting li", has_text="Ada:")
        waiting.wait_for()  # live, and not listed until the presenter approves it
        assert teacher.locator("#shared-forks a", has_text="Ada:").count() == 0
        waiting.get_by_role("button", name="Approve").click()
        teacher.locator("#shares-listed summary").click()  # the list is folded: off the projector
        ada.goto(f"{app_server.url}/rooms/{code}/follow/")  # back with the class
        shared = teacher.locator("#shared-forks a", has_text="Ada:")
        shared.click()  # on the projector: the fork beside the original
        teacher.wait_for_url(f"**/compare/?runs={original},{fork_id}")
        assert teacher.locator(".lane").count() == 2
        assert teacher.locator(".time-mark-line").count() == 2
        # The class sees them as the projector does: the original beside the fork, both whole.
        ada.locator("#beside-wrap").wait_for(state="visible", timeout=10_000)
        for svg in ("#beside-diagram", "#diagram"):
            ada.locator(f"{svg} .lifeline-header").first.wait_for(timeout=10_000)
        left, right = (ada.locator(s).bounding_box() for s in ("#beside-diagram", "#diagram"))
        width = ada.viewport_size["width"]
        assert left and right and left["x"] + left["width"] <= right["x"]  # side by side
        assert left["x"] >= 0 and right["x"] + right["width"] <= width  # neither cut
        assert ada.evaluate("document.documentElement.scrollWidth") <= width
    finally:
        teacher_ctx.close()
        ada_ctx.close()


def free_play_run(server: AppServer, page: Any) -> str:
    """A free-play session clicked into a GC pause (alice acquires, pauses 1.5 s, bob acquires),
    finished: its run id. Every step's time is the moment it was clicked, not a round number."""
    run_id, alice, bob = alice_holds(page, server.url)
    alice.get_by_label("pause alice for how many seconds").fill("1.5")
    alice.get_by_role("button", name="pause").click()
    page.locator("svg#diagram .pause").wait_for(state="attached")
    bob.get_by_role("button", name="acquire", exact=True).click()
    page.wait_for_function(GRANTED_TO, arg="bob", timeout=20_000)
    page.get_by_role("button", name="Finish").click()
    page.locator("#verdict .headline").wait_for(timeout=30_000)
    return run_id


def test_a_free_play_fork_runs_as_prefilled_and_opens_where_it_parts(
    app_server: AppServer, browser: Any
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        original = free_play_run(app_server, page)
        page.goto(f"{app_server.url}/runs/{original}/replay/")
        seq = to_moment(page, "granted", "alice")
        page.goto(f"{app_server.url}/runs/{original}/fork/?at={seq}")
        times = page.locator(".fork-row:not(.new) input[name^=at_ms_]")
        assert times.count() >= 2  # alice's pause and bob's acquire, clicked at odd times
        # The browser accepts every prefilled time as it is: no row needs an edit.
        assert page.evaluate("document.getElementById('fork-form').checkValidity()")
        page.get_by_role("button", name="Run the fork live, beside the original").click()
        page.wait_for_url(re.compile(rf".*/compare/\?runs={original},\w+$"), timeout=15_000)
        # It opens where the runs part: the marks on screen, both lanes whole at 1280×720.
        lanes = page.locator(".lane")
        assert lanes.count() == 2
        # (Read in one go: a lane redraws as its events stream in, its mark drawn anew.)
        page.wait_for_function(
            """() => {
                 const marks = [...document.querySelectorAll('.time-mark-line')];
                 return marks.length === 2 && marks.every((m) => {
                   const r = m.getBoundingClientRect();
                   return r.width + r.height > 0 && r.top >= 0 && r.bottom <= innerHeight
                     && r.left >= 0 && r.right <= innerWidth;
                 });
               }""",
            timeout=10_000,
        )
        for n in range(2):
            lane = lanes.nth(n).bounding_box()
            assert lane and lane["x"] >= 0 and lane["x"] + lane["width"] <= 1280 + 0.5
        assert_side_by_side_and_readable(page)
        # The start is one click away.
        page.get_by_role("button", name="Back to the start").click()
        page.wait_for_function(  # the lanes' heads in view, under the bar that stays
            """() => document.querySelector('.lane-head').getBoundingClientRect().top
                 >= document.getElementById('lanes-tools').getBoundingClientRect().bottom"""
        )
        assert page.locator(".lane svg .lifeline-header").first.bounding_box()["y"] < 720
        both_verdicts_in(page)
        assert_side_by_side_and_readable(page)
        # On the projector too: the same two lanes side by side, every word at least 12 px.
        page.evaluate("localStorage.setItem('lockviz-presenter', '1')")
        page.reload()
        page.wait_for_function("() => document.documentElement.classList.contains('presenter')")
        both_verdicts_in(page)
        assert_side_by_side_and_readable(page)
        page.screenshot(path=str(ROOT / "screenshots" / "fork-beside-original-1280x720.png"))
        assert errors == []
    finally:
        context.close()


def both_verdicts_in(page: Any) -> None:
    """Both lanes done, and then each one's verdict, fetched once it is done (ci23: read as
    the second came, the lanes were measured 1.6 px apart, one before it and one after)."""
    page.locator(".lane[data-done]").nth(1).wait_for(timeout=40_000)
    page.wait_for_function("() => !document.querySelector('.lane-summary.pending')")


def assert_side_by_side_and_readable(page: Any) -> None:
    """Both lanes of a fork and its original on a 1280 px screen, side by side, neither cut,
    and no word in either diagram drawn smaller than 12 px."""
    lanes = page.locator(".lane")
    # Read in one go: a lane's head grows when its verdict comes, and both lanes move with it.
    svgs = page.evaluate(
        """() => [...document.querySelectorAll('.lane svg')].slice(0, 2).map((svg) => {
             const r = svg.getBoundingClientRect();
             return {x: r.x, y: r.y, width: r.width, height: r.height};
           })"""
    )
    assert abs(svgs[0]["y"] - svgs[1]["y"]) < 1, svgs
    assert svgs[1]["x"] >= svgs[0]["x"] + svgs[0]["width"]
    assert svgs[0]["x"] >= 0 and svgs[1]["x"] + svgs[1]["width"] <= 1280 + 0.5
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    smallest = [lanes.nth(n).evaluate(SMALLEST_TEXT) for n in range(2)]
    assert min(smallest) >= 12, smallest
