"""Killing the app outright (SIGKILL, no cleanup code runs) leaves no server or client alive.

PID 1 on these machines may not reap orphans, so dead processes can linger as zombies: the
test counts live processes, not entries in /proc.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from bench.browser import Browser
from lockviz.lab import procs, registry
from lockviz.lab.procs import wait_until
from tests.conftest import AppServer

pytestmark = pytest.mark.live


def start_run(app: AppServer, slug: str) -> None:
    run_id, why = Browser(app.url).start(slug)
    assert run_id is not None, why


def owners(app: AppServer) -> set[int]:
    """The app and its lab host (a child process of its own: ``LOCKVIZ_LAB_HOSTS=embedded``,
    the default), which starts the runs' servers and its fork server."""
    labs = [
        pid for pid in app.children() if b"labhost" in Path(f"/proc/{pid}/cmdline").read_bytes()
    ]
    assert len(labs) == 1, f"serve started {len(labs)} lab hosts, not one"
    return {app.proc.pid, *labs}


def forked(app: AppServer, pids: list[int]) -> list[int]:
    """Those of ``pids`` that the fork server started (client processes, proxies)."""
    mine = owners(app)
    return [pid for pid in pids if (found := procs.stat(pid)) and found.ppid not in mine]


def test_sigkill_of_the_app_mid_run_leaves_nothing_alive(app_server: AppServer) -> None:
    start_run(app_server, "gc-pause-fenced")
    deadline = time.monotonic() + 20
    children: list[int] = []
    while time.monotonic() < deadline:  # redis-1, storage; forked: the proxy, alice, bob
        children = list(app_server.descendants())
        if len(forked(app_server, children)) >= 3:
            break
        time.sleep(0.05)
    assert len(forked(app_server, children)) >= 3, children

    def frozen() -> bool:  # alice (SIGSTOP at 300 ms): a stopped child must die too
        return any((s := procs.stat(pid)) and s.state == "T" for pid in children)

    wait_until(frozen, 20, "a frozen client")
    mine = owners(app_server)
    os.kill(app_server.proc.pid, signal.SIGKILL)
    app_server.proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(procs.alive(pid) for pid in children):
        time.sleep(0.05)
    survivors = [pid for pid in children if procs.alive(pid)]
    assert survivors == [], [Path(f"/proc/{pid}/cmdline").read_text() for pid in survivors]
    # The dead app could not remove its run's directory: the next `make run` (or `lab down`)
    # sweeps it. Another test process's lab may have swept it already (every lab start sweeps
    # what dead owners left: a fresh-clone CI run found none left), so what is left, if
    # anything, names only dead processes, and after a sweep nothing of the app's is left.
    leftover = [e for e in registry.entries() if e["owner_pid"] in mine]
    assert all(not any(procs.alive(p) for p in e["pids"].values()) for e in leftover)
    registry.sweep()
    assert not [e for e in registry.entries() if e["owner_pid"] in mine]


def test_ctrl_c_stops_the_app_and_every_child_mid_run(app_server: AppServer) -> None:
    start_run(app_server, "gc-pause-fenced")
    deadline = time.monotonic() + 20
    while len(forked(app_server, app_server.descendants())) < 3:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    children = list(app_server.descendants())
    mine = owners(app_server)
    app_server.proc.send_signal(signal.SIGINT)  # what Ctrl-C in `make run`'s terminal sends
    app_server.proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(procs.alive(pid) for pid in children):
        time.sleep(0.05)
    assert [pid for pid in children if procs.alive(pid)] == []
    assert not set(pgrep("manage.py labhost")) & mine  # as a person would check: pgrep
    # The run's thread did not get to clean up: its dir waits for the next start-up's sweep.
    registry.sweep()
    assert not [e for e in registry.entries() if e["owner_pid"] in mine]


def pgrep(pattern: str) -> list[int]:
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True)
    return [int(pid) for pid in found.stdout.split()]
