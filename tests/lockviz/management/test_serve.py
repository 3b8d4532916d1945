"""``manage.py serve`` answers before the lab's own check is done, and still refuses to go on
with a lab that does not work: it says what failed and exits with an error."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from unittest import mock

import pytest

from lockviz.lab.ports import free_port
from lockviz.lab.procs import wait_until
from lockviz.management.commands.serve import stop_app
from tests.conftest import ROOT, AppServer
from tests.deploy.clients import Visitor
from tests.lockviz.runs.test_recorder import busy

pytestmark = pytest.mark.live


@pytest.mark.parametrize("lab_hosts", ["embedded", "inprocess"])
def test_a_broken_lab_is_reported_at_start_and_stops_the_app(
    tmp_path: Path, lab_hosts: str
) -> None:
    fake = tmp_path / "bin" / "redis-server"  # found, but it cannot serve
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'this redis-server is broken' >&2\nexit 1\n")
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}"}
    env |= {"LOCKVIZ_DB": str(tmp_path / "app.sqlite3"), "LOCKVIZ_STATE_DIR": str(tmp_path)}
    env |= {"LOCKVIZ_LAB_HOSTS": lab_hosts}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    serve = subprocess.run(
        [sys.executable, "manage.py", "serve", "--port", str(free_port())],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert serve.returncode == 1, serve.stdout + serve.stderr
    assert "the lab does not work here, so lockviz stopped" in serve.stderr
    assert "this redis-server is broken" in serve.stderr
    if lab_hosts == "inprocess":  # embedded: the channel layer's redis-server fails first
        assert "lab self-test (redis-1 and storage)" in serve.stderr


def test_a_working_lab_says_each_part_came_up(app_server: AppServer) -> None:
    # By default (LOCKVIZ_LAB_HOSTS=embedded) the lab is a lab host of the app's own, a child
    # process: its self-test and fork server are its own, and it says it is up by beating.
    parts = ["its lab host", "live streams"]

    def said() -> dict[str, str]:
        lines = app_server.output().splitlines()
        return {part: line for part in parts for line in lines if line.strip().startswith(part)}

    # The check runs beside Daphne: its lines may come after the page answers.
    wait_until(lambda: len(said()) == len(parts), 60, "the lab check's lines")
    assert all(" … ok (" in line for line in said().values()), said()


def test_the_app_queues_a_lecture_halls_worth_of_connections_at_once(
    app_server: AppServer,
) -> None:
    """A class told "open the link now" connects by the hundred: the listening socket's queue
    of connections not yet accepted is the app's (1,024), not Twisted's default of 50, past
    which the kernel resets a connection while the app is busy."""
    listening = subprocess.run(
        ["ss", "-ltnH", f"sport = :{app_server.port}"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert listening[0] == "LISTEN" and listening[2] == "1024", listening  # state, recv-q, send-q


def test_a_ctrl_c_lost_before_daphne_runs_is_sent_again_until_the_app_stops() -> None:
    """The lab check stops the app with SIGINT, raised as KeyboardInterrupt until Daphne takes
    Ctrl-C over. One that lands in a finalizer is printed as "ignored" and lost: here the first
    is swallowed, and the check sends another, and none once the app says it is stopping."""
    stopping = threading.Event()
    got: list[int] = []

    def swallow_the_first(signum: int, frame: object) -> None:
        got.append(signum)
        if len(got) == 2:
            stopping.set()  # the second came through: the app is on its way out
        # the first is lost, as in a finalizer

    before = signal.signal(signal.SIGINT, swallow_the_first)
    try:
        checker = threading.Thread(target=stop_app, args=(stopping, 0.2))
        # Python's own handler still in place (Daphne not running): each Ctrl-C is raised.
        with mock.patch.object(signal, "getsignal", return_value=signal.default_int_handler):
            checker.start()
            deadline = time.monotonic() + 10
            while checker.is_alive() and time.monotonic() < deadline:
                time.sleep(0.05)  # signal handlers run in this, the main thread
        assert not checker.is_alive() and got == [signal.SIGINT, signal.SIGINT]
        time.sleep(0.5)
        assert len(got) == 2  # none after the app said it was stopping
    finally:
        signal.signal(signal.SIGINT, before)


def test_ctrl_c_while_a_run_plays_stores_every_event_and_then_its_interruption(
    app_server: AppServer,
) -> None:
    """``make run``'s defaults (SQLite, the embedded lab host): Ctrl-C while a run plays told of
    the interruption with the number the run's writer was about to store ("run …: an event
    could not be stored", UNIQUE constraint failed), and that event was lost. Now the run's
    events so far are all stored, numbered 1, 2, 3 … with none missing, and the interruption
    is the last of them."""
    run_id = Visitor(app_server.url).start_scenario(busy(40))

    def stored() -> list[tuple[int, str]]:
        with contextlib.closing(sqlite3.connect(app_server.db, timeout=20)) as db:
            rows = db.execute(
                "SELECT seq, kind FROM lockviz_runevent WHERE run_id = ? ORDER BY seq", (run_id,)
            ).fetchall()
        return [(int(seq), str(kind)) for seq, kind in rows]

    wait_until(lambda: len(stored()) > 60, 90, "the run's first 60 events stored")
    app_server.stop()
    events = stored()
    output = app_server.output()
    assert "could not be stored" not in output, output[-3000:]
    assert [seq for seq, _ in events] == list(range(1, len(events) + 1))
    assert events[-1][1] == "run_interrupted", events[-5:]
    ends = [kind for _, kind in events if kind in ("run_interrupted", "run_finished", "run_failed")]
    assert ends == ["run_interrupted"], ends


def test_an_app_whose_free_port_was_taken_before_it_listened_starts_on_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A port free when asked may be taken before the app binds it (another test's server took
    one so in a fresh-clone CI, and the app's restart 'did not start'): it is started again on
    another free port."""
    import socket

    from bench import app as apps

    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        taken = holder.getsockname()[1]
        given = iter([taken])
        monkeypatch.setattr(apps, "free_port", lambda: next(given, None) or free_port())
        app = apps.App(str(tmp_path / "app.sqlite3"), str(tmp_path / "app.log"))
        try:
            assert app.port != taken and app.alive
            assert f"Couldn't listen on 127.0.0.1:{taken}" in app.output()
        finally:
            app.stop()
