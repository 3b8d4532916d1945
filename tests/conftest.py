"""Shared fixtures. Live fixtures start real servers through the lab, exactly as runs do."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import re
import shutil
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.core.cache import cache
from playwright.sync_api import sync_playwright

from bench.app import App
from lockviz.consumers import arrivals
from lockviz.lab import procs
from lockviz.lab.labs import LocalLab, ServerSet
from lockviz.lab.servers.redis import LayerServer
from lockviz.models import Run
from lockviz.ops import readiness
from lockviz.runs import recorder
from lockviz.scenarios.schema import Scenario, parse

ROOT = Path(__file__).resolve().parent.parent
# Which worker of ``pytest -n`` runs what, and in which order.
pytest_plugins = ["tests.scheduling"]
# No warm spares (lockviz.lab.spares) in the tests' labs and apps unless a test asks for them:
# each app would start a JVM ensemble and more ahead. tests/lockviz/lab/test_spares.py tests them.
os.environ.setdefault("LOCKVIZ_SPARES", "0")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# What Playwright (1.65) itself turns off, and two more: each new context is a window, and this
# chromium (156) gives every window an omnibox popup drawn by a WebUI renderer of its own, which
# no test opens: ~0.55 s of CPU per context (0.75 s with the browser's part; ten contexts 11.4 s
# of CPU → 3.8 s, measured). Chromium reads the last --disable-features only, and Playwright's
# comes first: so its list is repeated here, and tests/browser/test_chromium.py checks that
# every feature Playwright's command line turns off is still off.
FEATURES_OFF = [
    "AimEnabled", "AvoidCorsURLLoaderRestartOnRedirect", "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose", "HttpsFirstBalancedModeAutoEnable", "HttpsUpgrades",
    "LensOverlay", "MediaRouter", "NetworkTimeServiceQuerying", "OptimizationHints", "PaintHolding",
    "PreconnectToSearch", "TcpPortRandomizationWin", "ThirdPartyStoragePartitioning",
    "msEdgeUpdateLaunchServicesPreferredVersion", "msForceBrowserSignIn",
    "WebUIOmniboxPopup", "WebUIOmniboxAimPopup",
]  # fmt: skip
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    f"--disable-features={','.join(FEATURES_OFF)}",
]  # fmt: skip
_browser_loop: list[asyncio.AbstractEventLoop] = []  # the loop Playwright's sync API runs


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Debian's chromium through Playwright (never a downloaded browser): one per test process,
    for tests/browser and tests/deploy alike."""
    with sync_playwright() as p:
        loop = asyncio.get_running_loop()  # Playwright's, "running" in this thread from now on
        _browser_loop.append(loop)
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        bypass_csp(browser)
        try:
            yield browser
        finally:
            asyncio._set_running_loop(loop)  # a test without the browser may be ending
            browser.close()
            _browser_loop.remove(loop)


