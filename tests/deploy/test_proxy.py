"""Hosted for a class, end to end: the shipped proxy configurations in front of two replicas.

Issue 17's "Done when", on the stack of tests/deploy/conftest.py (PostgreSQL, a Redis layer,
two ``serve`` replicas, Debian's nginx with deploy/nginx.conf; Caddy with deploy/Caddyfile for
HTTPS). Browsers reach the app through the proxy only. Where a scenario needs a run on a known
replica (the Redis blip, kill -9), the run is started on that replica directly: through the
proxy, which replica gets it is the proxy's choice. The test reads PostgreSQL directly to know
what is true; every other check is what a user's page or a click would show.

The nginx stack is started once for the module and its tests run in file order: the last one
kills a replica. The HTTPS stack (two more replicas behind Caddy) lives for its one test. Twenty
learners arriving at once have a stack of their own (tests/deploy/test_class_arrives.py).

One module past the usual ~300 lines, on purpose: its scenarios share one expensive stack and run
in order on it (the last kills a replica), so they stay in one file, with the learners they drive.
"""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import pytest
import segno
from playwright.async_api import Error as PlaywrightError

from tests.browser.conftest import entry
from tests.deploy.clients import Viewer, Visitor, said
from tests.deploy.conftest import SEPARATE_HOSTS, Stack

pytestmark = [pytest.mark.live, pytest.mark.browser]

