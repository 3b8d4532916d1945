"""Cleanup never stops half-way: one step that fails does not leave the next ones undone."""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from typing import Any

import pytest

from lockviz.lab import procs, registry
from lockviz.lab.labs import LocalLab
from lockviz.lab.procs import wait_until
from lockviz.lab.servers.base import Server, Spawn
from lockviz.lab.watchers.redis import KeyWatcher


def test_every_step_runs_and_the_first_failure_is_raised_with_the_others_noted() -> None:
    ran: list[str] = []

    def step(name: str, fails: bool = False) -> Any:
        def run() -> None:
            ran.append(name)
            if fails:
                raise RuntimeError(f"{name} failed")

        return run

    with pytest.raises(RuntimeError, match="b failed") as caught:
        procs.run_each([step("a"), step("b", fails=True), step("c"), step("d", fails=True)])
    assert ran == ["a", "b", "c", "d"]
    assert caught.value.__notes__ == ["also failed while cleaning up: RuntimeError('d failed')"]
    procs.run_each([])  # nothing to do is fine


@dataclass
class TwoSleepers(Server):
    """A server made of a main process and a helper, to break one of their stops."""

    name: str = "redis-1"
    workdir: str = ""
    host: str = "127.0.0.1"
    port: int = 0
    offset_ms: float = 0.0
    proc: subprocess.Popen[bytes] | None = None
    helper: subprocess.Popen[bytes] | None = None

    def helpers(self) -> list[subprocess.Popen[bytes]]:
        return [self.helper] if self.helper is not None else []

    def launch(self, spawn: Spawn = procs.spawn) -> None:
        self.proc, self.helper = spawn(["sleep", "60"]), spawn(["sleep", "60"])

    def wait_ready(self) -> None:
        pass


def test_a_server_whose_main_process_will_not_stop_still_stops_its_helpers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = TwoSleepers()
    server.launch()
    assert server.proc is not None and server.helper is not None
    real_stop = procs.stop

    def stop(proc: subprocess.Popen[Any], **kw: Any) -> None:
        if proc is server.proc:
            raise PermissionError("cannot signal it")
        real_stop(proc, **kw)

    monkeypatch.setattr(procs, "stop", stop)
    with pytest.raises(PermissionError):
        server.stop()
    assert server.helper.poll() is not None and server.retired
    real_stop(server.proc)


@pytest.mark.live
def test_one_server_that_fails_to_stop_does_not_leave_the_others_running() -> None:
    def fails() -> None:
        raise RuntimeError("redis-1 would not stop")

    with (
        pytest.raises(RuntimeError, match="redis-1 would not stop"),
        LocalLab().servers(["redis-1", "redis-2", "storage"]) as servers,
    ):
        stuck, others = servers["redis-1"], [servers["redis-2"], servers["storage"]]
        workdir = servers.workdir
        stuck.stop = fails  # type: ignore[method-assign]
    assert all(s.proc is not None and s.proc.poll() is not None for s in others)
    assert stuck.proc is not None and stuck.proc.poll() is None
    # Its record stays, so `lab down` (or the next start-up) can still find what is left.
    [entry] = [e for e in registry.entries() if e["workdir"] == workdir]
    assert registry.remove(entry) == 1
    stuck.proc.wait(5)


@pytest.mark.live
def test_a_watcher_ends_by_itself_once_its_server_is_stopped_for_good() -> None:
    # If a run's cleanup breaks off before it stops its watchers, they must not go on
    # reconnecting to the port, where a later run's server may listen.
    with LocalLab().servers(["redis-1", "storage"]) as servers:
        node = servers["redis-1"]
        watcher = KeyWatcher.of(node, lambda *a: None)
        watcher.start()
        assert watcher.running
        node.kill()  # a crash is part of the show: it keeps trying
        wait_until(lambda: watcher.failures > 0, 10, "the watcher's first failure")
        assert watcher.running
    deadline = time.monotonic() + 5
    while watcher.running and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not watcher.running