def bypass_csp(browser: Any) -> None:
    """Every context of ``browser`` bypasses the pages' Content-Security-Policy unless it says
    otherwise: the tests' own means (a string ``wait_for_function``, axe's and Mermaid's
    ``add_script_tag``) are scripts the policy refuses, as it should refuse anyone's.
    tests/browser/test_csp.py opens its pages with the policy on (``bypass_csp=False``)."""
    new_context, new_page = browser.new_context, browser.new_page

    def context(**options: Any) -> Any:
        return new_context(**{"bypass_csp": True, **options})

    def page(**options: Any) -> Any:
        return new_page(**{"bypass_csp": True, **options})

    browser.new_context, browser.new_page = context, page


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Playwright's sync API leaves its event loop marked as running in this thread for as long
    as the browser lives. Django then refuses every database call here as if made from async
    code, and every ``asyncio.run`` (an async test's too) refuses to start. A test that does not
    use the browser gets the thread without it, from its first fixture to its last, and gives
    it back: which tests a process runs after its browser must not decide whether they pass
    (under ``-n``, any test may follow a browser test in its worker)."""
    current = asyncio._get_running_loop()
    uses_browser = {"browser", "page"} & set(getattr(item, "fixturenames", ()))
    hidden = current is not None and current in _browser_loop and not uses_browser
    if hidden:
        asyncio._set_running_loop(None)
    try:
        return (yield)
    finally:
        if hidden and current is not None and not current.is_closed():
            asyncio._set_running_loop(current)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """No run outlives the test that started it: before its fixtures end (its database
    emptied), a run still executing is failed and its thread waited for. Left running, it
    would write to the next test's database, or be refused it and die noisily."""
    stop_runs(why=f"{item.name} ended")
    return (yield)


RUN_THREAD = re.compile(r"run-[0-9a-f]{10}")  # recorder.start's, not the keeper's or timers'


def stop_runs(why: str, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        left = [t for t in threading.enumerate() if RUN_THREAD.fullmatch(t.name) and t.is_alive()]
        if not left:
            return
        for thread in left:  # a queued run has no engine yet: it gets one, then this ends it
            engine = recorder._engines.get(thread.name.removeprefix("run-"))
            if engine is not None:
                engine.abort(why)
        time.sleep(0.05)


@pytest.fixture(scope="session")
def _machine_locks(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path] | None:
    """Under ``-n``: two lock files all the workers of this run share (None without ``-n``)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return None
    shared = tmp_path_factory.getbasetemp().parent  # each worker's base temp is below it
    return shared / "machine.turnstile", shared / "machine.lock"


@pytest.fixture(autouse=True)
def _the_machine(request: pytest.FixtureRequest, _machine_locks: Any) -> Iterator[None]:
    """Under ``-n``, a test marked ``alone`` (it loads the machine on purpose: CPU hogs, a class
    of browsers) runs while no test that starts servers or a browser does, and so disturbs
    none of their schedules; every other such test shares the machine. A readers-writer lock
    over files: a turnstile makes the next ``alone`` test wait only for the tests already
    running, not for every test that comes after it. The quick tests (neither ``live`` nor
    ``browser``: the test client, pure functions; no schedule to keep) take no lock, and run
    beside an ``alone`` test (tests/scheduling.py hands them out after it)."""
    marked = {m.name for m in request.node.iter_markers()}
    if _machine_locks is None or not marked & {"alone", "live", "browser"}:
        yield
        return
    turnstile_path, room_path = _machine_locks
    alone = request.node.get_closest_marker("alone") is not None
    with open(turnstile_path, "a") as turnstile, open(room_path, "a") as room:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        fcntl.flock(room, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        fcntl.flock(turnstile, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(room, fcntl.LOCK_UN)


@pytest.fixture(autouse=True)
def _watchers_written(django_db_blocker: Any) -> Iterator[None]:
    """Viewers' watcher counts are written by a thread every half second
    (lockviz.consumers.arrivals): what a test's viewers changed is written as it ends, not
    into the next test's database."""
    yield
    with django_db_blocker.unblock():
        arrivals.flush_watchers()


@pytest.fixture(autouse=True)
def _fresh_shares() -> None:
    """Each test starts with every address's shares unspent (lockviz.shares counts in the
    cache, which lives as long as the test process), and /readyz's last answer forgotten."""
    cache.clear()
    readiness._last = None


@pytest.fixture(autouse=True)
def _quick_passwords(settings: Any) -> None:
    """Passwords hashed in this process with a fast hasher (Django's advice for tests): the
    app's own, PBKDF2 with ~1M iterations, costs 0.25 s a hash here, and what a test checks
    is who may log in, not the hash. Apps the tests start as processes keep the app's."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def lab() -> LocalLab:
    return LocalLab()


@pytest.fixture
def servers(lab: LocalLab) -> Iterator[ServerSet]:
    """A fresh lock node (``redis-1``) and storage node, stopped after the test."""
    with lab.servers(["redis-1", "storage"]) as started:
        yield started


def browser_of(client: Any) -> str:
    """The browser id of a Django test client's session (made on first use), as views see it."""
    session = client.session
    if "browser" not in session:
        session["browser"] = f"test-browser-{id(client)}"
        session.save()
    return str(session["browser"])


def builtin_json(slug: str) -> dict:
    with open(ROOT / "lockviz" / "scenarios" / "builtin" / f"{slug}.json") as f:
        return json.load(f)


def scenario(**changes: object) -> Scenario:
    """A small valid scenario, with ``changes`` applied on top."""
    data: dict = {
        "format": 1,
        "title": "test",
        "backend": "redis",
        "fencing": True,
        "ttl_ms": 1000,
        "clients": ["alice", "bob"],
        "steps": [{"at_ms": 0, "client": "alice", "do": "acquire"}],
    }
    data.update(changes)
    return parse(data)


def wait_for_run(run_id: str, timeout_s: float = 40) -> Run:
    """The run once it has finished or failed and its lab is stopped (it executes in a thread
    of its own, and is finished in the database as soon as its verdict is told)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run = Run.objects.get(pk=run_id)
        if run.status in (Run.Status.FINISHED, Run.Status.FAILED) and not recorder.is_live(run_id):
            return run
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} did not finish")


def live_processes(names: tuple[str, ...] = ("redis-server", "lockviz.lab.children.")) -> list[int]:
    """Pids of live (not zombie) processes whose command line mentions one of ``names``."""
    return [
        stat.pid
        for stat in procs.every_process()
        if stat.alive and any(name in procs.cmdline(stat.pid) for name in names)
    ]


# Every learner of a test's app comes from this one machine, in no room, over a whole test
# session: shares per address (lockviz.shares) that fit them all. tests/lockviz/shares/ and the
# room tests check the shares themselves.
ONE_MACHINE = {
    "LOCKVIZ_MAX_PER_ADDRESS": "100",
    "LOCKVIZ_PLAY_PER_ADDRESS": "100",
    "LOCKVIZ_IMPORTS_PER_HOUR": "1000",
    "LOCKVIZ_ROOMS_PER_HOUR": "1000",
}


class AppServer(App):
    """``manage.py serve`` for a test: its database and its log in the test's own directory."""

    def __init__(self, tmp: Path, env: dict[str, str] | None = None, name: str = "app") -> None:
        env = {**ONE_MACHINE, **(env or {})}
        super().__init__(str(tmp / "app.sqlite3"), str(tmp / f"{name}.log"), env, timeout_s=60)


@contextlib.contextmanager
def redis_layer(workdir: Path) -> Iterator[LayerServer]:
    """A private redis-server for app processes to share as their channel layer."""
    server = LayerServer("layer", str(workdir / "layer"))
    server.launch()
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def layer_env(layer: LayerServer) -> dict[str, str]:
    """What app processes are told to share ``layer`` (its password goes in the URL)."""
    password = urllib.parse.quote(layer.password or "", safe="")
    return {"LOCKVIZ_CHANNEL_REDIS": f"redis://:{password}@127.0.0.1:{layer.port}/0"}


@contextlib.contextmanager
def postgres_database() -> Iterator[str]:
    """A PostgreSQL server of the lab's with an empty database for the app: its URL."""
    with LocalLab().servers(["pg-1"]) as servers:
        pg = servers["pg-1"]
        with psycopg.connect(
            host=pg.host, port=pg.port, user="postgres", password=pg.password,
            dbname="postgres", autocommit=True,
        ) as conn:  # fmt: skip
            conn.execute("CREATE DATABASE lockviz")
        yield f"postgresql://postgres:{pg.password}@{pg.host}:{pg.port}/lockviz"


@pytest.fixture
def app_server(tmp_path: Path) -> Iterator[AppServer]:
    """An app of the test's own: for tests that stop it, kill it or read its database."""
    server = AppServer(tmp_path)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def shared_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    """One app per test process for the tests that use it only as learners do, each from a
    browser context (a session) of its own: starting one costs seconds of a busy machine."""
    server = AppServer(tmp_path_factory.mktemp("shared-app"))
    yield server
    server.stop()


def pytest_sessionstart(session: pytest.Session) -> None:
    """Pages name static files by their content's hash: collect them as ``serve`` does, once
    (under ``-n``, in the controller, before it starts the workers: they must not race)."""
    if hasattr(session.config, "workerinput"):
        return
    import django

    django.setup()
    from lockviz.edge import staticfiles

    staticfiles.collect()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Django removes the test database file but not SQLite's WAL and shared-memory files
    (named by this process, with a worker's suffix under ``-n``)."""
    import glob
    import tempfile

    pattern = os.path.join(tempfile.gettempdir(), f"lockviz-test-{os.getpid()}.sqlite3*-*")
    for leftover in glob.glob(pattern):
        with contextlib.suppress(OSError):
            os.unlink(leftover)
