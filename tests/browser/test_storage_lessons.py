"""The storage module in a browser: the fencing hole closed by a sequencer check, told step by
step with its checkpoints, linked to the same story with every storage kind side by side; and
a lesson without any lock service."""

from __future__ import annotations

import contextlib
import json
import re
import time
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import entry
from tests.browser.test_walkthrough import jump_to_question, told_answer
from tests.conftest import AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]


def start(page: Any, server: AppServer, slug: str) -> None:
    """Start the lesson's run and wait for it to finish having told its story: a run that says
    the machine fell behind (inconclusive, on a loaded test machine) is started again, up to
    three times, as the engine's own tests do."""
    why = ""
    for _ in range(3):
        page.goto(f"{server.url}/lessons/{slug}/")
        # The first time, Start; again (the run before could not keep its story), the page
        # shows that run and offers to run it again live: the new run's page, not that one.
        shown = page.url
        page.locator("#start-lesson, #rerun").click()
        page.wait_for_url(lambda url, shown=shown: "?run=" in url and url != shown)
        page.locator("#live[data-status=finished]").wait_for(timeout=40_000)
        run = page.url.split("run=")[1]
        verdict = page.request.get(f"{server.url}/runs/{run}/export.json").json()["verdict"]
        why = (verdict or {}).get("inconclusive", "")
        if not why:
            return
    raise AssertionError(f"three runs in a row could not keep their story: {why}")


def to_the_end(page: Any) -> None:
    """Step to the end, answering any checkpoint on the way (with its first choice), each key
    press waiting for the telling to move (a loaded machine draws each step later)."""
    checkpoint = page.locator("#checkpoint:not([hidden])")
    position = page.locator("#position")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if page.locator("#end").is_visible():
            return
        if checkpoint.is_visible() and page.locator("#checkpoint-actions").is_visible():
            checkpoint.locator("input").first.check()
            page.get_by_role("button", name="Check my answer").click()
            told_answer(page)
        was = position.text_content() or ""
        page.keyboard.press("ArrowRight")
        with contextlib.suppress(AssertionError):  # the last event, or a checkpoint: no move
            expect(position).not_to_have_text(was, timeout=2_000)
    entry(page)
    where = page.evaluate(
        """() => ({
            at: document.getElementById("position").textContent,
            last: window.entry.walkthrough.events.at(-1).kind,
            live: document.getElementById("live").textContent,
            focus: document.activeElement.outerHTML.slice(0, 80),
        })"""
    )
    raise AssertionError(f"the walkthrough never reached its end: {where}")


def test_the_sequencer_lesson_asks_before_the_storage_asks_zookeeper(
    app_server: AppServer, page: Any
) -> None:
    start(page, app_server, "storage-hole-sequencer")
    jump_to_question(page, "The storage asks ZooKeeper", key="ArrowRight")
    rejected = page.locator("svg#diagram .rejected-write:visible")
    assert rejected.count() == 0  # the outcome waits for the answer
    page.get_by_text("The node is gone (her session expired): it rejects the write").click()
    page.get_by_role("button", name="Check my answer").click()
    told_answer(page)
    assert page.locator("#mark").text_content().startswith("✔ Right")
    rejected.first.wait_for(timeout=60_000)  # a loaded machine draws the next step later
    # The storage's question to zk-1 is drawn as its own arrows, before the rejection.
    entry(page)
    asked = page.evaluate(
        """() => window.entry.walkthrough.events.filter(
             (e) => e.actor === 'storage' && e.kind === 'request' && e.to === 'zk-1').length"""
    )
    assert asked >= 1
    to_the_end(page)
    headline = page.locator("#end #verdict .headline")
    headline.wait_for()
    assert "the sequencer check saved the data" in (headline.text_content() or "")
    link = page.locator("#side-by-side")
    assert link.get_attribute("href").endswith("lanes=fenced,fenced_reads,sequencer,cas")
    link.click()
    page.wait_for_url("**/compare/?scenario=storage-hole-sequencer*")
    kinds = [page.locator(f"#id_storage_{n}").input_value() for n in range(1, 5)]
    assert kinds == ["fenced", "fenced_reads", "sequencer", "cas"]
    assert page.errors == []


def test_a_lesson_without_a_lock_service(app_server: AppServer, page: Any) -> None:
    start(page, app_server, "storage-lost-update-cas")
    assert "storage 127.0.0.1:" in page.locator("#live").text_content()
    jump_to_question(page, "Bob's update was computed from version 0", key="ArrowRight")
    page.get_by_text("It rejects it: Bob must read version 1 and try again").click()
    page.get_by_role("button", name="Check my answer").click()
    told_answer(page)
    to_the_end(page)
    page.locator("#end #verdict .headline").filter(
        has_text="No lock, but compare-and-set kept every update"
    ).wait_for()
    assert page.errors == []


def without_the_end(ws: Any) -> None:
    """A run's stream that never carries its end (``run_finished``): in its live frames, its
    catch-ups and its resumes alike."""
    server = ws.connect_to_server()

    def from_server(message: str | bytes) -> None:
        data = json.loads(message)
        if data.get("type") == "event" and data["event"]["kind"] == "run_finished":
            return
        if data.get("type") == "events":
            data["frames"] = [f for f in data["frames"] if f["event"]["kind"] != "run_finished"]
        ws.send(json.dumps(data))

    server.on_message(from_server)


def test_a_lesson_whose_stream_lost_the_runs_end_still_reaches_it(
    app_server: AppServer, page: Any
) -> None:
    """Seen on a loaded machine: the stream said "finished" but never brought the run's last
    event, and the telling began without it, so the lesson could never show its end. The page
    reads the stored events then."""
    page.route_web_socket(re.compile(r".*/ws/runs/.*"), without_the_end)
    start(page, app_server, "storage-lost-update-cas")
    to_the_end(page)
    page.locator("#end #verdict .headline").wait_for()
    entry(page)
    assert page.evaluate("window.entry.walkthrough.events.at(-1).kind") == "run_finished"
    assert page.errors == []