# A run waits in the queue while the lab is full, and the lab counts fewer slots while the
# machine is busy (lockviz/lab/capacity.py): on a loaded 2-core machine that can take minutes.
QUEUE_PATIENCE_S = 180  # how long a run may wait in a busy machine's queue
# Two clients taking turns for 40 s, a steady stream of events with no clicks needed.
TURNS: dict[str, Any] = {
    "format": 1,
    "title": "Alice and Bob take turns for 40 s",
    "backend": "redis",
    "fencing": True,
    "ttl_ms": 3000,
    "clients": ["alice", "bob"],
    "steps": [
        {
            "at_ms": 1000 * i,
            "client": ("alice", "bob")[i // 2 % 2],
            "do": ("acquire", "release")[i % 2],
        }
        for i in range(41)
    ],
}


# ---- a class: a teacher's room, three students by the QR code's URL --------------------------


def start_scenario(page: Any, base: str, slug: str) -> str:
    """The index's "Run on live servers" for ``slug``: the run's id once its page is open."""
    page.goto(base + "/")
    card = page.locator(f"#scenario-{slug}")
    with page.expect_response(lambda r: r.url.endswith("/runs/")) as info:
        card.get_by_role("button", name="Run on live servers").click()
    started = info.value
    assert started.headers.get("hx-redirect"), (
        f"'Run on live servers' via {base}: {started.status} {said(started.text())!r}"
    )
    page.wait_for_url(re.compile(r".*/runs/[^/]+/$"))
    return str(page.url.rstrip("/").rsplit("/", 1)[1])


def qr_path(link: str) -> str:
    """The dark modules of the join QR code for ``link``, as the room page draws them."""
    svg = segno.make(link, error="m").svg_inline(scale=10, border=2, dark="#111", light="#fff")
    found = re.search(r'class="qrline"[^>]* d="([^"]+)"', svg)
    assert found, svg[:200]
    return found.group(1)


def open_room(page: Any, base: str) -> tuple[str, str]:
    """Open a room with the index's "Teach a class": its code, and its join link as shown."""
    page.goto(base + "/")
    with page.expect_response(lambda r: r.url.endswith("/rooms/")) as info:
        page.get_by_role("button", name="Teach a class").click()
    page.wait_for_load_state()
    found = re.search(r"/rooms/([A-Z0-9]+)/$", page.url)
    assert found, (
        f"'Teach a class' via {base}: {info.value.status}, the page says {said(page.content())!r}"
    )
    link = (page.locator(".join-link").text_content() or "").strip()
    qr = page.locator(".join-qr svg path.qrline").get_attribute("d")
    assert qr == qr_path(link), f"the QR code does not encode the join link shown, {link}"
    return found.group(1), link


def test_a_class_joins_by_the_qr_codes_url_and_follows_a_live_run(
    stack: Stack, browser: Any
) -> None:
    contexts = [browser.new_context() for _ in range(4)]
    try:
        teacher, *students = [context.new_page() for context in contexts]
        code, link = open_room(teacher, stack.url)
        assert link == f"{stack.url}/r/{code}", (
            f"the join link (and its QR code) is {link!r}: not on the public URL {stack.url}"
        )
        for name, student in zip(("Ada", "Bob", "Cy"), students, strict=True):
            student.goto(link)
            student.get_by_label("Your name").fill(name)
            with student.expect_response(lambda r: f"/r/{code}" in r.url) as info:
                student.get_by_role("button", name="Join and follow").click()
            student.wait_for_load_state()
            assert student.url.endswith(f"/rooms/{code}/follow/"), (
                f"{name} opened the QR's URL and pressed Join: {info.value.status}, the page "
                f"says {said(student.content())!r}"
            )
            student.locator("#follow-status", has_text="following").wait_for()
        teacher.goto(f"{stack.url}/rooms/{code}/")
        teacher.locator("#present", has_text="3").wait_for()

        run_id = start_scenario(teacher, stack.url, "gc-pause-fenced")  # the class follows it
        everything = "window.entry.follow.events.some((e) => e.kind === 'run_finished')"
        for name, student in zip(("Ada", "Bob", "Cy"), students, strict=True):
            entry(student)  # the follower page's module, as window.entry
            student.wait_for_function(everything, timeout=60_000)
            seen = student.evaluate("window.entry.follow.events.map((e) => e.seq)")
            assert seen == stack.db.seqs(run_id), f"{name} saw seqs {seen} of run {run_id}"
    finally:
        for context in contexts:
            context.close()


# ---- HTTPS: the shipped Caddyfile ------------------------------------------------------------


def first_line(exc: AssertionError) -> str:
    return str(exc).split("\nassert ")[0]


def test_over_https_cookies_are_secure_and_the_stream_is_wss(
    https_stack: Stack, browser: Any
) -> None:
    base = https_stack.url
    context = browser.new_context(ignore_https_errors=True)
    sockets: dict[str, int] = {}  # each WebSocket's URL: frames received on it
    findings: list[str] = []
    try:
        page = context.new_page()

        def opened(ws: Any) -> None:
            sockets[ws.url] = 0
            ws.on("framereceived", lambda _: sockets.update({ws.url: sockets[ws.url] + 1}))

        page.on("websocket", opened)
        index = page.goto(base + "/")
        hsts = index.headers.get("strict-transport-security", "")
        if not re.search(r"max-age=[1-9]", hsts):
            findings.append(f"no Strict-Transport-Security on the index (got {hsts!r})")
        try:
            run_id = start_scenario(page, base, "contention")
            page.locator("#run-status[data-status=finished]").wait_for(timeout=40_000)
            wss = f"wss://127.0.0.1:{https_stack.proxy.port}/ws/runs/{run_id}/"
            if not any(url.startswith(wss) and n for url, n in sockets.items()):
                findings.append(f"the run page's stream is not on {wss}: {sockets}")
        except AssertionError as exc:
            findings.append(first_line(exc))
        cookies = {cookie["name"]: cookie for cookie in context.cookies()}
        for name in ("sessionid", "csrftoken"):
            if not cookies.get(name, {}).get("secure"):
                findings.append(f"cookie {name} is not Secure: {cookies.get(name)}")
        try:
            code, link = open_room(page, base)
            if link != f"{base}/r/{code}":
                findings.append(f"the room's join link and QR code say {link!r}, not {base}/r/…")
        except AssertionError as exc:
            findings.append(first_line(exc))
    finally:
        context.close()
    assert not findings, f"over HTTPS through the shipped Caddyfile ({base}):\n" + "\n".join(
        findings
    )


# ---- the layer's Redis stopped for 5 s mid-run -----------------------------------------------


def wait_for(what: str, ready: Any, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        assert time.monotonic() < deadline, f"{what}: not within {timeout_s:g} s"
        time.sleep(0.1)


def test_a_redis_blip_loses_no_viewer_and_no_event(stack: Stack) -> None:
    app1, app2 = stack.replicas["app-1"], stack.replicas["app-2"]
    first = Visitor(app1.url).start_scenario(TURNS)  # run by app-1
    second = Visitor(app2.url).start_scenario(TURNS)  # run by app-2
    third = Visitor(app1.url).start_scenario(TURNS)
    for run in (first, second, third):  # a busy lab queues a run first: the outage is mid-run
        live_soon(stack, run)
    before = [
        Viewer("run 1 via nginx (a)", stack.url, first),
        Viewer("run 1 via nginx (b)", stack.url, first),
        Viewer("run 1 on app-1", app1.url, first),
        Viewer("run 1 on app-2", app2.url, first),
    ]
    for viewer in before:
        viewer.start()
    wait_for("every viewer of run 1 streaming", lambda: all(v.last >= 3 for v in before), 40)
    stack.layer.stop()
    stopped = time.monotonic()
    time.sleep(1)
    during = [
        Viewer("run 2 on app-1, its first viewer there joined during the outage", app1.url, second),
        Viewer("run 2 on app-2, its first viewer there joined during the outage", app2.url, second),
    ]
    for viewer in during:
        viewer.start()
    time.sleep(max(0.0, stopped + 5 - time.monotonic()))  # the outage itself: 5 s
    stack.layer.start_again()
    ended = [run for run in (first, second, third) if stack.db.status(run) != "running"]
    assert not ended, f"runs {ended} ended before the layer's Redis came back: not mid-run"
    after = [
        Viewer("run 3 on app-1, its first viewer there joined just after", app1.url, third),
        Viewer("run 3 on app-2, its first viewer there joined just after", app2.url, third),
        Viewer("run 1 via nginx, joined just after", stack.url, first),
    ]
    for viewer in after:
        viewer.start()
    viewers = before + during + after
    for viewer in viewers:
        viewer.wait()
    problems = [v.problems(stack.db.seqs(v.run_id)) for v in viewers]
    problems = [p for p in problems if p]
    assert not problems, (
        f"{len(problems)}/{len(viewers)} viewers' streams after the layer's Redis was stopped "
        "for 5 s and started again:\n" + "\n".join(problems)
    )


# ---- kill -9 of a replica mid-run (last: it leaves app-1 dead) -------------------------------


def statuses_after(
    reader: Visitor, runs: list[str], since: float, within_s: float
) -> dict[str, str]:
    """Each run's status as pages read it, polled until all are interrupted or ``within_s``
    after ``since``; with how long after ``since`` each first read "interrupted"."""
    seen: dict[str, str] = {}
    while True:
        for run in runs:
            if not seen.get(run, "").startswith("interrupted"):
                status = reader.status(run)
                at = time.monotonic() - since
                seen[run] = f"interrupted after {at:.1f} s" if status == "interrupted" else status
        if all(s.startswith("interrupted") for s in seen.values()):
            return seen
        if time.monotonic() - since > within_s:
            return seen
        time.sleep(0.25)


def live_soon(stack: Stack, run: str) -> None:
    """Live within 40 s of leaving its replica's queue (where a busy machine keeps it waiting
    its turn, up to :data:`QUEUE_PATIENCE_S`)."""
    wait_for(f"run {run} out of the queue", lambda: stack.db.status(run) != "queued",
             QUEUE_PATIENCE_S)  # fmt: skip
    started = "SELECT 1 FROM lockviz_runevent WHERE run_id = %s AND kind = 'run_started'"
    wait_for(f"run {run} live", lambda: bool(stack.db.query(started, run)), 40)


def new_runs(stack: Stack, count: int) -> list[str]:
    """Fresh visitors through the proxy, each starting a run, clicking three faults and
    finishing it: what went wrong, if anything."""
    findings = []
    for n in range(1, count + 1):
        newcomer = Visitor(stack.url)
        try:
            run = newcomer.start_session()
        except AssertionError as exc:
            findings.append(f"new run {n} through the proxy: {exc}")
            continue
        # Watched, as its page would watch it: a queued run that nobody watches is cancelled.
        Viewer(f"new run {n}", stack.url, run).start(timeout_s=QUEUE_PATIENCE_S + 60)
        live_soon(stack, run)
        got = [
            newcomer.click(run, do="acquire", client="alice"),
            newcomer.click(run, do="pause", client="alice", s="1"),
            newcomer.click(run, do="acquire", client="bob"),
            newcomer.finish(run),
        ]
        if got != ["done"] * 4:
            findings.append(f"new run {n} ({run}, on {stack.replica_of(run).name}): {got}")
    return findings


def says_interrupted(page: Any, run: str, killed: float) -> list[str]:
    """Whether the open page of ``run`` says so, without a reload, 10 s (and a margin for its
    reconnect) after its replica was killed."""
    try:
        page.locator("#run-status[data-status=interrupted]").wait_for(
            timeout=max(1.0, killed + 15 - time.monotonic()) * 1000
        )
    except PlaywrightError:
        shown = page.locator("#run-status").text_content()
        return [f"the open page of {run} still says {shown!r} 15 s after kill -9 of its replica"]
    if not page.evaluate("window.notReloaded === true"):
        return [f"the open page of {run} said so only after a reload"]
    return []


def test_a_replica_killed_mid_run_takes_only_its_own_runs(stack: Stack, browser: Any) -> None:
    """Two runs on each replica; a page open on one of app-1's; then kill -9 of app-1."""
    owners = {
        name: [Visitor(stack.replicas[name].url) for _ in range(2)] for name in stack.replicas
    }
    runs = {name: [v.start_session() for v in visitors] for name, visitors in owners.items()}
    for name, ids in runs.items():
        for run in ids:
            live_soon(stack, run)
            assert stack.replica_of(run).name == name
    watched = runs["app-1"][0]
    context = browser.new_context()
    findings: list[str] = []
    try:
        page = context.new_page()
        page.goto(f"{stack.url}/play/{watched}/")
        page.locator("#run-status[data-status=running]").wait_for()
        page.evaluate("window.notReloaded = true")

        stack.replicas["app-1"].kill()
        killed = time.monotonic()
        reads: dict[str, str] = {}
        reader = Visitor(stack.url)
        poller = threading.Thread(
            target=lambda: reads.update(statuses_after(reader, runs["app-1"], killed, 10))
        )
        poller.start()
        for visitor, run in zip(owners["app-2"], runs["app-2"], strict=True):
            got = visitor.via(stack.url).click(run, do="acquire", client="alice")
            if got != "done":
                findings.append(f"run {run} on app-2, a click through the proxy: {got}")
        findings += new_runs(stack, 3)
        poller.join()
        findings += [
            f"run {run} of the killed app-1 still reads {read!r} 10 s after kill -9"
            for run, read in reads.items()
            if not read.startswith("interrupted")
        ]
        findings += says_interrupted(page, watched, killed)
        for visitor, run in zip(owners["app-2"], runs["app-2"], strict=True):
            visitor.finish(run)
    finally:
        context.close()
    if not SEPARATE_HOSTS:
        findings.append("(not root: the replicas shared one host name, as separate hosts do not)")
    assert not findings, "after kill -9 of app-1 mid-run:\n" + "\n".join(findings)
