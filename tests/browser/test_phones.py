"""A phone's page is never wider than the phone: a wide table scrolls in its own box, a long
option or a form's fields wrap (found at 390 px: the index's recent runs and the library's
table made the page 648 and 711 px wide, through the table and the visually hidden labels in
its cells; the library's search form 418 px; the editor's save form 404 px)."""

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
        for slug in ("gc-pause-fenced", "gc-pause-unfenced"):  # rows for the library's table
            import_run(page, app_server, slug)
            save(page, "unlisted")
        for path in PAGES:
            page.goto(app_server.url + path)
            page.wait_for_load_state("load")
            assert page.evaluate("document.documentElement.scrollWidth") <= 390, path
        page.goto(app_server.url + "/library/")
        tables = page.evaluate(WIDE)
        assert tables and all(inner > outer for inner, outer in tables)  # they scroll inside
    finally:
        context.close()
