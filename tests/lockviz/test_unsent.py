"""A viewer that never reads is dropped once what it has not been sent passes the bound
(``LOCKVIZ_MAX_UNSENT``), instead of having a whole run held for it in the app's memory.

Against ``manage.py serve`` (Daphne, where the bytes a socket holds are known: lockviz.unsent),
with a bound of 64 kB and an imported run of a few MB of frames.
"""

from __future__ import annotations

import base64
import os
import re
import socket
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.abuse import import_run
from bench.browser import Browser
from bench.diagram import long_run
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


def never_reading(url: str, run_id: str) -> socket.socket:
    """A viewer of the run that reads its handshake's answer and nothing more."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        f"GET /ws/runs/{run_id}/ HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        f"Origin: {url}\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert b" 101 " in head.split(b"\r\n")[0]
    return sock


def test_a_viewer_that_never_reads_is_dropped_past_the_bound(app: AppServer) -> None:
    run = long_run("redlock-contention", 5000)
    run["scenario"]["steps"] = [s for s in run["scenario"]["steps"] if s["at_ms"] <= 120_000]
    run["status"] = "finished"
    run_id = import_run(Browser(app.url), run)
    sock = never_reading(app.url, run_id)
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
