"""A viewer that never reads is dropped once what it has not been sent passes the bound
(``LOCKVIZ_MAX_UNSENT``), instead of having a whole run held for it in the app's memory.

Against ``manage.py serve`` (Daphne, where the bytes a socket holds are known: lockviz.live.unsent),
with a bound of 64 kB and an imported run of a few MB of frames.
"""

from __future__ import annotations

import re
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.abuse import import_run
from bench.browser import Browser
from bench.diagram import long_run
from bench.viewer import never_reading
from tests.conftest import AppServer

pytestmark = pytest.mark.live
BOUND = 64 * 1024


@pytest.fixture
def app(tmp_path: Path) -> Iterator[AppServer]:
    server = AppServer(tmp_path, {"LOCKVIZ_MAX_UNSENT": str(BOUND)})
    yield server
    server.stop()


def dropped(url: str) -> float:
    with urllib.request.urlopen(url + "/metrics", timeout=10) as answer:
        text = answer.read().decode()
    found = re.search(r'^lockviz_viewers_dropped_total\{stream="run"\} (\S+)$', text, re.M)
    return float(found.group(1)) if found else 0.0


def test_a_viewer_that_never_reads_is_dropped_past_the_bound(app: AppServer) -> None:
    run = long_run("redlock-contention", 5000)
    run["scenario"]["steps"] = [s for s in run["scenario"]["steps"] if s["at_ms"] <= 120_000]
    run["status"] = "finished"
    run_id = import_run(Browser(app.url), run)
    sock = never_reading(f"{app.url.replace('http://', 'ws://', 1)}/ws/runs/{run_id}/")
    deadline = time.monotonic() + 60  # a margin for a loaded machine, not a measure
    while dropped(app.url) < 1:
        assert time.monotonic() < deadline, "the viewer that never reads was never dropped"
        time.sleep(0.2)
    sock.settimeout(30)
    got = 0
    try:
        while chunk := sock.recv(65536):  # what the kernel held, then the end
            got += len(chunk)
    except ConnectionResetError:
        pass
    sock.close()
    assert got < 1_000_000  # of about 1.5 MB of frames: the rest was never queued for it
    assert "dropped a viewer of run" in app.output()
