"""The registry of server sets: what ``lab status`` lists and what a restarted app sweeps.

On a shared machine the temp dir is everyone's: the lab keeps its run dirs under a base of the
user's own, reads only what the user owns, and kills only the processes it recorded (a pid and
its start time), never whatever a file names.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lockviz.lab import procs, registry
from lockviz.lab.errors import LabError
from lockviz.lab.labs import LocalLab

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="only root can make a dir someone else's")


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """An unrelated live process of ours: what a forged lab.json would name."""
    proc = subprocess.Popen(["sleep", "60"])
    yield proc
    proc.kill()
    proc.wait()


@pytest.fixture
def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def write_entry(workdir: Path, **entry: Any) -> None:
    workdir.mkdir(exist_ok=True)
    (workdir / "lab.json").write_text(json.dumps({"workdir": str(workdir), **entry}))


def left_by_a_dead_app(dead_pid: int, pid: int, ticks: int | None) -> dict[str, Any]:
    return {
        "owner_pid": dead_pid,
        "owner_start_ticks": 1,
        "pids": {"redis-1#0": pid},
        "start_ticks": {"redis-1#0": ticks},
    }


def test_a_set_is_recorded_with_start_times_listed_and_forgotten(tmp_path: Path) -> None:
    workdir = tmp_path / "lockviz-run-a"
    workdir.mkdir()
    registry.record(str(workdir), {"redis-1#0": os.getpid()}, ports={"redis-1": 4000})
    [entry] = registry.entries(str(tmp_path))
    assert entry["owner_pid"] == os.getpid() and entry["ports"] == {"redis-1": 4000}
    ticks = procs.start_ticks(os.getpid())
    assert entry["owner_start_ticks"] == ticks and entry["start_ticks"] == {"redis-1#0": ticks}
    assert stat.S_IMODE((workdir / "lab.json").stat().st_mode) == 0o600
    registry.forget(str(workdir))
    assert registry.entries(str(tmp_path)) == []


def test_the_base_is_the_users_own_and_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    base = registry.base_dir()
    assert base == str(tmp_path / f"lockviz-{os.geteuid()}")
    assert stat.S_IMODE(os.stat(base).st_mode) == 0o700
    run_dir = registry.new_run_dir()
    assert os.path.dirname(run_dir) == base and stat.S_IMODE(os.stat(run_dir).st_mode) == 0o700
    os.chmod(base, 0o777)  # loosened by hand: tightened again, search bits aside
    registry.base_dir()
    assert stat.S_IMODE(os.stat(base).st_mode) == 0o711


def test_a_base_that_is_a_symlink_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / f"lockviz-{os.geteuid()}").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(LabError, match="not a directory"):
        registry.base_dir()
    with pytest.raises(LabError):
        LocalLab().servers(["redis-1"]).__enter__()
    assert list((tmp_path / "elsewhere").iterdir()) == []


@as_root
def test_a_base_someone_else_made_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    planted = tmp_path / f"lockviz-{os.geteuid()}"
    planted.mkdir(mode=0o777)
    os.chown(planted, NOBODY, NOBODY)
    with pytest.raises(LabError, match="belongs to uid 65534"):
        registry.base_dir()


@pytest.mark.live
def test_runs_get_private_dirs_under_the_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with LocalLab().servers(["redis-1", "storage"]) as servers:
        assert servers.workdir is not None
        assert os.path.dirname(servers.workdir) == registry.base_dir()
        assert stat.S_IMODE(os.stat(servers.workdir).st_mode) == 0o700
        [entry] = registry.entries()
        assert entry["workdir"] == servers.workdir
    assert registry.entries() == [] and not os.path.exists(servers.workdir)


def test_a_dead_apps_leftovers_are_killed_and_removed(
    tmp_path: Path, sleeper: subprocess.Popen[bytes], dead_pid: int
) -> None:
    workdir = tmp_path / "lockviz-run-b"
    ticks = procs.start_ticks(sleeper.pid)
    write_entry(workdir, **left_by_a_dead_app(dead_pid, sleeper.pid, ticks))
    assert registry.sweep(str(tmp_path)) == 1
    sleeper.wait(5)
    assert not workdir.exists()


def test_a_recorded_pid_that_now_names_another_process_is_left_alone(
    tmp_path: Path, sleeper: subprocess.Popen[bytes], dead_pid: int
) -> None:
    # The pid was ours once; since then the kernel gave it to another process (another start).
    ticks = procs.start_ticks(sleeper.pid)
    assert ticks is not None
    write_entry(tmp_path / "lockviz-run-c", **left_by_a_dead_app(dead_pid, sleeper.pid, ticks - 1))
    assert registry.sweep(str(tmp_path)) == 1  # the dir goes...
    time.sleep(0.2)
    assert sleeper.poll() is None  # ...the process it named stays


def test_a_forged_file_outside_the_users_base_is_never_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sleeper: subprocess.Popen[bytes], dead_pid: int
) -> None:
    # Anyone can create /tmp/lockviz-whatever/lab.json; the lab looks in <tmp>/lockviz-<uid>/.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    forged = tmp_path / "lockviz-run-forged"
    write_entry(forged, **left_by_a_dead_app(dead_pid, sleeper.pid, procs.start_ticks(sleeper.pid)))
    assert registry.entries() == [] and registry.sweep() == 0
    time.sleep(0.2)
    assert sleeper.poll() is None and forged.exists()


@as_root
def test_a_forged_file_in_a_dir_someone_else_owns_is_left_alone(
    tmp_path: Path, sleeper: subprocess.Popen[bytes], dead_pid: int
) -> None:
    forged = tmp_path / "lockviz-run-forged"
    write_entry(forged, **left_by_a_dead_app(dead_pid, sleeper.pid, procs.start_ticks(sleeper.pid)))
    os.chown(forged, NOBODY, NOBODY)
    os.chown(forged / "lab.json", NOBODY, NOBODY)
    assert registry.entries(str(tmp_path)) == [] and registry.sweep(str(tmp_path)) == 0
    time.sleep(0.2)
    assert sleeper.poll() is None and forged.exists()


def test_a_sweep_removes_the_dir_it_found_never_the_one_a_file_names(
    tmp_path: Path, dead_pid: int
) -> None:
    victim = tmp_path / "precious"
    victim.mkdir()
    (victim / "work.txt").write_text("keep me")
    found = tmp_path / "lockviz-run-d"
    write_entry(found, **left_by_a_dead_app(dead_pid, dead_pid, None))
    entry = json.loads((found / "lab.json").read_text())
    (found / "lab.json").write_text(json.dumps({**entry, "workdir": str(victim)}))
    assert registry.sweep(str(tmp_path)) == 1
    assert not found.exists() and (victim / "work.txt").read_text() == "keep me"


def test_a_symlinked_run_dir_is_not_followed(
    tmp_path: Path, sleeper: subprocess.Popen[bytes], dead_pid: int
) -> None:
    elsewhere = tmp_path / "elsewhere"
    write_entry(
        elsewhere, **left_by_a_dead_app(dead_pid, sleeper.pid, procs.start_ticks(sleeper.pid))
    )
    (tmp_path / "lockviz-run-e").symlink_to(elsewhere)
    assert registry.entries(str(tmp_path)) == [] and registry.sweep(str(tmp_path)) == 0
    assert sleeper.poll() is None and elsewhere.exists()


def test_a_live_apps_sets_and_standing_sets_are_left_alone(tmp_path: Path) -> None:
    for name, extra in (("lockviz-run-c", {}), ("lockviz-lab-d", {"standing": True})):
        (tmp_path / name).mkdir()
        registry.record(str(tmp_path / name), {}, **extra)
    assert registry.sweep(str(tmp_path)) == 0
    assert len(registry.entries(str(tmp_path))) == 2


def test_proc_stat_tells_live_stopped_and_gone() -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        stat = procs.stat(child.pid)
        assert stat is not None and stat.ppid == os.getpid() and stat.alive
        assert child.pid in procs.children(os.getpid())
        assert procs.same_process(child.pid, stat.start_ticks)
        assert not procs.same_process(child.pid, stat.start_ticks + 1)
        child.send_signal(19)  # SIGSTOP
        deadline = time.monotonic() + 5
        while (s := procs.stat(child.pid)) is not None and s.state != "T":
            assert time.monotonic() < deadline
        child.kill()
        child.wait()
    finally:
        if child.poll() is None:
            child.kill()
    assert procs.stat(child.pid) is None and not procs.alive(child.pid)
