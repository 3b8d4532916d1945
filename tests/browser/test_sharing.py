"""Replays that leave the site, in a real browser: the one-file replay of every built-in's
recorded run plays from disk with every request refused, to the same end as the site; the embed
plays inside another origin's page, where any other page of the app refuses to be framed.

The runs are tests/browser/data/runs (each built-in recorded once on the live lab), imported
into this module's app through its import page (tests/browser/recorded.py:import_run)."""

from __future__ import annotations

import html
import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from playwright.sync_api import expect

from bench.abuse import big_import
from tests.browser import recorded
from tests.browser.conftest import entry
from tests.browser.recorded import recorded_runs, recorded_server  # noqa: F401 (server, runs)
from tests.browser.test_accessibility import violations
from tests.browser.test_library import import_run, log_in, make_teacher, save
from tests.conftest import AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]


class OnSite(NamedTuple):
    """A run as the site's replay page tells it, and its one-file replay on disk."""

    run_id: str
    events: int
    headline: str
    file: Path


def on_site(server: AppServer, run_id: str, folder: Path) -> OnSite:
    """The site's event count and verdict for ``run_id``, and its "Download as a web page"."""
    page = urllib.request.urlopen(f"{server.url}/runs/{run_id}/replay/").read().decode()
    count = re.search(r"· (\d+) events?(?: ·|</p>)", page)
    headline = re.search(r'<p class="headline">([^<]*)</p>', page)
    assert count and headline, "the replay page says no event count or verdict"
    with urllib.request.urlopen(f"{server.url}/runs/{run_id}/export.html") as answer:
        assert answer.headers["Content-Disposition"].startswith("attachment;")
        file = folder / f"{run_id}.html"
        file.write_bytes(answer.read())
    return OnSite(run_id, int(count.group(1)), html.unescape(headline.group(1)), file)


@pytest.fixture(scope="module")
def files(
    server: AppServer, runs: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, OnSite]:
    """Every recorded built-in with its one-file replay: slug -> OnSite."""
    folder = tmp_path_factory.mktemp("files")
    return {slug: on_site(server, run_id, folder) for slug, run_id in runs.items()}


class Offline:
    """A page of its own context that opens files from disk, where every request but the file
    itself is refused and listed (in :attr:`asked`, with every request the page made)."""

    def __init__(self, browser: Any) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.document = ""
        self.asked: list[str] = []
        self.context.route("**/*", self._refuse)
        self.page = self.context.new_page()
        self.page.errors = []
        self.page.on("pageerror", lambda exc: self.page.errors.append(str(exc)))
        self.page.on(
            "console", lambda msg: msg.type == "error" and self.page.errors.append(msg.text)
        )
        self.page.on("request", self._asked)
        self.page.on("websocket", lambda ws: self.asked.append(f"websocket {ws.url}"))

    def _refuse(self, route: Any) -> None:
        if route.request.url.split("#")[0] == self.document:
            route.continue_()  # the file itself
        else:
            self.asked.append(f"refused {route.request.url}")
            route.abort()

    def _asked(self, request: Any) -> None:
        if request.url.split("#")[0] != self.document:
            self.asked.append(request.url)

    def open(self, file: Path, query: str = "") -> Any:
        """The page, now on ``file`` (nothing asked yet, no error yet)."""
        own = file.as_uri() + query
        self.document = own.split("#")[0]
        self.asked.clear()
        self.page.errors.clear()
        self.page.goto(own)
        return self.page


@pytest.fixture(scope="module")
def reader(browser: Any) -> Iterator[Offline]:
    """One reader for the replays of every built-in (a new context costs ~0.5 s of CPU)."""
    shared = Offline(browser)
    yield shared
    shared.context.close()


@pytest.mark.parametrize("slug", recorded.RUNS)
def test_the_one_file_replay_plays_offline_to_the_sites_end(
    slug: str, files: dict[str, OnSite], reader: Offline
) -> None:
    site = files[slug]
    assert site.events == len(
        json.loads((recorded.DATA / "runs" / f"{slug}.json").read_text())["events"]
    )
    page = reader.open(site.file, "?autoplay&speed=8")
    page.locator("#rp-verdict.shown").wait_for(timeout=90_000)  # played to the end
    when = page.locator("#rp-when").text_content() or ""
    assert f"(event {site.events} of {site.events})" in when, when
    assert page.locator("#rp-verdict .headline").text_content() == site.headline
    assert reader.asked == [] and page.errors == []
    assert site.file.stat().st_size <= 400_000, f"{slug}: {site.file.stat().st_size} bytes"


