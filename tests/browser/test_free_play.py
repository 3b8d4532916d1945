"""Free play in a browser: start a session, click the GC-pause story into being, finish it,
and save it as a scenario."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from lockviz.scenarios.schema import parse
from tests.conftest import ROOT, AppServer

pytestmark = [pytest.mark.live, pytest.mark.browser]
SHOTS = ROOT / "screenshots"
GRANTED_TO = """name => [...document.querySelectorAll('svg#diagram g.lease > title')]
  .some(t => t.textContent.includes(' granted \u00b7 ' + name + ' \u00b7'))"""


def alice_holds(page: Any, url: str) -> tuple[str, Any, Any]:
    """A free-play session (one Redis node, a 1 s lease) started in ``page``, in which alice was
    granted the lock: the run's id, and alice's and bob's buttons."""
    page.goto(url + "/play/")
    page.get_by_label("lease in milliseconds").fill("1000")
    page.get_by_role("button", name="Start a session on live servers").click()
    page.wait_for_url("**/play/*/")
    run_id = page.url.rstrip("/").rsplit("/", 1)[1]
    alice, bob = page.locator("#faults-alice"), page.locator("#faults-bob")
    alice.get_by_role("button", name="acquire", exact=True).click()
    page.wait_for_function(GRANTED_TO, arg="alice", timeout=20_000)
    return run_id, alice, bob


def test_a_session_clicked_into_a_gc_pause_story(app_server: AppServer, page: Any) -> None:
    page.goto(app_server.url + "/play/")
    expect(page.get_by_label("Redis, one node (SET NX PX)")).to_be_checked()
    page.get_by_label("lease in milliseconds").fill("1000")
    page.get_by_role("button", name="Start a session on live servers").click()
    page.wait_for_url("**/play/*/")
    alice, bob = page.locator("#faults-alice"), page.locator("#faults-bob")

    alice.get_by_role("button", name="acquire", exact=True).click()  # waits until live
    page.wait_for_function(GRANTED_TO, arg="alice", timeout=20_000)
    alice.get_by_label("pause alice for how many seconds").fill("3")
    alice.get_by_role("button", name="pause").click()
    expect(page.locator("#fault-result")).to_contain_text("done: alice paused for 3000 ms")
    page.locator("svg#diagram .pause").wait_for(state="attached")
    bob.get_by_role("button", name="acquire", exact=True).click()
    # Bob retries until alice's 1 s lease expires on the server, frozen as she is.
    page.wait_for_function(GRANTED_TO, arg="bob", timeout=20_000)
    # A name on the diagram is a button too: Enter takes the keyboard to that actor's buttons.
    page.locator('svg#diagram .lifeline-header[data-actor="bob"]').focus()
    page.keyboard.press("Enter")
    expect(bob.get_by_role("button", name="acquire", exact=True)).to_be_focused()

    page.get_by_role("button", name="Finish").click()
    headline = page.locator("#verdict .headline")
    headline.filter(has_text="Mutual exclusion violated").wait_for(timeout=30_000)
    assert page.locator("svg#diagram .overlap").count() >= 1
    expect(page.locator("#run-status")).to_have_text("finished")
    expect(alice.get_by_role("button", name="acquire", exact=True)).to_be_disabled()

    with page.expect_download() as download:
        page.get_by_role("link", name="Save as scenario").click()
    saved = json.loads(Path(download.value.path()).read_text())
    scenario = parse(saved)  # a valid scenario, ready to run again
    assert [(s.do, s.client) for s in scenario.steps] == [
        ("acquire", "alice"),
        ("pause", "alice"),
        ("acquire", "bob"),
    ]
    assert scenario.steps[1].ms == 3000 and scenario.ttl_ms == 1000

    os.makedirs(SHOTS, exist_ok=True)
    page.screenshot(path=str(SHOTS / "play-session.png"), full_page=True)
    page.screenshot(path="/tmp/play-free-play.png", full_page=True)
    assert page.errors == []


def test_redlock_forces_fencing_off_and_says_why(app_server: AppServer, page: Any) -> None:
    page.goto(app_server.url + "/play/")
    fencing = page.get_by_label("fencing tokens checked by the storage")
    expect(fencing).to_be_checked()
    page.get_by_label("Redlock, five Redis nodes").check()
    expect(fencing).to_be_disabled()
    expect(fencing).not_to_be_checked()
    expect(page.locator(".no-fencing-note[data-backend=redlock]")).to_contain_text(
        "Redlock cannot fence"
    )
    page.get_by_label("Redis, one node (SET NX PX)").check()
    expect(fencing).to_be_checked()  # the learner's choice comes back
    page.screenshot(path="/tmp/play-setup.png", full_page=True)
    assert page.errors == []


def test_an_election_is_played_freely_and_its_clients_ask_who_leads(
    app_server: AppServer, page: Any
) -> None:
    """Free play offers each service's variants (only the chosen one's shown) and every kind
    of storage; an election's clients campaign with "acquire" and ask who leads."""
    page.goto(app_server.url + "/play/")
    etcd_variant = page.get_by_label("etcd variant")
    expect(etcd_variant).to_be_hidden()  # Redis is chosen
    page.get_by_label("etcd (lease + revision)").check()
    expect(etcd_variant).to_be_visible()
    expect(page.get_by_label("zookeeper variant")).to_be_hidden()
    etcd_variant.select_option("election")
    page.get_by_label("or another storage").select_option("fenced_reads")
    page.get_by_role("button", name="Start a session on live servers").click()
    page.wait_for_url("**/play/*/")
    expect(page.locator(".run-head .meta").first).to_contain_text("storage fenced_reads")
    alice, bob = page.locator("#faults-alice"), page.locator("#faults-bob")
    alice.get_by_role("button", name="acquire", exact=True).click()  # waits until live
    expect(page.locator("#fault-result")).to_contain_text("done: alice campaigns to lead")
    page.wait_for_function(GRANTED_TO, arg="alice", timeout=20_000)
    bob.get_by_role("button", name="who leads?").click()
    expect(page.locator("#fault-result")).to_contain_text("done: bob asks who leads")
    leads = page.locator("svg#diagram text", has_text="alice leads · epoch")
    leads.first.wait_for(state="attached", timeout=20_000)
    page.get_by_role("button", name="Finish").click()
    page.locator("#verdict .headline").filter(has_text="One leader at a time").wait_for(
        timeout=30_000
    )
    assert page.errors == []
