"""Faults by clicking on a live run's page: cut a link, heal it, kill and restart a server —
and see each drawn on the diagram."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.conftest import ROOT, AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]
SHOTS = ROOT / "screenshots"
# Alice takes the lock at once; bob's late step keeps the run live for 40 s, time to click.
LONG_RUN = {
    "format": 1,
    "title": "Alice holds the lock a while",
    "backend": "redis",
    "fencing": True,
    "ttl_ms": 8000,
    "clients": ["alice", "bob"],
    "steps": [
        {"at_ms": 0, "client": "alice", "do": "acquire"},
        {"at_ms": 40_000, "client": "bob", "do": "acquire", "timeout_ms": 500},
    ],
}
START = """async (scenario) => {
  const token = JSON.parse(document.body.getAttribute('hx-headers'))['X-CSRFToken'];
  const body = new FormData();
  body.append('scenario', scenario);
  const headers = {'X-CSRFToken': token};
  const answer = await fetch('/import/run/', {method: 'POST', body, headers});
  return answer.url;
}"""


def header(page: Any, name: str) -> Any:
    return page.locator(f'svg#diagram .lifeline-header[data-actor="{name}"]')


def test_cut_heal_crash_and_restart_by_clicking(app_server: AppServer, page: Any) -> None:
    page.goto(app_server.url + "/")
    page.goto(page.evaluate(START, json.dumps(LONG_RUN)))  # the run page of a live run
    page.wait_for_url("**/runs/*/")
    alice_button = page.get_by_role("button", name="alice", exact=True)
    expect(alice_button).to_be_enabled(timeout=30_000)  # live once the lab has started it
    menu = page.locator("#faults-alice")

    header(page, "alice").click()
    expect(menu).to_be_visible()
    expect(menu.get_by_label("redis-1")).to_be_checked()
    menu.get_by_role("button", name="cut").click()
    band = page.locator("svg#diagram .cut-link.open")
    band.wait_for(state="attached")
    expect(page.locator("svg#diagram .cut-link-label")).to_contain_text(
        "alice \u21f9 redis-1 cut (blackhole)"
    )
    expect(page.locator("#fault-result")).to_contain_text("done: alice \u21f9 redis-1 cut")
    expect(menu).to_be_hidden()  # done: the menu closes

    # The keyboard: the toolbar button opens the menu, Escape closes it and focus comes back.
    alice_button.focus()
    page.keyboard.press("Enter")
    expect(menu).to_be_visible()
    expect(menu.get_by_role("button", name="acquire", exact=True)).to_be_focused()
    page.keyboard.press("Escape")
    expect(menu).to_be_hidden()
    expect(alice_button).to_be_focused()

    # A refused click names its field and keeps the menu open to fix it.
    page.keyboard.press("Enter")
    delay = menu.get_by_label("delay on alice's links in milliseconds")
    delay.evaluate("el => { el.removeAttribute('min'); el.removeAttribute('step'); }")
    delay.fill("-50")
    menu.get_by_role("button", name="delay").click()
    expect(page.locator("#fault-result .refused")).to_contain_text("ms: a delay cannot be negative")
    expect(menu).to_be_visible()

    menu.get_by_role("button", name="heal").click()
    page.locator("svg#diagram .link-healed").wait_for(state="attached")
    expect(page.locator("svg#diagram .cut-link.open")).to_have_count(0)
    assert page.locator("svg#diagram .cut-link").count() == 1  # closed, still drawn

    redis = page.locator("#faults-redis-1")
    header(page, "redis-1").click()
    redis.get_by_role("button", name="crash").click()
    page.locator("svg#diagram .node-down").wait_for(state="attached")
    expect(page.locator("svg#diagram .node-down")).to_contain_text("kill -9")
    header(page, "redis-1").click()
    redis.get_by_role("button", name="restart").click()
    restarted = page.locator("svg#diagram .node-restarted")
    restarted.wait_for(state="attached")
    expect(restarted).to_contain_text("restarted (no persistence)")
    expect(page.locator("svg#diagram .node-down.open")).to_have_count(0)

    os.makedirs(SHOTS, exist_ok=True)
    page.screenshot(path=str(SHOTS / "run-faults.png"))
    page.screenshot(path="/tmp/play-faults-run.png")
    assert page.errors == []


def test_a_finished_run_offers_no_fault_controls(app_server: AppServer, page: Any) -> None:
    # Live for 5 s: the page opens while it plays (a run of one step at 0 ms, 0.08 s long, had
    # ended before a loaded machine served its page, which then had no controls to end).
    release = {"at_ms": 5000, "client": "alice", "do": "release"}
    short = {**LONG_RUN, "steps": [LONG_RUN["steps"][0], release]}
    page.goto(app_server.url + "/")
    page.goto(page.evaluate(START, json.dumps(short)))
    expect(page.locator("#fault-controls")).to_be_visible()  # live when the page opened
    expect(page.locator("#run-status")).to_have_text("finished", timeout=30_000)
    expect(page.locator(".fault-ended")).to_be_visible()
    expect(page.locator('.menu-button[data-opens="alice"]')).to_be_hidden()
    expect(header(page, "alice")).not_to_have_attribute("role", "button")
    header(page, "alice").click()
    expect(page.locator("#faults-alice")).to_be_hidden()
    page.reload()
    assert page.locator("#fault-controls").count() == 0  # a finished run's page has none
    assert page.errors == []
