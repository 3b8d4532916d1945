"""Each readiness check fails for a real reason and says it in one line, never a password."""

from __future__ import annotations

import time
from typing import Any

import pytest

from lockviz.lab import forkserver
from lockviz.lab.ports import free_port
from lockviz.lab.servers.base import Requirement
from lockviz.ops import readiness


def test_a_layer_redis_that_is_not_there_fails_fast_and_keeps_its_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Not through settings.CHANNEL_LAYERS: changing it resets every channel layer in the process.
    url = f"redis://:sekrit@127.0.0.1:{free_port()}/0"
    monkeypatch.setattr(readiness, "layer_urls", lambda: [url])
    monkeypatch.setattr(readiness, "CHECKS", {"channel layer": readiness.channel_layer_redis})
    started = time.monotonic()
    [check] = readiness.run_checks()
    assert not check.ok and check.why.startswith("ConnectionError")
    assert time.monotonic() - started < 10
    assert "sekrit" not in check.line


def test_a_machine_without_redis_server_is_not_ready(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.LOCKVIZ_SERVERS = ""
    absent = [Requirement("redis-server", None, "redis-server")]
    monkeypatch.setattr(readiness, "missing", lambda kind: absent)
    monkeypatch.setattr(readiness, "CHECKS", {"lab": readiness.lab})
    [check] = readiness.run_checks()
    assert check.line == (
        "lab: FAILED: LabError: missing redis-server: install with "
        "`sudo apt-get install redis-server`"
    )


@pytest.mark.live
def test_a_killed_fork_server_is_started_again_by_the_check(settings: Any) -> None:
    settings.LOCKVIZ_SERVERS = ""
    server = forkserver.server()
    server.start()
    assert server.proc is not None
    server.proc.kill()
    server.proc.wait()
    assert "the fork server runs" in readiness.lab()
    assert server.proc is not None and server.proc.poll() is None
