"""Several app processes on one Redis channel layer and one database stream every run.

Two real ``manage.py serve`` processes (what ``make run`` runs) share a redis-server through
LOCKVIZ_CHANNEL_REDIS and a database: a SQLite file (LOCKVIZ_DB) or a real PostgreSQL server
(LOCKVIZ_DATABASE_URL), as a class too big for one process would run. A run started through one
streams live to viewers of both, each event once and in order.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import connect
from websockets.typing import Origin

from bench.browser import Browser
from lockviz.lab.servers.redis import RedisServer
from tests.conftest import AppServer, layer_env, postgres_database, redis_layer

pytestmark = pytest.mark.live


@pytest.fixture
def layer(tmp_path: Path) -> Iterator[RedisServer]:
    with redis_layer(tmp_path) as server:
        yield server


def watch(app: AppServer, run_id: str, got: list[dict[str, Any]]) -> None:
    """A viewer: every event frame until the run's last (live ones carry ``published_ns``)."""
    url = app.url.replace("http://", "ws://") + f"/ws/runs/{run_id}/"
    with connect(url, origin=Origin(app.url), open_timeout=10) as ws:
        while True:
            message = json.loads(ws.recv(timeout=40))
            for frame in message["frames"] if message["type"] == "events" else [message]:
                if frame["type"] == "event":
                    got.append(frame)
                    if frame["event"]["kind"] in ("run_finished", "run_failed"):
                        return


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, str]]:
    """What both app processes are told about their shared database."""
    if request.param == "sqlite":
        yield {"LOCKVIZ_DB": str(tmp_path / "shared.sqlite3")}
        return
    with postgres_database() as url:
        yield {"LOCKVIZ_DATABASE_URL": url}


def test_a_run_started_on_one_process_streams_live_from_both(
    tmp_path: Path, layer: RedisServer, database: dict[str, str]
) -> None:
    env = {**layer_env(layer), **database}  # the layer's password too: a private server's
    first = AppServer(tmp_path, env, name="first")
    second = AppServer(tmp_path, env, name="second")
    try:
        run_id, why = Browser(first.url).start("gc-pause-fenced")
        assert run_id is not None, why
        seen: dict[str, list[dict[str, Any]]] = {"first": [], "second": []}
        viewers = [
            threading.Thread(target=watch, args=(app, run_id, seen[name]))
            for name, app in (("first", first), ("second", second))
        ]
        for viewer in viewers:
            viewer.start()
        for viewer in viewers:
            viewer.join(60)
        log = second.output()
        assert "live streams: redis://127.0.0.1" in log  # not a layer of its own
        assert layer.password not in log  # and its password is not printed
    finally:
        first.stop()
        second.stop()
    events = {name: [m["event"] for m in frames] for name, frames in seen.items()}
    assert events["first"] == events["second"]
    seqs = [e["seq"] for e in events["second"]]
    assert seqs == list(range(1, len(seqs) + 1))
    assert events["second"][-1]["kind"] == "run_finished"
    live = [m for m in seen["second"] if "published_ns" in m]  # not read from the database
    assert len(live) > len(seqs) // 2, f"{len(live)} of {len(seqs)} events came live"