def test_the_file_has_the_sites_keys_links_and_story(
    files: dict[str, OnSite], reader: Offline
) -> None:
    site = files["gc-pause-fenced"]
    page = reader.open(site.file, "#seq=5")
    expect(page.locator("#rp-seq")).to_have_text("#5")  # (the file's policy allows no eval)
    page.keyboard.press("ArrowRight")
    assert page.locator("#rp-seq").text_content() == "#6"
    page.keyboard.press("End")
    assert page.locator("#rp-verdict.shown").count() == 1
    page.keyboard.press("Home")
    assert page.locator("#rp-seq").text_content() == "#1"
    expect(page).to_have_url(re.compile(r"#seq=1$"))
    page.keyboard.press("Shift+ArrowRight")  # the next story line
    assert page.locator("#rp-desc").text_content() == page.locator("#rp-story").text_content()
    jump = page.locator("#story button.story-jump").last
    seq = jump.get_attribute("data-seq")
    jump.click()
    assert page.locator("#rp-seq").text_content() == f"#{seq}"
    page.evaluate("location.hash = '#seq=3'")
    expect(page.locator("#rp-seq")).to_have_text("#3")
    page.emulate_media(color_scheme="dark")  # light and dark, as the reader's system says
    dark = page.evaluate("getComputedStyle(document.body).backgroundColor")
    page.emulate_media(color_scheme="light")
    assert dark != page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert violations(page) == []
    assert reader.asked == [] and page.errors == []


def test_a_20000_event_runs_file_opens_and_plays(
    server: AppServer, reader: Offline, tmp_path: Path
) -> None:
    run_id = recorded.import_run(server, big_import(20_000))
    site = on_site(server, run_id, tmp_path)
    assert site.events == 20_000
    page = reader.open(site.file, "?autoplay&speed=8")
    expect(page.locator("#rp-when")).to_contain_text("of 20000)", timeout=180_000)
    expect(page.locator("#rp-play")).to_contain_text("pause")  # ?autoplay: it plays
    first = int((page.locator("#rp-seq").text_content() or "#0")[1:])
    expect(page.locator("#rp-seq")).not_to_have_text(f"#{first}", timeout=30_000)
    page.keyboard.press("End")
    assert "(event 20000 of 20000)" in (page.locator("#rp-when").text_content() or "")
    assert page.locator("#rp-verdict .headline").text_content() == site.headline
    assert reader.asked == [] and page.errors == []


def test_the_embed_plays_in_another_origins_page_and_other_pages_refuse(
    files: dict[str, OnSite], server: AppServer, browser: Any, course: tuple[Path, str]
) -> None:
    folder, origin = course
    run_id = files["gc-pause-fenced"].run_id
    embed = f"{server.url}/embed/runs/{run_id}/?autoplay&speed=8"
    replay = f"{server.url}/runs/{run_id}/replay/"
    (folder / "course.html").write_text(
        "<!doctype html><html lang='en'><title>A course page</title><h1>Week 3: locks</h1>"
        f"<iframe id='embed' title='replay' src='{embed}' width='1200' height='800'></iframe>"
        f"<iframe id='other' title='page' src='{replay}' width='600' height='300'></iframe>"
    )
    context = browser.new_context(viewport={"width": 1300, "height": 1200})
    page = context.new_page()
    console: list[str] = []
    page.on("console", lambda msg: console.append(msg.text))
    try:
        page.goto(f"{origin}/course.html")
        framed = page.frame_locator("#embed")
        framed.locator("#rp-verdict.shown").wait_for(timeout=60_000)  # it played to the end
        when = framed.locator("#rp-when").text_content() or ""
        events = files["gc-pause-fenced"].events
        assert f"(event {events} of {events})" in when
        assert framed.locator("header.site").count() == 0  # the replay, nothing else
        # The replay page itself: refused, so its frame holds no page of the app.
        said = ("Refused to display", "frame-ancestors 'none'")  # X-Frame-Options', or the CSP's
        for _ in range(100):
            if any(s in c for c in console for s in said):
                break
            page.wait_for_timeout(100)
        refused = [c for c in console if any(s in c for s in said)]
        assert refused and server.url.removesuffix("/") in refused[0], console
        other = page.locator("#other").element_handle().content_frame()
        assert other.locator("#rp-play").count() == 0 and replay not in other.url
    finally:
        context.close()


def test_the_embed_reads_its_theme_and_speed_and_passes_axe(
    files: dict[str, OnSite], server: AppServer, page: Any
) -> None:
    run_id = files["redlock-contention"].run_id
    page.goto(f"{server.url}/embed/runs/{run_id}/?theme=dark&speed=4#seq=4")
    entry(page)
    page.wait_for_function("window.entry.replay.seq === 4")
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    assert page.locator("#rp-speed").input_value() == "4"
    assert not page.evaluate("window.entry.replay.playing")  # no ?autoplay: it waits
    assert violations(page) == []
    page.goto(f"{server.url}/embed/runs/{run_id}/")
    page.locator("#rp-seq").wait_for()
    assert violations(page) == [] and page.errors == []


