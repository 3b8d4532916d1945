"""The site's pages run under its Content-Security-Policy (lockviz.edge.csp: scripts from the site
only) without a violation: every module loads, the page data is read, htmx and the room's
WebSocket work."""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.test_replay import download, run_live
from tests.conftest import AppServer

pytestmark = pytest.mark.browser
PAGES = ["/", "/lessons/", "/lessons/gc-pause-fenced/", "/play/", "/scenarios/new/", "/import/",
         "/plans/new/", "/compare/", "/join", "/accounts/login/"]  # fmt: skip


def test_pages_run_under_the_policy_without_a_violation(
    app_server: AppServer, browser: Any
) -> None:
    context = browser.new_context(bypass_csp=False)  # the tests' others bypass it (conftest)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: msg.type == "error" and errors.append(msg.text))
    for path in PAGES:
        response = page.goto(app_server.url + path)
        assert "script-src 'self'" in response.headers["content-security-policy"], path
        page.wait_for_load_state("networkidle")
    page.goto(app_server.url + "/")  # a room of this browser's, its stream open
    page.locator("form[action='/rooms/'] button").first.click()
    page.wait_for_url("**/rooms/*/")
    page.wait_for_load_state("networkidle")
    violations = [e for e in errors if "Content Security Policy" in e or "CSP" in e]
    context.close()
    assert violations == []
    assert errors == []


@pytest.mark.live
def test_a_run_page_streams_and_exports_its_picture_under_the_policy(
    app_server: AppServer, browser: Any
) -> None:
    """The live stream (a WebSocket to the same host) and the PNG export (the diagram drawn
    through a blob: image), with the policy on."""
    context = browser.new_context(bypass_csp=False, accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda msg: msg.type == "error" and errors.append(msg.text))
    try:
        run_live(app_server, page)
        png = download(page, page.get_by_role("link", name="PNG", exact=True)).read_bytes()
        assert png.startswith(b"\x89PNG")
    finally:
        context.close()
    assert [e for e in errors if "Content Security Policy" in e] == []
