"""A phone's page is never wider than the phone: a wide table or a replay's diagram scrolls in
its own box, a long option or a form's fields wrap (found at 390 px: the index's recent runs and
the library's table made the page 648 and 711 px wide, through the table and the visually hidden
labels in its cells; the library's search form 418 px; the editor's save form 404 px)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.test_library import import_run, log_in, make_teacher, save
from tests.conftest import AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]
PAGES = ["/", "/library/", "/scenarios/new/?from=gc-pause-fenced", "/plans/new/", "/lessons/"]
WIDE = "() => [...document.querySelectorAll('main table')].map(t => [t.scrollWidth, t.clientWidth])"


def test_a_teachers_pages_fit_a_390_px_phone(app_server: AppServer, browser: Any) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    try:
        page = context.new_page()
        log_in(page, app_server, make_teacher(app_server))
        replays = []
        for slug in ("gc-pause-fenced", "gc-pause-unfenced"):  # rows for the library's table
            replays.append(f"/runs/{import_run(page, app_server, slug)}/replay/")
            save(page, "unlisted")
        for path in [*PAGES, *replays[:1]]:
            page.goto(app_server.url + path)
            page.wait_for_load_state("load")
            assert page.evaluate("document.documentElement.scrollWidth") <= 390, path
        # The replay's controls all on the phone's screen (they wrap); its diagram scrolls in
        # its own box (found at 390 px: the page was as wide as the diagram, and the bar's
        # step and copy buttons were off the right edge).
        page.goto(app_server.url + replays[0])
        controls = page.locator(".replay-bar button, .replay-bar select").all()
        boxes = [box for c in controls if (box := c.bounding_box())]  # those shown
        assert boxes and all(b["x"] >= 0 and b["x"] + b["width"] <= 390 for b in boxes), boxes
        # and they stay on screen as a compact bar: the diagram keeps most of it (found: 530 px
        # of 844, the arrow buttons' words wrapping them into seven rows).
        assert page.locator(".replay-bar").bounding_box()["height"] <= 0.4 * 844
        wrap = page.evaluate(
            "() => { const w = document.querySelector('.diagram-wrap');"
            " return [w.scrollWidth, w.clientWidth]; }"
        )
        assert wrap[0] > wrap[1]  # the diagram scrolls sideways inside
        # The course's lesson cards give their words the phone's width: the Start button goes
        # under them (found at 390 px: number, words and button side by side left the words
        # a 90 px column, and the page 32,000 px tall).
        page.goto(app_server.url + "/lessons/")
        widths = page.evaluate(
            "() => [...document.querySelectorAll('.course .lesson')].map(card =>"
            " [card.querySelector('.body').clientWidth, card.clientWidth])"
        )
        assert widths and all(body >= 0.6 * card for body, card in widths), widths[:3]
        page.goto(app_server.url + "/library/")
        tables = page.evaluate(WIDE)
        assert tables and all(inner > outer for inner, outer in tables)  # they scroll inside
    finally:
        context.close()
