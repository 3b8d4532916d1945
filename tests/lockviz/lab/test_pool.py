"""Warm client processes and proxies: taken ready, refilled, and dead with the app."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from lockviz.lab import procs
from lockviz.lab.pool import PROXY, WORKER, Pool
from tests.conftest import ROOT

pytestmark = pytest.mark.live


def test_a_taken_process_is_warm_and_the_pool_refills() -> None:
    pool = Pool(WORKER, size=2)
    try:
        pool.warm()
        deadline = time.monotonic() + 20
        while pool.idle < 2:
            assert time.monotonic() < deadline, "the pool never filled"
            time.sleep(0.05)
        proc = pool.take()
        assert proc.poll() is None and proc.stdout is not None
        proc.stdin.close()  # type: ignore[union-attr]
        assert proc.wait(5) == 0  # a warm process that is never used just exits
        deadline = time.monotonic() + 20
        while pool.idle < 2:  # one was taken: another one is started in its place
            assert time.monotonic() < deadline, "the pool never refilled"
            time.sleep(0.05)
    finally:
        pool.close()
    assert pool.idle == 0


def test_an_empty_pool_starts_one_at_once_and_a_proxy_takes_its_links_on_stdin() -> None:
    pool = Pool(PROXY, size=0)
    proc = pool.take()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write('{"links": {"alice>redis-1": "127.0.0.1:1"}}\n')
        proc.stdin.flush()
        assert '"ready": true' in proc.stdout.readline()
    finally:
        procs.stop(proc)


HOLDER = """
import sys, time
from lockviz.lab.pool import Pool
pool = Pool(sys.argv[1], size=2)
pool.warm()
while pool.idle < 2:
    time.sleep(0.05)
print(" ".join(str(p.pid) for p in pool._idle), flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("module", [WORKER, PROXY])
def test_warm_processes_die_with_the_app_even_when_it_is_killed(module: str) -> None:
    app = subprocess.Popen(
        [sys.executable, "-c", HOLDER, module], cwd=ROOT, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert app.stdout is not None
    pids = [int(pid) for pid in app.stdout.readline().split()]
    assert len(pids) == 2 and all(procs.alive(pid) for pid in pids)
    os.kill(app.pid, signal.SIGKILL)  # no cleanup code runs: only the kernel can stop them
    app.wait()
    deadline = time.monotonic() + 10
    while any(procs.alive(pid) for pid in pids):
        assert time.monotonic() < deadline, [pid for pid in pids if procs.alive(pid)]
        time.sleep(0.05)
