"""Shared fixtures. Live fixtures start real servers through the lab, exactly as runs do."""

from __future__ import annotations

import contextlib
import json
import os
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bench.app import App
from lockviz.lab import procs
from lockviz.lab.labs import LocalLab, ServerSet
from lockviz.lab.servers.redis import RedisServer
from lockviz.models import Run
from lockviz.runs import recorder
from lockviz.scenarios.schema import Scenario, parse

ROOT = Path(__file__).resolve().parent.parent


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


class AppServer(App):
    """``manage.py serve`` for a test: its database and its log in the test's own directory."""

    def __init__(self, tmp: Path, env: dict[str, str] | None = None, name: str = "app") -> None:
        super().__init__(str(tmp / "app.sqlite3"), str(tmp / f"{name}.log"), env, timeout_s=60)


@contextlib.contextmanager
def redis_layer(workdir: Path) -> Iterator[RedisServer]:
    """A private redis-server for app processes to share as their channel layer."""
    server = RedisServer("layer", str(workdir / "layer"))
    server.launch()
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def layer_env(layer: RedisServer) -> dict[str, str]:
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
    server = AppServer(tmp_path)
    yield server
    server.stop()


def pytest_sessionstart(session: pytest.Session) -> None:
    """Pages name static files by their content's hash: collect them as ``serve`` does."""
    import django

    django.setup()
    from lockviz import staticfiles

    staticfiles.collect()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Django removes the test database file but not SQLite's WAL and shared-memory files."""
    import glob
    import tempfile

    pattern = os.path.join(tempfile.gettempdir(), f"lockviz-test-{os.getpid()}.sqlite3-*")
    for leftover in glob.glob(pattern):
        with contextlib.suppress(OSError):
            os.unlink(leftover)
