"""The registry of server sets: what ``lab status`` lists and what a restarted app sweeps."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from lockviz.lab import procs, registry


def test_a_set_is_recorded_listed_and_forgotten(tmp_path: Path) -> None:
    workdir = tmp_path / "lockviz-run-a"
    workdir.mkdir()
    registry.record(str(workdir), {"redis-1#0": 123}, ports={"redis-1": 4000})
    [entry] = registry.entries(str(tmp_path))
    assert entry["owner_pid"] == os.getpid() and entry["ports"] == {"redis-1": 4000}
    registry.forget(str(workdir))
    assert registry.entries(str(tmp_path)) == []


def test_a_dead_apps_leftovers_are_killed_and_removed(tmp_path: Path) -> None:
    orphan = subprocess.Popen(["sleep", "60"])
    dead_owner = subprocess.Popen(["true"])
    dead_owner.wait()
    workdir = tmp_path / "lockviz-run-b"
    workdir.mkdir()
    registry.record(str(workdir), {"redis-1#0": orphan.pid})
    entry = (workdir / "lab.json").read_text().replace(str(os.getpid()), str(dead_owner.pid))
    (workdir / "lab.json").write_text(entry)
    assert registry.sweep(str(tmp_path)) == 1
    orphan.wait(5)
    assert not procs.alive(orphan.pid) and not workdir.exists()


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