def test_the_replay_page_offers_its_embed_and_its_download(
    files: dict[str, OnSite], server: AppServer, page: Any
) -> None:
    run_id = files["zk-happy"].run_id
    page.goto(f"{server.url}/runs/{run_id}/replay/")
    page.locator("#rp-seq").wait_for()
    snippet = page.get_by_label("Paste this into a course page", exact=False)
    assert not snippet.is_visible()  # a disclosure, closed until asked
    page.get_by_text("Embed", exact=True).click()
    assert snippet.is_visible() and snippet.get_attribute("readonly") is not None
    code = snippet.input_value()
    assert code.startswith(
        f'<iframe src="{server.url}/embed/runs/{run_id}/" title="lockviz replay: '
    )
    page.get_by_role("button", name="Copy the snippet").click()
    expect(page.locator("#embed-copied")).to_have_text(re.compile(r"Snippet copied|Selected"))
    download = page.get_by_role("link", name="Download as a web page")
    assert download.get_attribute("href") == f"/runs/{run_id}/export.html"
    with page.expect_download() as fetched:
        download.click()
    assert fetched.value.suggested_filename == f"lockviz-run-{run_id}.html"
    assert page.errors == []


def directives(policy: str) -> dict[str, str]:
    """A Content-Security-Policy's directives by name, each named once (a browser obeys only
    the first of two)."""
    parts = [part.strip().partition(" ") for part in policy.split(";") if part.strip()]
    names = [name for name, _, _ in parts]
    assert len(names) == len(set(names)), policy
    return {name: value.strip() for name, _, value in parts}


def test_a_private_runs_embed_says_who_sees_it_and_its_teacher_unlists_it(
    app_server: AppServer, browser: Any, course: tuple[Path, str]
) -> None:
    """The snippet of a private run says that its frame shows it to its teacher and class only,
    and offers to make it unlisted; any other reader's frame says why it shows nothing, inside
    the frame (it was a blank 404 with X-Frame-Options: DENY)."""
    folder, origin = course
    name = make_teacher(app_server)
    teacher_context, reader_context = browser.new_context(), browser.new_context()
    try:
        page = teacher_context.new_page()
        log_in(page, app_server, name)
        run_id = import_run(page, app_server, "gc-pause-fenced")
        save(page, "private")
        page.reload()
        page.get_by_text("Embed", exact=True).click()
        note = page.locator("#embed-private")
        assert "This run is private" in note.inner_text()
        assert "every other reader sees" in note.inner_text()
        assert violations(page) == []

        embed = f"{app_server.url}/embed/runs/{run_id}/"
        (folder / "course.html").write_text(
            "<!doctype html><html lang='en'><title>A course page</title><h1>Week 3</h1>"
            f"<iframe id='embed' title='replay' src='{embed}' width='900' height='500'></iframe>"
        )
        reader = reader_context.new_page()
        reader.goto(f"{origin}/course.html")
        framed = reader.frame_locator("#embed")
        framed.get_by_role("heading", name="This replay is not shown here").wait_for()
        assert "keeps it private" in framed.locator("main").inner_text()
        reader.goto(embed)  # the page in the frame, on its own: axe-clean, 404, framable
        assert violations(reader) == []
        answer = reader.request.get(embed)
        assert answer.status == 404 and "x-frame-options" not in answer.headers
        # The site's whole policy, its frame-ancestors the embed's own (any course page may
        # frame the notice), while the teacher's page with its forms stays unframable.
        policy = directives(answer.headers["content-security-policy"])
        assert policy["frame-ancestors"] == "*" and policy["script-src"] == "'self'", policy
        own = page.request.get(f"{app_server.url}/runs/{run_id}/replay/")
        assert directives(own.headers["content-security-policy"])["frame-ancestors"] == "'none'"
        assert own.headers["x-frame-options"] == "DENY"
        missing = reader.request.get(f"{app_server.url}/embed/runs/nosuchrun/")
        assert missing.status == 404 and missing.text() == answer.text()  # an id says nothing

        page.get_by_role("button", name="Make it unlisted").click()
        page.wait_for_url(f"**/runs/{run_id}/replay/")
        assert page.locator("#save-visibility").input_value() == "unlisted"
        assert page.locator("#embed-private").count() == 0
        reader.goto(f"{origin}/course.html")
        reader.frame_locator("#embed").locator("#rp-seq").wait_for()  # now it plays
    finally:
        teacher_context.close()
        reader_context.close()
