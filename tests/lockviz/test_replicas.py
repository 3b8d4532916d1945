"""Two replicas, no sticky sessions: any app process serves any request of any run.

Two real ``manage.py serve`` processes share a database and a Redis (as behind a proxy that
sends each request to either). A learner starts a free-play run on one and clicks on the other;
the click is relayed to the process that runs it and its answer comes back in the same request.
When a replica is killed (kill -9), the other marks its runs interrupted within seconds and
tells their open pages; replicas that start together on an empty database migrate once.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import psycopg
import pytest
from websockets.sync.client import connect
from websockets.typing import Origin

from lockviz.edge import squashed
from lockviz.management.commands.serve import MIGRATE_LOCK
from tests.conftest import AppServer, layer_env, postgres_database, redis_layer

pytestmark = pytest.mark.live
ROOT = Path(__file__).resolve().parents[2]


class Browser:
    """A learner's browser: a cookie jar, and the CSRF token its pages carry."""

    def __init__(self) -> None:
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )
        self.token = ""

    def get(self, url: str) -> str:
        with self.opener.open(url, timeout=30) as page:
            html: str = page.read().decode()
        if 'name="csrfmiddlewaretoken" value="' in html:
            self.token = html.split('name="csrfmiddlewaretoken" value="')[1].split('"')[0]
        return html

    def post(self, url: str, fields: dict[str, str]) -> tuple[str, str, str]:
        """(the final URL, the X-Fault header, the body) of a form POST."""
        body = urllib.parse.urlencode({**fields, "csrfmiddlewaretoken": self.token}).encode()
        request = urllib.request.Request(url, data=body, headers={"Referer": url})
        try:
            with self.opener.open(request, timeout=30) as response:
                return response.url, response.headers.get("X-Fault", ""), response.read().decode()
        except urllib.error.HTTPError as refused:
            return url, refused.headers.get("X-Fault", ""), refused.read().decode()


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[tuple[AppServer, AppServer]]:
    with redis_layer(tmp_path) as layer:
        # Each replica runs its runs itself, as before lab hosts (tests/deploy/test_labhosts.py
        # is the same story with lab hosts).
        env = {**layer_env(layer), "LOCKVIZ_LAB_HOSTS": "inprocess"}
        first = AppServer(tmp_path, env, name="first")
        second = AppServer(tmp_path, env, name="second")
        try:
            yield first, second
        finally:
            first.stop()
            second.stop()


class Playing(NamedTuple):
    first: AppServer  # where the run was started, and runs
    second: AppServer
    learner: Browser  # who started it
    run_id: str


@pytest.fixture
def playing(replicas: tuple[AppServer, AppServer]) -> Playing:
    """A learner's free-play run, started on the first replica and running."""
    first, second = replicas
    learner = Browser()
    run_id = start_free_play(learner, first)
    wait_started(first, run_id)
    return Playing(first, second, learner, run_id)


def start_free_play(browser: Browser, app: AppServer) -> str:
    browser.get(app.url + "/play/")
    url, _, _ = browser.post(app.url + "/play/", {"backend": "redis", "clients": "2",
                                                   "ttl_ms": "2000", "fencing": "on"})  # fmt: skip
    run_id = url.rstrip("/").rsplit("/", 1)[1]
    assert "/play/" in url and run_id != "play", url
    return run_id


def wait_started(app: AppServer, run_id: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{app.url}/runs/{run_id}/export.json", timeout=10) as f:
            if any(e["kind"] == "run_started" for e in json.load(f)["events"]):
                return
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} did not start in {timeout_s} s")


def status(app: AppServer, run_id: str) -> str:
    with urllib.request.urlopen(f"{app.url}/runs/{run_id}/export.json", timeout=10) as f:
        return str(json.load(f)["status"])


def test_a_run_started_on_one_replica_is_driven_and_finished_through_the_other(
    playing: Playing,
) -> None:
    _, second, learner, run_id = playing
    learner.get(f"{second.url}/play/{run_id}/")  # the session page, through the other replica
    answers = [
        learner.post(f"{second.url}/runs/{run_id}/do", click)
        for click in (
            {"do": "acquire", "client": "alice"},
            {"do": "pause", "client": "alice", "ms": "1500"},
            {"do": "acquire", "client": "bob", "timeout_ms": "3000"},
        )
    ]
    assert [fault for _, fault, _ in answers] == ["done"] * 3, answers
    assert "done: " in answers[1][2] and "alice" in answers[1][2]
    refused = learner.post(f"{second.url}/runs/{run_id}/do", {"do": "pause", "client": "zed"})
    assert refused[1] == "refused" and "zed" in refused[2]  # the owner's refusal, relayed
    stranger = Browser()
    stranger.get(f"{second.url}/play/{run_id}/")
    assert stranger.post(f"{second.url}/runs/{run_id}/finish", {})[1] == "refused"
    _, fault, said = learner.post(f"{second.url}/runs/{run_id}/finish", {})
    assert fault == "done", said
    deadline = time.monotonic() + 30
    while status(second, run_id) != "finished" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert status(second, run_id) == "finished"
    with urllib.request.urlopen(f"{second.url}/runs/{run_id}/export.json", timeout=10) as f:
        steps = [e for e in json.load(f)["events"] if e["kind"] == "step"]
    assert [(s["do"], s.get("client")) for s in steps] == [
        ("acquire", "alice"), ("pause", "alice"), ("acquire", "bob")
    ]  # fmt: skip


