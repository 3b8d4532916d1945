"""CPU-bound work of a request runs in worker processes (lockviz.edge.workers), not in the web
process: the web process answers pages while a job holds a worker's interpreter, the pool is
bounded (a full pool refuses at once with a sentence; the import page keeps the text), a
refusal comes back with each problem apart, and no worker outlives the app, killed or stopped.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client

from bench.abuse import big_import, import_run
from bench.browser import Browser
from lockviz.edge import workers
from lockviz.errors import Busy, ImportRefused
from lockviz.lab import procs
from lockviz.runs import imports, stored
from tests.conftest import AppServer
from tests.lockviz.edge import jobs


@pytest.fixture
def fresh_pool() -> Iterator[None]:
    """A pool of this test's own, its workers ended after."""
    workers.shutdown()
    yield
    workers.shutdown()


def test_a_job_runs_in_a_worker_process_below_the_app(fresh_pool: None) -> None:
    pid, parent, niceness = workers.run(jobs.who)
    assert pid != os.getpid() and parent == os.getpid()
    assert niceness >= workers.NICENESS  # below the web process: the kernel favours it
    assert pid in workers.pids()
    assert len({workers.run(jobs.who)[0] for _ in range(6)}) <= 2  # the same few, kept warm


@pytest.mark.django_db
def test_the_app_answers_a_page_while_a_job_holds_a_workers_interpreter(
    fresh_pool: None,
) -> None:
    workers.run(jobs.who)  # started and warm: what follows is the job, not the start
    Client().get("/lessons/")  # the page's own first costs (templates), before the clock
    done = threading.Event()
    spent: list[float] = []
    job = threading.Thread(target=lambda: (spent.append(workers.run(jobs.spin, 3.0)), done.set()))
    here = time.process_time()
    job.start()
    time.sleep(0.2)  # the job has its worker by now (it spins for 3 s)
    answered = Client().get("/lessons/")
    assert answered.status_code == 200
    assert not done.is_set()  # the page was answered while the job still ran
    job.join(120)
    assert spent
    # The job's CPU was the worker's: this process answered one page (some 0.1 s) and waited.
    # In a thread of this process the spin would have cost it all the CPU the spin had.
    assert time.process_time() - here < spent[0] / 2 + 0.2


def test_a_full_pool_refuses_at_once_and_serves_again_once_a_place_is_free(
    fresh_pool: None, tmp_path: Path
) -> None:
    gate = tmp_path / "go"
    held = [
        threading.Thread(target=workers.run, args=(jobs.wait_for, str(gate)))
        for _ in range(workers.capacity())
    ]
    for thread in held:
        thread.start()
    time.sleep(0.5)
    try:
        started = time.monotonic()
        with pytest.raises(Busy) as refused:
            workers.run(jobs.who)
        assert time.monotonic() - started < 1.0  # refused at once, not queued
        assert refused.value.message == workers.BUSY and refused.value.status == 503
    finally:
        gate.touch()
        for thread in held:
            thread.join(60)
    assert workers.run(jobs.who)[1] == os.getpid()  # the places are given back


@pytest.mark.django_db
def test_the_import_page_says_busy_and_keeps_the_text_when_the_pool_is_full(
    fresh_pool: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workers, "capacity", lambda: 1)
    monkeypatch.setattr(workers, "_slots", None)
    gate = tmp_path / "go"
    held = threading.Thread(target=workers.run, args=(jobs.wait_for, str(gate)))
    held.start()
    time.sleep(0.5)
    text = json.dumps(big_import(40))
    try:
        answer = Client().post("/import/", {"text": text})
    finally:
        gate.touch()
        held.join(60)
        monkeypatch.setattr(workers, "_slots", None)
    page = answer.content.decode()
    assert answer.status_code == 503 and answer["Retry-After"]
    assert "busy" in page and "try again" in page and "Traceback" not in page
    assert json.dumps(big_import(40))[:200].replace('"', "&quot;") in page  # the text is kept


def test_a_refusal_comes_back_with_each_problem_apart(fresh_pool: None) -> None:
    run = big_import(40)
    run["events"][3]["seq"] = "three"
    del run["events"][5]["actor"]
    data = json.dumps(run).encode()
    with pytest.raises(ImportRefused) as here:
        imports.read(data)
    with pytest.raises(ImportRefused) as there:
        workers.run(stored.read_and_tell, data, "file")
    assert len(here.value.problems) >= 2
    assert there.value.problems == here.value.problems


def worker_pids(app: AppServer) -> list[int]:
    """The app's worker processes: its children started by multiprocessing's ``spawn``."""
    return [
        pid
        for pid in app.children()
        if b"multiprocessing" in Path(f"/proc/{pid}/cmdline").read_bytes()
    ]


def imported_once(app: AppServer) -> list[int]:
    """An import through the app's page: its workers start; their pids."""
    import_run(Browser(app.url), big_import(200))
    found = worker_pids(app)
    assert found, "the import started no worker process"
    return found


def gone(pids: list[int], timeout_s: float = 15) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(procs.alive(pid) for pid in pids):
        time.sleep(0.05)
    return [pid for pid in pids if procs.alive(pid)]


@pytest.mark.live
def test_a_killed_app_leaves_no_worker_process(app_server: AppServer) -> None:
    pids = imported_once(app_server)
    os.kill(app_server.proc.pid, signal.SIGKILL)
    app_server.proc.wait()
    assert gone(pids) == []


@pytest.mark.live
def test_ctrl_c_ends_the_apps_worker_processes(app_server: AppServer) -> None:
    pids = imported_once(app_server)
    app_server.proc.send_signal(signal.SIGINT)
    app_server.proc.wait(timeout=30)
    assert gone(pids) == []
