"""Capacity: N built-in runs pressed at once on a real app, each watched, each judged.

One script past the usual ~300 lines, on purpose: a bench is read and run as one file (its app, its
presses, the browser's measure and its tables).

A lecture hall presses "Run" together. For each press this starts the app as ``make run`` does
(``manage.py serve``, on a fresh database), then, all at once, N browsers — each with its own
session cookie, as N students would have — ``POST /runs/`` the chosen built-in with the form the
index page shows (its fencing and lease, so its ``expect`` applies), and each run is WATCHED by a
WebSocket viewer of its own from the moment its page would open (a queued run nobody watches is
cancelled after 20 s, by design). It reports, per press:

* **met / inconclusive / contradicted**: the run's verdict met its ``expect``; the run said it
  could not keep its story (the machine fell behind), so its ``expect`` was not judged; or the
  verdict contradicted ``expect``. *failed*, *cancelled* and *refused* (a 429/503 at the POST)
  are counted apart;
* **lateness** of every step (executed − scheduled on the run's clock: the step event's
  ``late_ms``, or, for an app that does not record it, ``t_ms − at_ms``): p50, p99, max;
* **shifts**: runs whose schedule was shifted to keep its story (``schedule_shifted`` events);
* **time until all finished**, from the first POST to the last run's final event, and the
  machine's CPU over the press (% of all cores: other work on this shared machine shows there).

Then **a session live from start-up** (``--ready N``): on a fresh app, N free-play sessions one
after the other, each timed from its ``POST /play/`` to its first click applied (not "the lab
is still starting this run's servers"): the first once ``serve`` says its start-up is done,
again with the first as soon as the page answers, and (``--ready-proxy``) through the shipped
nginx in front of two web processes and two lab hosts (bench/labhosts.py's tier).

Then, on a quiet app, **click → first event**: from the POST that starts a run to the first
event on a WebSocket viewer opened as soon as the POST answers, several times; with
``--browser``, also in Chromium, from the click on the index page's Run button to the first
event drawn in the diagram (an SVG element with ``data-seq``). And **memory**: the RSS and PSS
of the idle app (Daphne and the channel layer's redis-server), then the most, sampled every
0.1 s, of the app and everything it started during one Redlock run (six redis-servers, the
proxy, two clients).

    .venv/bin/python -m bench.capacity                       # the default presses, doc updated
    .venv/bin/python -m bench.capacity --press redlock-clock-jump=50 --no-doc
    .venv/bin/python -m bench.capacity --press gc-pause-fenced=50 --env LOCKVIZ_MAX_RUNS=50
    .venv/bin/python -m bench.capacity --press '' --memory '' --first 0 --browser \
        --first-slugs backends --warm-up 20 --no-doc   # click → drawn, one built-in per backend
    .venv/bin/python -m bench.capacity --press '' --memory '' --first 0 --ready 10 \
        --ready-proxy --no-doc                         # POST /play/ → live, from start-up

``--env NAME=VALUE`` passes settings to the app (e.g. the fixed ``LOCKVIZ_MAX_RUNS=50`` main
was measured with). Each press gets a fresh app. It prints tables and writes them into the
"Capacity" section of docs/performance.md (between its marker comments).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from bench import ROOT, machine
from bench.app import App as Serve
from bench.browser import Browser
from bench.doc import write_section
from bench.machine import MachineCpu
from bench.viewer import Viewer
from lockviz.scenarios.library import builtin

DOC = os.path.join(ROOT, "docs", "performance.md")
BEGIN, END = "<!-- bench/capacity.py: begin -->", "<!-- bench/capacity.py: end -->"
# One built-in per set of servers a run asks for (``--first-slugs backends``): single Redis,
# the Redlock nodes, etcd, ZooKeeper alone and as an ensemble, PostgreSQL.
BACKENDS = "gc-pause-fenced,redlock-happy,etcd-happy,zk-happy,zk-ensemble-partition,pg-happy"
DEFAULT_PRESSES = ["gc-pause-fenced=50", "redlock-clock-jump=30", "redlock-clock-jump=50"]
FINAL = ("run_finished", "run_failed", "run_interrupted", "run_cancelled")
LOGS = ""  # where to keep each app's log (--logs)
APP_ROOT = ROOT  # the checkout whose app is measured (--root)
PORT: int | None = None  # the port the app listens on (--port; a free one if not given)
PAGE = os.sysconf("SC_PAGE_SIZE")


# -- the app ----------------------------------------------------------------------------------


class App(Serve):
    """The app for one press, with a database of its own in ``workdir``."""

    def __init__(self, workdir: str, env: dict[str, str]) -> None:
        db, log = os.path.join(workdir, "app.sqlite3"), os.path.join(workdir, "app.log")
        super().__init__(db, log, env, root=APP_ROOT, timeout_s=120, port=PORT)

    def stop(self, timeout_s: float = 30) -> None:
        if LOGS:  # --logs: keep what the app said (its capacity decisions among it)
            os.makedirs(LOGS, exist_ok=True)
            with open(os.path.join(LOGS, f"app-{self.port}.log"), "w") as f:
                f.write(self.output())
        super().stop(timeout_s)

    def tree(self) -> list[int]:
        """The app and every process it started (the layer's redis, the lab's servers...)."""
        return [self.proc.pid, *self.descendants()]


# -- one run, watched -------------------------------------------------------------------------


@dataclass
class Watched:
    slug: str
    pressed_ns: int = 0
    run_id: str | None = None
    refused: str = ""
    events: list[dict[str, Any]] = field(default_factory=list)
    first_event_ns: int = 0
    final_ns: int = 0
    status: str = ""
    error: str = ""

    @property
    def outcome(self) -> str:
        if self.refused:
            return "refused"
        final = next((e for e in reversed(self.events) if e["kind"] in FINAL), None)
        if final is None:
            return "cancelled" if self.status == "cancelled" else "unfinished"
        if final["kind"] == "run_cancelled":
            return "cancelled"
        if final["kind"] != "run_finished":
            return "failed"
        if final.get("judged") is False or (final.get("verdict") or {}).get("inconclusive"):
            return "inconclusive"
        met = final.get("expect_met")
        return "met" if met else "contradicted" if met is False else "no expect"

    @property
    def ended(self) -> bool:
        final_event = any(e["kind"] in FINAL for e in self.events)
        return self.status in ("cancelled", "interrupted") or (
            final_event and self.status in ("finished", "failed")
        )

    def receive(self, message: dict[str, Any]) -> None:
        now = time.monotonic_ns()
        for frame in message["frames"] if message["type"] == "events" else [message]:
            if frame["type"] == "status":
                self.status = frame["status"]
            elif frame["type"] == "event":
                event = frame["event"]
                if self.events and event["seq"] <= self.events[-1]["seq"]:
                    continue
                self.first_event_ns = self.first_event_ns or now
                self.events.append(event)
                if event["kind"] in FINAL:
                    self.final_ns = self.final_ns or now
        if self.ended:
            self.final_ns = self.final_ns or now

    def lateness(self) -> list[float]:
        late = []
        for e in self.events:
            if e["kind"] == "step" and "at_ms" in e:
                late.append(float(e["late_ms"]) if "late_ms" in e else e["t_ms"] - e["at_ms"])
        return late


class Following(Viewer):
    """A viewer that feeds ``watched`` and closes once the run has ended."""

    def __init__(self, watched: Watched) -> None:
        super().__init__()
        self.watched = watched

    def received(self, now_ns: int, message: dict[str, Any]) -> None:
        self.watched.receive(message)
        if self.watched.ended:
            self.close()


async def watch(url: str, watched: Watched, timeout_s: float) -> None:
    """A viewer of the run's page: every event until the run has ended, then close.

    A run has ended once its last event (run_finished, run_failed...) and a final status have
    both arrived, in either order (a viewer that connects late gets the status first). A
    connection refused or closed under load is opened again where it was.
    """
    ws_url = url.replace("http://", "ws://") + f"/ws/runs/{watched.run_id}/"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not watched.ended:
        after = watched.events[-1]["seq"] if watched.events else 0
        viewer = Following(watched)
        left = max(0.1, deadline - time.monotonic())
        try:
            await asyncio.wait_for(viewer.watch(f"{ws_url}?after={after}", timeout_s=60), left)
        except TimeoutError as exc:
            watched.error = repr(exc)
            return
        if not watched.ended:
            watched.error = viewer.error or "closed before the run ended"
            await asyncio.sleep(0.5)


def start(browser: Browser, slug: str) -> tuple[str | None, str]:
    """Press the built-in's Run button with the form the index page shows (its fencing and
    lease, so its ``expect`` applies)."""
    scenario = builtin()[slug]
    form = {"ttl_ms": str(scenario.ttl_ms)} | ({"fencing": "on"} if scenario.fencing else {})
    return browser.start(slug, **form)


async def press_and_watch(
    url: str, slug: str, n: int, timeout_s: float
) -> tuple[list[Watched], int]:
    """N browsers press Run on ``slug`` at once; each watches its run to its end."""
    browsers = await asyncio.gather(*(asyncio.to_thread(Browser, url) for _ in range(n)))
    runs = [Watched(slug) for _ in range(n)]

    async def one(browser: Browser, watched: Watched) -> None:
        watched.pressed_ns = time.monotonic_ns()
        run_id, why = await asyncio.to_thread(start, browser, slug)
        watched.run_id, watched.refused = run_id, why
        if run_id is not None:
            await watch(url, watched, timeout_s)

    started = time.monotonic_ns()
    await asyncio.gather(*(one(b, w) for b, w in zip(browsers, runs, strict=True)))
    return runs, started


# -- measurements -----------------------------------------------------------------------------


def press(slug: str, n: int, env: dict[str, str], timeout_s: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="lockviz-capacity-") as workdir:
        app = App(workdir, env)
        try:
            busy = MachineCpu()
            runs, started = asyncio.run(press_and_watch(app.url, slug, n, timeout_s))
            cpu = busy.percent()
        finally:
            app.stop()
    outcomes: dict[str, int] = {}
    for watched in runs:
        outcomes[watched.outcome] = outcomes.get(watched.outcome, 0) + 1
    late = sorted(x for w in runs for x in w.lateness())
    ends = [w.final_ns for w in runs if w.final_ns]
    spans = [(w.first_event_ns, w.final_ns) for w in runs if w.first_event_ns and w.final_ns]
    edges = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    at_once = most = 0
    for _, change in edges:
        at_once += change
        most = max(most, at_once)
    shifted = sum(1 for w in runs if any(e["kind"] == "schedule_shifted" for e in w.events))
    reasons = sorted(
        {
            str(e.get("inconclusive") or (e.get("verdict") or {}).get("inconclusive") or "")
            for w in runs
            for e in w.events
            if e["kind"] == "run_finished"
        }
        - {""}
    )
    misses = sorted(
        {
            "; ".join(e.get("mismatches") or [])
            for w in runs
            for e in w.events
            if e["kind"] == "run_finished" and e.get("expect_met") is False
        }
    )
    return {
        "slug": slug,
        "n": n,
        "outcomes": outcomes,
        "late": late,
        "shifted": shifted,
        "all_done_s": (max(ends) - started) / 1e9 if ends else float("nan"),
        "most_at_once": most,
        "cpu": cpu,
        "reasons": reasons,
        "misses": misses,
        "errors": sorted({w.error for w in runs if w.error and w.outcome != "met"})[:3],
    }


def first_events(slugs: list[str], times: int, env: dict[str, str]) -> dict[str, list[float]]:
    """ms from the POST to the first event on a viewer opened when the POST answers."""
    found: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="lockviz-capacity-") as workdir:
        app = App(workdir, env)
        try:
            for slug in slugs:
                for _ in range(times):
                    browser = Browser(app.url)
                    watched = Watched(slug, pressed_ns=time.monotonic_ns())
                    watched.run_id, watched.refused = start(browser, slug)
                    asyncio.run(watch(app.url, watched, 120))
                    found.setdefault(slug, []).append(
                        (watched.first_event_ns - watched.pressed_ns) / 1e6
                    )
                    time.sleep(1)  # one run at a time: the machine as one student finds it
        finally:
            app.stop()
    return found


STARTED = "its lab host (pid"  # ``serve``'s last line of its start-up, once its lab host beats


def readiness(
    times: int, env: dict[str, str], at_once: bool = False, pause_s: float = 1.0
) -> list[float]:
    """ms from ``POST /play/`` to the free-play session live (its first click applied: not
    "the lab is still starting this run's servers"), for ``times`` sessions one after the
    other on a fresh app: the first as soon as ``serve`` has said its start-up is done (its
    lab host's line), as the first learner after ``make run`` meets it; ``at_once``: as soon
    as the page answers, the lab host still starting."""
    found: list[float] = []
    with tempfile.TemporaryDirectory(prefix="lockviz-capacity-") as workdir:
        app = App(workdir, env)
        try:
            while not at_once and STARTED not in app.output():
                time.sleep(0.05)
            for _ in range(times):
                found.append(_session_live(Browser(app.url)))
                time.sleep(pause_s)  # one learner after another
        finally:
            app.stop()
    return found


def readiness_through_proxy(times: int, pause_s: float = 1.0) -> list[float]:
    """:func:`readiness` through the shipped nginx in front of two web processes and two lab
    hosts on one PostgreSQL and one Redis (bench/labhosts.py's tier), as a school deploys it:
    the first session as soon as every process has said it started (the lab hosts take runs)."""
    from pathlib import Path

    from bench.labhosts import tier
    from lockviz.lab.ports import free_port
    from tests.deploy.proxies import Nginx  # the shipped deploy/nginx.conf, as the tests run it

    found: list[float] = []
    with (
        tempfile.TemporaryDirectory(prefix="lockviz-capacity-") as workdir,
        tier(Path(workdir)) as bench,
    ):
        upstreams = {f"app-{i}": web.port for i, web in enumerate(bench.webs, 1)}
        proxy = Nginx(Path(workdir) / "proxy", upstreams, free_port())
        try:
            for _ in range(times):
                found.append(_session_live(Browser(proxy.url)))
                time.sleep(pause_s)
        finally:
            proxy.stop()
    return found


def _session_live(browser: Browser) -> float:
    """ms from ``POST /play/`` until a click is applied (inf: never, within 120 s)."""
    began = time.monotonic()
    run_id, why = browser.play()
    if run_id is None:
        print(f"   the session was not started: {why}", flush=True)
        return float("inf")
    said = ""
    while time.monotonic() - began < 120:
        said = browser.click(run_id, do="acquire", client="alice")
        if said != "refused":
            break
        time.sleep(0.02)
    took = (time.monotonic() - began) * 1000 if said == "done" else float("inf")
    browser.click(run_id, "finish")
    return took


def first_drawn(
    slugs: list[str], times: int, env: dict[str, str], warm_up_s: float = 0
) -> dict[tuple[str, str], list[float]]:
    """ms from the click's POST on the index page's Run button to the first event drawn in the
    diagram, in Chromium: an SVG element of an event (``data-seq``) with a non-empty box. (From
    the POST, not from Playwright's click: its own checks before clicking are the instrument.)
    *cold*: a new browser profile each time (nothing cached); *warm*: one profile, after its
    first run (the page's scripts and styles in its cache, as for a student's second run).
    ``warm_up_s``: first one run of each slug, over HTTP, then this long idle (an app whose
    learners have run each of them before: its lab started, and the spares of the sets they
    asked for kept, as lockviz.lab.spares keeps what learners use)."""
    import shutil

    from playwright.sync_api import sync_playwright

    found: dict[tuple[str, str], list[float]] = {}
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    with tempfile.TemporaryDirectory(prefix="lockviz-capacity-") as workdir:
        app = App(workdir, env)
        try:
            for slug in slugs if warm_up_s else []:
                watched = Watched(slug, pressed_ns=time.monotonic_ns())
                watched.run_id, watched.refused = start(Browser(app.url), slug)
                asyncio.run(watch(app.url, watched, 120))
            time.sleep(warm_up_s)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium, args=flags)
                for slug in slugs:
                    for _ in range(times):
                        context = browser.new_context(viewport={"width": 1400, "height": 1000})
                        context.add_init_script(DRAWN_AT)
                        found.setdefault((slug, "cold"), []).append(
                            _click_run(context.new_page(), app.url, slug)
                        )
                        context.close()
                    context = browser.new_context(viewport={"width": 1400, "height": 1000})
                    context.add_init_script(DRAWN_AT)
                    page = context.new_page()
                    _click_run(page, app.url, slug)  # fills the cache
                    for _ in range(times):
                        found.setdefault((slug, "warm"), []).append(_click_run(page, app.url, slug))
                    context.close()
                browser.close()
        finally:
            app.stop()
    return found


# An event drawn: an SVG element of the diagram with a ``data-seq`` and a non-empty box (what
# Playwright's "visible" is). Locators, not ``wait_for_function``: they run in Playwright's own
# world, which the page's CSP (no eval) does not govern.
DRAWN = "#diagram [data-seq]"
FINISHED = "#run-status[data-status='finished']"
# When the page itself first holds a drawn event, by its own clock (wall ms, as the POST's
# start is given): a locator's wait retries at Playwright's growing intervals (up to 1 s), so
# the moment it returns says when it looked, not when the event was drawn. An init script is
# not eval: the page's CSP does not govern it.
DRAWN_AT = """
new MutationObserver((_, seen) => {
  if (document.querySelector("#diagram [data-seq]")) {
    window.lockvizDrawnAt = Date.now();
    seen.disconnect();
  }
}).observe(document, { childList: true, subtree: true });
"""


def _click_run(page: Any, url: str, slug: str) -> float:
    """Open the index, click the scenario's Run button: ms from its POST to the first drawing."""
    page.goto(url + "/")
    posted: list[Any] = []

    def on_request(request: Any) -> None:
        if request.method == "POST" and not posted:
            posted.append(request)

    page.on("request", on_request)
    page.locator(f"form:has(input[value='{slug}']) .run-button").click()
    page.locator(DRAWN).first.wait_for(state="visible", timeout=60_000)
    page.remove_listener("request", on_request)
    drawn_at = float(page.evaluate("window.lockvizDrawnAt"))
    took = drawn_at - float(posted[0].timing["startTime"])
    page.locator(FINISHED).wait_for(state="attached", timeout=120_000)
    time.sleep(0.5)  # one run at a time: the machine as one student finds it
    return took


def memory(slug: str, env: dict[str, str]) -> dict[str, float]:
    """MB: the idle app's RSS and PSS, then the most of the app's whole tree during one run."""
    with tempfile.TemporaryDirectory(prefix="lockviz-capacity-") as workdir:
        app = App(workdir, env)
        try:
            time.sleep(3)
            idle = _memory(app.tree())
            best = dict(idle)
            runs: list[Watched] = []

            async def sample() -> None:
                task = asyncio.ensure_future(press_and_watch(app.url, slug, 1, 120))
                while not task.done():
                    now = _memory(app.tree())
                    for key in best:
                        best[key] = max(best[key], now[key])
                    await asyncio.sleep(0.1)
                runs.extend((await task)[0])

            asyncio.run(sample())
        finally:
            app.stop()
    return {
        "idle_rss": idle["rss"],
        "idle_pss": idle["pss"],
        "idle_n": idle["processes"],
        "run_rss": best["rss"],
        "run_pss": best["pss"],
        "processes": best["processes"],
        "met": float(bool(runs) and runs[0].outcome == "met"),
    }


def _memory(pids: list[int]) -> dict[str, float]:
    rss = pss = 0.0
    alive = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    name, _, value = line.partition(":")
                    if name == "Rss":
                        rss += int(value.split()[0]) / 1024
                    elif name == "Pss":
                        pss += int(value.split()[0]) / 1024
            alive += 1
        except (OSError, ValueError):
            continue
    return {"rss": rss, "pss": pss, "processes": float(alive)}


# -- the report -------------------------------------------------------------------------------


def pick(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


PRESS_HEADER = (
    "| runs pressed | scenario | met | inconclusive | contradicted | failed / cancelled / refused "
    "| shifted | step lateness p50 / p99 / max ms | most at once | all finished after "
    "| machine busy % |\n|---|---|---|---|---|---|---|---|---|---|---|"
)


def press_row(r: dict[str, Any], label: str) -> str:
    o, late = r["outcomes"], r["late"]
    others = f"{o.get('failed', 0)} / {o.get('cancelled', 0)} / {o.get('refused', 0)}"
    if o.get("unfinished"):
        others += f" (+{o['unfinished']} unfinished)"
    return (
        f"| {r['n']} | `{r['slug']}`{label} | {o.get('met', 0)} | {o.get('inconclusive', 0)} "
        f"| {o.get('contradicted', 0)} | {others} | {r['shifted']} "
        f"| {pick(late, 0.5):.0f} / {pick(late, 0.99):.0f} / {max(late, default=float('nan')):.0f} "
        f"| {r['most_at_once']} | {r['all_done_s']:.0f} s | {r['cpu']:.0f} |"
    )


def spread(values: list[float]) -> str:
    values = sorted(values)
    return (
        f"{statistics.median(values):.0f} | {min(values):.0f} | {max(values):.0f} | {len(values)}"
        if values
        else "– | – | – | 0"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--press", action="append", help="SLUG=N (default: the issue's presses)")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the app")
    parser.add_argument("--first", type=int, default=10, help="POST → first event, times each")
    parser.add_argument(
        "--first-slugs", default="gc-pause-fenced,redlock-clock-jump", help="or 'backends'"
    )
    parser.add_argument("--browser", action="store_true", help="also click → drawn, in Chromium")
    parser.add_argument(
        "--warm-up", type=float, default=0, help="s idle after one run before the clicks"
    )
    parser.add_argument(
        "--ready", type=int, default=10, help="free-play sessions from start-up: POST → live"
    )
    parser.add_argument(
        "--ready-proxy", action="store_true", help="--ready through nginx and lab hosts too"
    )
    parser.add_argument("--memory", default="redlock-clock-jump", help="'' to skip")
    parser.add_argument("--timeout", type=float, default=600, help="per press, s")
    parser.add_argument("--label", default="", help="a note for the rows (e.g. main)")
    parser.add_argument("--no-doc", dest="doc", action="store_false")
    parser.add_argument("--logs", default="", help="keep each app's log in this directory")
    parser.add_argument("--root", default=ROOT, help="the checkout whose app to measure")
    parser.add_argument("--port", type=int, help="the app's port (a shared machine's own range)")
    args = parser.parse_args()
    global LOGS, APP_ROOT, PORT
    LOGS, APP_ROOT, PORT = args.logs, args.root, args.port
    env = dict(item.split("=", 1) for item in args.env)
    env.setdefault("LOCKVIZ_MAX_QUEUE", "200")  # a lecture hall: every press is admitted
    env.setdefault("LOCKVIZ_MAX_PER_BROWSER", "4")
    env.setdefault("LOCKVIZ_MAX_PER_ADDRESS", "1000")  # every press comes from this machine
    env.setdefault("LOCKVIZ_PLAY_PER_ADDRESS", "1000")
    label = f" ({args.label})" if args.label else ""
    tables = [
        table(PRESS_HEADER, presses(args.press or DEFAULT_PRESSES, env, args.timeout, label)),
        table(READY_HEADER, ready_rows(args.ready, env, label, args.ready_proxy)),
        table(FIRST_HEADER, firsts(args, env, label)),
        table(MEMORY_HEADER, memories(args.memory, env, label)),
    ]
    tables = [t for t in tables if t]
    settings = ", ".join(f"{k}={v}" for k, v in sorted(env.items()))
    summary = f"{machine.cores()}; app settings: {settings}; {machine.now()}."
    print("\n" + "\n\n".join(tables) + "\n\n" + summary)
    if args.doc:
        write_doc(tables, summary)


def table(header: str, rows: list[str]) -> str:
    return header + "\n" + "\n".join(rows) if rows else ""


def presses(specs: list[str], env: dict[str, str], timeout_s: float, label: str) -> list[str]:
    rows = []
    for spec in filter(None, specs):  # --press '' : no press
        slug, _, n = spec.partition("=")
        result = press(slug, int(n), env, timeout_s)
        rows.append(press_row(result, label))
        print(rows[-1], flush=True)
        for what in ("reasons", "misses", "errors"):
            if result[what]:
                print(f"   {what}: {result[what]}", flush=True)
    return rows


def firsts(args: argparse.Namespace, env: dict[str, str], label: str) -> list[str]:
    rows = []
    chosen = BACKENDS if args.first_slugs == "backends" else args.first_slugs
    slugs = [s for s in chosen.split(",") if s]
    if args.first and slugs:
        for slug, ms in first_events(slugs, args.first, env).items():
            rows.append(f"| `{slug}`{label} | POST → first event on a viewer | {spread(ms)} |")
            print(rows[-1], flush=True)
    if args.browser and slugs:
        for (slug, cache), ms in first_drawn(
            slugs, max(3, args.first // 2), env, args.warm_up
        ).items():
            rows.append(
                f"| `{slug}`{label} | click's POST → first event drawn (Chromium, {cache} cache) "
                f"| {spread(ms)} |"
            )
            print(rows[-1], flush=True)
    return rows


def ready_rows(times: int, env: dict[str, str], label: str, proxy: bool = False) -> list[str]:
    rows = []
    ways = [(False, "once serve says it has started"),
            (True, "the first as soon as the page answers")]  # fmt: skip
    if proxy:
        ways.append((False, "through nginx, 2 web processes and 2 lab hosts"))
    for at_once, when in ways:
        if not times:
            break
        found = (
            readiness_through_proxy(times) if "nginx" in when else readiness(times, env, at_once)
        )
        ms = sorted(found)
        rows.append(
            f"| free play{label}, {times} sessions from start-up, {when} | {found[0]:.0f} "
            f"| {pick(ms, 0.5):.0f} | {pick(ms, 0.95):.0f} | {ms[-1]:.0f} |"
        )
        print(rows[-1], flush=True)
    return rows


def memories(slug: str, env: dict[str, str], label: str) -> list[str]:
    if not slug:
        return []
    m = memory(slug, env)
    rows = [
        f"| idle app{label} | {m['idle_rss']:.0f} | {m['idle_pss']:.0f} | {m['idle_n']:.0f} |",
        f"| idle app + one `{slug}` run{label} | {m['run_rss']:.0f} | {m['run_pss']:.0f} "
        f"| {m['processes']:.0f} |",
    ]
    print("\n".join(rows), flush=True)
    return rows


FIRST_HEADER = (
    "| scenario | from → to | median ms | min ms | max ms | runs |\n|---|---|---|---|---|---|"
)
# POST /play/ → the session live (its first click applied), from the app's start-up
READY_HEADER = "| sessions | the first ms | p50 ms | p95 ms | max ms |\n|---|---|---|---|---|"
MEMORY_HEADER = "| what | RSS MB (sum) | PSS MB (sum) | processes |\n|---|---|---|---|"


INTRO = """`bench/capacity.py` presses N runs of a built-in at once through `POST /runs/` of a
real `manage.py serve` (each from a browser session of its own, with the form the index page
shows, each watched by a WebSocket viewer of its own), and counts how they ended: *met* their
`expect`, *inconclusive* (the run said the machine fell behind and it could not keep its story:
`expect` not judged), *contradicted*, or failed / cancelled / refused. *Lateness* is every step's
executed − scheduled time on its run's clock; *shifted* counts runs whose schedule moved as a
whole to keep its story; *machine busy* is the whole machine's CPU over the press, as % of its
two cores (other engineers' work on this shared machine shows there)."""


def write_doc(tables: list[str], summary: str) -> None:
    """Replace this benchmark's section of docs/performance.md, keeping every other section."""
    body = f"{BEGIN}\n## Capacity: a lecture hall pressing Run\n\n{INTRO}\n\n"
    body += (
        "\n\n".join(tables)
        + f"\n\n{summary}\n\nRegenerate with `.venv/bin/python -m bench.capacity`.\n{END}"
    )
    write_section(DOC, body, begin=BEGIN, end=END)


if __name__ == "__main__":
    main()
