"""A real browser: Debian's chromium driven by Playwright (never a downloaded browser)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import CHROMIUM, FLAGS, AppServer

__all__ = ["CHROMIUM", "FLAGS", "entry"]  # the browser itself is tests/conftest.py's


def entry(page: Any) -> None:
    """Make the page's entry module reachable from the test's scripts as ``window.entry``.

    The app sets no globals: each page loads one entry module (static/lockviz/pages/), which
    exports what it built (``run``, ``replay``, ``walkthrough``, ``compare``, ``follow``, …).
    Importing the page's own module URL again gives that same instance, once it has run. Call it
    again after a navigation."""
    page.evaluate(
        "async () => { window.entry = await import("
        "document.querySelector('script[type=module][src]').src); }"
    )


@pytest.fixture
def app_server(shared_app: AppServer) -> AppServer:
    """A page test uses the app as a learner does, from a browser context of its own: the tests
    of a process share one app (tests/conftest.py), as a class shares one."""
    return shared_app


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: msg.type == "error" and errors.append(msg.text))
    page.errors = errors
    yield page
    context.close()
