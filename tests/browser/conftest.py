"""A real browser: Debian's chromium driven by Playwright (never a downloaded browser)."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CHROMIUM, FLAGS, AppServer

# The browser itself is tests/conftest.py's.
__all__ = ["CHROMIUM", "FLAGS", "entry", "settled", "told"]


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


def settled(page: Any) -> None:
    """Wait until the page is as a reader first sees it: loaded, with every module script run
    (the ``load`` event) and no htmx request in flight.

    Not ``networkidle`` (500 ms without a request): a page that keeps a stream open or polls is
    never idle that long on a loaded machine, and an axe test waited 30 s for it in CI."""
    page.wait_for_load_state("load")
    page.wait_for_function("() => !document.querySelector('.htmx-request')")


@contextmanager
def separate(browser: Any, sizes: dict[str, tuple[int, int]]) -> Iterator[dict[str, Any]]:
    """A browser context each (separate sessions, as separate people), at its viewport size:
    name -> its page, whose uncaught page errors collect in ``page.errors``."""
    contexts, pages = [], {}
    for name, (width, height) in sizes.items():
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc, errors=errors: errors.append(str(exc)))
        page.errors = errors
        contexts.append(context)
        pages[name] = page
    try:
        yield pages
    finally:
        for context in contexts:
            context.close()


def told(page: Any, press: Callable[[], None], headline: str, tries: int = 3) -> str:
    """Press a button that starts a live run (``press``), wait on its page for the final
    headline, and return the run's id once that headline says ``headline``. A run that says
    the machine fell behind (inconclusive: a loaded test machine) is pressed again, up to
    ``tries`` times, as the engine's own tests do; any other ending must be ``headline``.
    ``press`` is called again from the page of the run before: it goes where its button is."""
    said = ""
    for _ in range(tries):
        press()
        page.wait_for_url("**/runs/*/")
        final = page.locator("#verdict:not(.pending) .headline")
        final.wait_for(timeout=60_000)
        said = final.text_content() or ""
        if not said.startswith("⚠ Inconclusive"):
            break
    assert headline in said, said
    return str(page.url.rstrip("/").split("/")[-1])


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


class _Course(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def course(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """Another origin (localhost on a port of its own) serving a course page: (folder, url)."""
    handler = functools.partial(_Course, directory=str(tmp_path))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield tmp_path, f"http://localhost:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
