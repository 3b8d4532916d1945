"""Twenty fresh learners arrive at once, each driving a free-play run through the shipped nginx.

On a stack of its own (tests/deploy/conftest.py: PostgreSQL, a Redis layer, two ``serve``
replicas behind Debian's nginx with deploy/nginx.conf), apart from tests/deploy/test_proxy.py's:
a class arriving at once loads the machine on purpose, so the test runs ``alone`` (no other
test that starts servers or a browser runs meanwhile), and its stack starts while the others
still run.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import pytest
from playwright.async_api import Browser, Page, async_playwright
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import expect as expect_async

from tests.browser.conftest import CHROMIUM, FLAGS
from tests.deploy.clients import Visitor, said
from tests.deploy.conftest import Stack
from tests.deploy.test_proxy import QUEUE_PATIENCE_S

pytestmark = [pytest.mark.live, pytest.mark.browser]

LEARNERS = 20
AT_ONCE = 4  # browser contexts driven at the same time: a class arriving, on a 2-core machine
FAULTS = 3  # clicks per learner before Finish


# ---- 20 fresh learners, each driving a free-play run through nginx ---------------------------


@dataclass
class Learner:
    n: int
    run: str = ""
    got: list[str] = field(default_factory=list)  # what each fault click got
    finish: str = ""
    status: str = ""  # the run's, read through the proxy at the end
    trouble: str = ""  # why the learner could not go on

    @property
    def applied(self) -> int:
        return self.got.count("done")

    def fine(self) -> bool:
        return self.applied == FAULTS and self.status == "finished"

    def told(self, stack: Stack) -> str:
        where = ""
        if self.run:
            served = {f"127.0.0.1:{r.port}": name for name, r in stack.replicas.items()}
            clicks = [
                served.get(line.split()[3], line.split()[3])
                for line in stack.proxy.access()
                if f"/runs/{self.run}/" in line and line.startswith("POST")
            ]
            where = f" (runs on {stack.replica_of(self.run).name}; its POSTs went to {clicks})"
        return (
            f"learner {self.n}: run {self.run or '-'}{where}; {self.trouble} "
            f"clicks {self.got}, Finish {self.finish or '-'}, status {self.status or '-'}"
        )


async def answer_of(page: Page, button: Any, path: str) -> str:
    """Click ``button`` and say what the POST to ``path`` answered: "done", or why not."""
    sent: list[float] = []
    page.on("request", lambda r: r.url.endswith(path) and sent.append(time.monotonic()))
    try:
        async with page.expect_response(lambda r: r.url.endswith(path), timeout=20_000) as info:
            await button.click(timeout=10_000)
        answer = await info.value
    except PlaywrightError as exc:
        # Which it was: a button that could not be pressed, or a POST with no answer.
        status = await page.locator("#run-status").text_content()
        posted = f"POST sent {time.monotonic() - sent[0]:.0f} s ago" if sent else "no POST sent"
        return f"no answer ({posted}; the page says {status!r}): {str(exc).splitlines()[0]}"
    if answer.headers.get("x-fault") == "done":
        return "done"
    return f"{answer.headers.get('x-fault') or answer.status}: {said(await answer.text())}"


async def learn(browser: Browser, base: str, learner: Learner) -> None:
    """A fresh browser: the index, Free play, Start, three clicks, Finish."""
    context = await browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = await context.new_page()
        await page.goto(base + "/")
        await page.get_by_role("link", name="Free play").click()
        await page.wait_for_url("**/play/")
        start = page.get_by_role("button", name="Start a session on live servers")
        async with page.expect_response(lambda r: r.request.method == "POST") as info:
            await start.click()
        answer = await info.value
        if not answer.headers.get("hx-redirect"):
            learner.trouble = f"Start got {answer.status} {said(await answer.text(), 90)!r};"
            return
        await page.wait_for_url("**/play/*/")
        learner.run = page.url.rstrip("/").rsplit("/", 1)[1]
        alice, bob = page.locator("#faults-alice"), page.locator("#faults-bob")
        acquire = alice.get_by_role("button", name="acquire", exact=True)
        if not await live(page, acquire):
            status = await page.locator("#run-status").text_content()
            learner.trouble = f"never live (the page says {status!r});"
            return
        await alice.get_by_label("pause alice for how many seconds").fill("1")
        for button in (
            acquire,
            alice.get_by_role("button", name="pause"),
            bob.get_by_role("button", name="acquire", exact=True),
        ):
            learner.got.append(await answer_of(page, button, f"/runs/{learner.run}/do"))
        finish = page.locator("#finish-button")
        learner.finish = await answer_of(page, finish, f"/runs/{learner.run}/finish")
    finally:
        await context.close()


async def live(page: Page, acquire: Any) -> bool:
    """Whether the run went live: within 40 s of leaving the queue. A run waits its turn in its
    replica's queue while the machine is busy (lockviz/lab/capacity.py; other work on a shared
    machine counts): in line, the page says so, and that is not trouble, for up to 3 minutes."""
    deadline = time.monotonic() + QUEUE_PATIENCE_S
    while True:
        try:
            await expect_async(acquire).to_be_enabled(timeout=40_000)
            return True
        except AssertionError:
            status = await page.locator("#run-status").get_attribute("data-status")
            if status != "queued" or time.monotonic() > deadline:
                return False


def drive(base: str, learners: list[Learner]) -> None:
    """All learners, AT_ONCE at a time, in one chromium of their own (async Playwright, in a
    thread of its own: the sync API's browser of the other tests lives in this one)."""

    async def main() -> None:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
            turns = asyncio.Semaphore(AT_ONCE)

            async def one(learner: Learner) -> None:
                async with turns:
                    try:
                        await learn(browser, base, learner)
                    except PlaywrightError as exc:
                        learner.trouble += f" broke: {str(exc).splitlines()[0]};"

            await asyncio.gather(*(one(learner) for learner in learners))
            await browser.close()

    thread = threading.Thread(target=asyncio.run, args=(main(),), name="learners")
    thread.start()
    thread.join()


def final_statuses(reader: Visitor, learners: list[Learner], timeout_s: float = 90) -> None:
    """Each run's status, waiting while a run whose Finish was accepted is still finishing."""
    deadline = time.monotonic() + timeout_s
    while True:
        for learner in learners:
            if learner.run:
                learner.status = reader.status(learner.run)
        finishing = [ln for ln in learners if ln.finish == "done" and ln.status == "running"]
        if not finishing or time.monotonic() > deadline:
            return
        time.sleep(0.25)


@pytest.mark.alone  # a class arriving at once: its load is the point, and only its own
def test_twenty_fresh_learners_each_drive_their_own_run_through_nginx(stack: Stack) -> None:
    learners = [Learner(n) for n in range(1, LEARNERS + 1)]
    drive(stack.url, learners)
    final_statuses(Visitor(stack.url), learners)
    applied = sum(learner.applied for learner in learners)
    finished = sum(learner.status == "finished" for learner in learners)
    started = sum(bool(learner.run) for learner in learners)
    troubled = [learner.told(stack) for learner in learners if not learner.fine()]
    assert applied == LEARNERS * FAULTS and finished == LEARNERS, (
        f"through the shipped nginx.conf: {started}/{LEARNERS} learners started a run, "
        f"{applied}/{LEARNERS * FAULTS} clicks applied, {finished}/{LEARNERS} runs finished; "
        f"{len(troubled)}/{LEARNERS} learners had trouble:\n" + "\n".join(troubled)
    )