def test_a_killed_replicas_runs_are_interrupted_and_their_viewers_told(
    playing: Playing,
) -> None:
    first, second, learner, run_id = playing
    seen: list[dict[str, Any]] = []
    url = second.url.replace("http://", "ws://") + f"/ws/runs/{run_id}/"
    with connect(url, origin=Origin(second.url), open_timeout=10) as ws:
        first.proc.send_signal(signal.SIGKILL)  # the replica running the run dies
        killed = time.monotonic()
        while not any(m.get("status") == "interrupted" for m in seen):
            message = json.loads(ws.recv(timeout=15))
            frames = message["frames"] if message["type"] == "events" else [message]
            seen.extend(frames)
        told_after = time.monotonic() - killed
    kinds = [m["event"]["kind"] for m in seen if m["type"] == "event"]
    assert kinds[-1] == "run_interrupted", kinds
    assert told_after < 10, f"the viewer was told after {told_after:.1f} s"
    assert status(second, run_id) == "interrupted"
    click = {"do": "acquire", "client": "alice"}
    _, fault, said = learner.post(f"{second.url}/runs/{run_id}/do", click)
    assert fault == "refused" and "interrupted" in said
    assert start_free_play(Browser(), second)  # the other replica goes on serving


def test_replicas_that_start_together_on_an_empty_database_migrate_once(tmp_path: Path) -> None:
    with postgres_database() as url:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "lockviz.settings",
            "LOCKVIZ_DATABASE_URL": url,
        }
        code = (
            "import django; django.setup(); "
            "from lockviz.management.commands.serve import migrate_once; migrate_once()"
        )
        together = [
            subprocess.Popen(
                [sys.executable, "-c", code],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
            for _ in range(3)
        ]
        outputs = [(p.wait(timeout=120), p.stdout.read().decode() if p.stdout else "")
                   for p in together]  # fmt: skip
    assert [code for code, _ in outputs] == [0, 0, 0], outputs


def test_a_replica_judges_the_database_only_once_the_one_migrating_it_is_done() -> None:
    # Another replica holds the migration lock and has recorded some of the squashed
    # migration's parts (Django records each part it replaces, then the squash): the database
    # looks half-migrated only while it does. A replica that starts then waits for the lock and
    # judges what it finds after (seen in a full test run: it judged first, and refused).
    with postgres_database() as url, psycopg.connect(url, autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s)", [MIGRATE_LOCK])
        other.execute(
            "CREATE TABLE django_migrations (id bigserial PRIMARY KEY, app varchar(255) NOT NULL,"
            " name varchar(255) NOT NULL, applied timestamptz NOT NULL)"
        )
        for name in squashed.replaced()[:3]:
            other.execute(
                "INSERT INTO django_migrations (app, name, applied) VALUES ('lockviz', %s, now())",
                [name],
            )
        code = (
            "import django; django.setup(); "
            "from lockviz.management.commands.serve import migrate_once; migrate_once()"
        )
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "lockviz.settings",
            "LOCKVIZ_DATABASE_URL": url,
        }
        starting = subprocess.Popen(
            [sys.executable, "-c", code], cwd=ROOT, env=env, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        waiting = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
        deadline = time.monotonic() + 60
        while starting.poll() is None and time.monotonic() < deadline:
            [(waiters,)] = other.execute(waiting).fetchall()
            if waiters:
                break
            time.sleep(0.05)
        assert starting.poll() is None, starting.communicate()[0].decode()  # it did not judge
        other.execute("DROP TABLE django_migrations")  # the other's work, undone before it ends
        other.execute("SELECT pg_advisory_unlock(%s)", [MIGRATE_LOCK])
        out = starting.communicate(timeout=120)[0].decode()
        assert starting.returncode == 0, out  # it found an empty database, and migrated it
