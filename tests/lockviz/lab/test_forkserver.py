"""Client processes and proxies forked from the warm fork server: what they become, and that
nothing forked outlives the app."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from lockviz.lab import procs
from lockviz.lab.children import PROXY, WORKER
from lockviz.lab.forkserver import ForkServer
from tests.conftest import ROOT

pytestmark = pytest.mark.live


def test_a_forked_proxy_takes_its_links_on_stdin_and_stops_when_stdin_closes() -> None:
    server = ForkServer()
    try:
        proxy = server.fork(PROXY)
        assert proxy.stdin is not None and proxy.stdout is not None
        assert proxy.pid != server.proc.pid  # type: ignore[union-attr]
        proxy.stdin.write('{"links": {"alice>redis-1": "127.0.0.1:1"}}\n')
        proxy.stdin.flush()
        assert '"ready": true' in proxy.stdout.readline()
        assert proxy.poll() is None
        proxy.stdin.close()
        proxy.wait(10)
        assert proxy.poll() is not None
        proxy.send_signal(signal.SIGKILL)  # its pidfd: nothing reaches another process
    finally:
        server.close()


def test_a_killed_fork_server_is_started_again() -> None:
    server = ForkServer()
    try:
        server.start()
        first = server.proc
        assert first is not None
        first.kill()
        first.wait()
        worker = server.fork(WORKER)
        assert server.proc is not None and server.proc.pid != first.pid
        worker.kill()
        assert worker.wait(5) == -signal.SIGKILL
    finally:
        server.close()


HOLDER = """
import sys
from lockviz.lab.forkserver import ForkServer
server = ForkServer()
forked = [server.fork(role) for role in sys.argv[1:]]
print(server.proc.pid, *(f.pid for f in forked), flush=True)
sys.stdin.readline()
"""


def test_forked_processes_die_with_the_app_even_when_it_is_killed() -> None:
    app = subprocess.Popen(
        [sys.executable, "-c", HOLDER, WORKER, WORKER, PROXY], cwd=ROOT, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert app.stdout is not None
    server, *forked = (int(pid) for pid in app.stdout.readline().split())
    assert len(forked) == 3 and all(procs.alive(pid) for pid in [server, *forked])
    assert all(procs.stat(pid).ppid == server for pid in forked)  # type: ignore[union-attr]
    os.kill(app.pid, signal.SIGKILL)  # no cleanup code runs: only the kernel can stop them
    app.wait()
    deadline = time.monotonic() + 10
    while any(procs.alive(pid) for pid in [server, *forked]):
        left = [pid for pid in [server, *forked] if procs.alive(pid)]
        assert time.monotonic() < deadline, left
        time.sleep(0.05)
