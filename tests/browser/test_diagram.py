"""The diagram of every built-in, read as a learner reads it: no label over another label or
under an arrow, every mark in the legend, one numbering of steps, Redlock replies that name their
node, ZooKeeper's watch as an arrow, folded retries, cut links on their own lifelines, and an
idle free-play session drawn short.

The runs are tests/browser/data: each built-in run once on the live lab (``manage.py
run_scenario <slug> --json``) and a free-play session left idle until it ended itself, imported
into the app here through its import page as a learner would."""

from __future__ import annotations

import json
import re
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import recorded
from tests.browser.conftest import entry
from tests.browser.recorded import recorded_runs, recorded_server  # noqa: F401 (server, runs)
from tests.conftest import AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]
VISIBLE = (Path(__file__).parent / "visible.js").read_text()
OVERLAPS = (Path(__file__).parent / "overlaps.js").read_text()


@pytest.fixture(scope="module")
def shared(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.on("console", lambda msg: msg.type == "error" and page.errors.append(msg.text))
    yield page
    context.close()


def replay_end(page: Any, server: AppServer, run_id: str) -> None:
    """The replay at its last event: the run's final diagram."""
    page.goto(f"{server.url}/runs/{run_id}/replay/")
    entry(page)
    page.wait_for_function("window.entry.replay.index >= 0")
    page.keyboard.press("End")
    page.wait_for_function(
        "window.entry.replay.index === window.entry.replay.diagram.events.length - 1"
    )


@pytest.mark.parametrize("slug", recorded.RUNS)
def test_no_label_overlaps_another_or_crosses_an_arrow(
    slug: str, server: AppServer, runs: dict[str, str], shared: Any
) -> None:
    replay_end(shared, server, runs[slug])
    overlaps = f"{VISIBLE}; {OVERLAPS}; lockvizOverlaps(document.getElementById('diagram'))"
    result = shared.evaluate(overlaps)
    assert result["labels"] > 5
    assert result["found"] == [], f"{slug}: {result['found'][:5]}"
    # Every mark drawn has its key in the legend ("Reading the diagram").
    marks = set(
        shared.evaluate(
            "[...document.querySelectorAll('svg#diagram [data-mark]')].map(g => g.dataset.mark)"
        )
    )
    keys = set(
        shared.evaluate(
            "[...document.querySelectorAll('#legend [data-key]')].map(li => li.dataset.key)"
        )
    )
    assert marks and marks <= keys, f"{slug}: not in the legend: {marks - keys}"
    # The damage, for every backend: each accepted stale write in red where it lands.
    verdict = json.loads((recorded.DATA / "runs" / f"{slug}.json").read_text())["verdict"]
    damage = shared.locator("svg#diagram .damaged-write .damage-label").all_text_contents()
    assert len(damage) == verdict["stale_writes_accepted"]
    assert all(re.search(r"overwrote|stored after|without holding", d) for d in damage)
    assert shared.errors == []


def test_steps_are_numbered_once_everywhere(
    server: AppServer, runs: dict[str, str], shared: Any
) -> None:
    # "contention" has steps without narration (3 and 6): they are numbered like the others.
    replay_end(shared, server, runs["contention"])
    steps = json.loads((recorded.DATA / "runs" / "contention.json").read_text())["scenario"][
        "steps"
    ]
    numbers = [str(n) for n in range(1, len(steps) + 1)]
    story = shared.locator("#story li")
    assert [story.nth(i).get_attribute("value") for i in range(story.count())] == numbers
    assert (
        "alice writes 'A' to the storage" in story.nth(2).text_content()
    )  # no narration: its click
    badges = shared.locator("svg#diagram .narration .step-badge-text")
    assert [badges.nth(i).text_content() for i in range(badges.count())] == numbers
    shared.locator("#story li").nth(4).locator(
        "button"
    ).click()  # the replay's fifth item is step 5
    assert shared.locator("#rp-story").text_content().startswith("step 5:")
    mermaid = (
        urllib.request.urlopen(f"{server.url}/runs/{runs['contention']}/export.mmd").read().decode()
    )
    assert re.findall(r"· step (\d+):", mermaid) == numbers


def test_redlock_replies_name_their_node_with_a_tick_or_a_cross(
    server: AppServer, runs: dict[str, str], shared: Any
) -> None:
    replay_end(shared, server, runs["redlock-clock-jump"])
    replies = shared.locator("svg#diagram .reply-label text.label")
    said = [replies.nth(i).text_content() for i in range(replies.count())]
    assert "✔ redis-1" in said and "✔ redis-3" in said
    assert "✖ redis-4 unreachable: connection reset" in said  # not "Error 104 … 127.0.0.1"
    assert any(label.startswith("✖ redis-3") for label in said)  # the clock jump gave it to bob
    text = " ".join(shared.locator("svg#diagram text").all_text_contents())  # what is drawn
    assert "token ?" not in text and "Error 104" not in text and "no fencing token" in text
    titles = shared.evaluate(
        "[...document.querySelectorAll('svg#diagram .reply > title')].map(t => t.textContent)"
    )
    assert any("redis-3 said no: key held by bob" in t or "key held by bob" in t for t in titles)


def test_refused_rounds_fold_into_one_band_that_opens(
    server: AppServer, runs: dict[str, str], shared: Any
) -> None:
    replay_end(shared, server, runs["redlock-three-down"])
    label = shared.locator("svg#diagram .fold-label")
    words = label.locator("text.label")
    assert re.fullmatch(r"▸ rounds 2–\d+ refused", words.text_content())
    folded = shared.locator("svg#diagram .request.folded")
    assert folded.count() > 20 and not folded.first.is_visible()
    label.click()
    assert folded.first.is_visible() and words.text_content().startswith("▾")
    assert label.get_attribute("aria-expanded") == "true"
    label.press("Enter")  # a keyboard closes it again
    assert not folded.first.is_visible()


def test_zookeeper_draws_the_watch_notification_and_names_the_czxid(
    server: AppServer, runs: dict[str, str], shared: Any
) -> None:
    replay_end(shared, server, runs["zk-no-herd"])
    x = shared.evaluate(
        "n => +document.querySelector(`svg#diagram [data-actor='${n}'] text`).getAttribute('x')",
        "zk-1",
    )
    arrows = shared.evaluate(
        """[...document.querySelectorAll('svg#diagram g.notify')].map(g => {
            const l = g.querySelector('line.arrow');
            return {from: +l.getAttribute('x1'), to: +l.getAttribute('x2'), seq: +g.dataset.seq};
        })"""
    )
    assert len(arrows) == 3  # bob, carol and dave are each woken once: no herd
    for arrow in arrows:
        assert abs(arrow["from"] - x) < 10 and arrow["to"] < arrow["from"]  # server → waiter
    labels = shared.locator("svg#diagram .notify-label text")
    assert labels.first.text_content() == "watch fired: predecessor deleted"
    leases = shared.locator("svg#diagram .lease-label text").all_text_contents()
    assert leases and all("czxid" in t for t in leases)
    replay_end(shared, server, runs["zk-gc-pause-fenced"])
    # Her client's lost mark says why, and her session's own mark says LOST (its own class:
    # `.lost` is the client's mark alone).
    assert shared.locator("svg#diagram .lost text").text_content() == "lost: session expired"
    assert shared.locator("svg#diagram .session-lost text").text_content() == "LOST"
    assert "REJECTED czxid 6 < 8" in shared.locator("svg#diagram .rejected-write").text_content()


def test_a_cut_link_shades_only_its_own_two_lifelines(
    server: AppServer, runs: dict[str, str], shared: Any
) -> None:
    replay_end(shared, server, runs["redlock-clock-jump"])
    columns = shared.evaluate(
        """Object.fromEntries([...document.querySelectorAll('svg#diagram .lifeline-header')]
            .map(h => [h.dataset.actor, +h.querySelector('text').getAttribute('x')]))"""
    )
    strips = shared.evaluate(
        """[...document.querySelectorAll('svg#diagram g.cut-link')].map(g => ({
            title: g.querySelector('title').textContent,
            spans: [...g.querySelectorAll('rect.strip')].map(r => [+r.getAttribute('x'),
                +r.getAttribute('x') + +r.getAttribute('width')]),
            fill: g.querySelector('rect.strip').getAttribute('fill')}))"""
    )
    assert len(strips) == 4  # alice ⇹ redis-4, redis-5 and bob ⇹ redis-1, redis-2
    for strip in strips:
        for left, right in strip["spans"]:
            near = [n for n, x in columns.items() if left - 16 <= x <= right + 16]
            assert len(near) == 1, (strip["title"], near)  # one lifeline: the link's own end
            covered = [n for n, x in columns.items() if left <= x <= right]
            assert covered == []  # beside the lifeline, never over one
    overlap = shared.evaluate(
        "document.querySelector('svg#diagram g.overlap rect.band').getAttribute('fill')"
    )
    pattern = lambda url: shared.evaluate(  # noqa: E731
        "u => document.querySelector(u.slice(4, -1)).getAttribute('class')", url
    )
    assert pattern(strips[0]["fill"]) == "dots-cut" and pattern(overlap) == "hatch-overlap"


def test_an_idle_free_play_session_is_drawn_short_without_errors(
    server: AppServer, browser: Any
) -> None:
    session = json.loads((recorded.DATA / "free-play-idle.json").read_text())
    # The session's click, saved as a scenario's step (what "Save as scenario" does).
    session["scenario"]["steps"] = [
        {k: v for k, v in e.items() if k in ("at_ms", "do", "client", "node", "ms")}
        for e in session["events"]
        if e["kind"] == "step"
    ]
    run_id = recorded.import_run(server, session)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    messages: list[str] = []
    page.on("console", lambda msg: msg.type in ("error", "warning") and messages.append(msg.text))
    page.on("pageerror", lambda exc: messages.append(str(exc)))
    page.goto(f"{server.url}/play/{run_id}/")
    page.locator("svg#diagram .run-end").wait_for(state="attached")
    assert page.locator("svg#diagram .time-break").count() == 1  # 3 idle minutes, drawn short
    height = float(page.locator("svg#diagram").get_attribute("height"))
    assert 0 < height < 2500
    view_box = [float(v) for v in page.locator("svg#diagram").get_attribute("viewBox").split()]
    assert view_box[2] > 0 and view_box[3] > 0
    assert "ending" in page.locator("svg#diagram").text_content()
    assert messages == []
    context.close()
