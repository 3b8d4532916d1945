"""The site's pages run under its Content-Security-Policy (lockviz.csp: scripts from the site
only) without a violation: every module loads, the page data is read, htmx and the room's
WebSocket work."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import AppServer

pytestmark = pytest.mark.browser
PAGES = ["/", "/lessons/", "/lessons/gc-pause-fenced/", "/play/", "/scenarios/new/", "/import/",
         "/plans/new/", "/compare/", "/join", "/accounts/login/"]  # fmt: skip


def test_pages_run_under_the_policy_without_a_violation(app_server: AppServer, page: Any) -> None:
    for path in PAGES:
        response = page.goto(app_server.url + path)
        assert "script-src 'self'" in response.headers["content-security-policy"], path
        page.wait_for_load_state("networkidle")
    page.goto(app_server.url + "/")  # a room of this browser's, its stream open
    page.locator("form[action='/rooms/'] button").first.click()
    page.wait_for_url("**/rooms/*/")
    page.wait_for_load_state("networkidle")
    violations = [e for e in page.errors if "Content Security Policy" in e or "CSP" in e]
    assert violations == []
    assert page.errors == []
