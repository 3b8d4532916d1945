"""Lab processes get only the environment they need: a secret in the app's environment (its
key, a database password) reaches no lock server, fork server, client process or proxy.

A Python child's environment is read from /proc; redis-server writes its process title over
that memory, so a server's is read from what it was started with."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lockviz.lab import children, procs
from lockviz.lab.forkserver import ForkServer
from lockviz.lab.labs import LocalLab

pytestmark = pytest.mark.live
CANARY = "canary-secret-5f1c"
ALLOWED = set(procs.PASSED_ON) | {"PYTHONPATH", "PYTHONUNBUFFERED", "LD_PRELOAD"}


def environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")
    return dict(entry.partition("=")[::2] for entry in raw.split("\0") if entry)


def assert_clean(pid: int, what: str) -> None:
    seen = environ(pid)
    assert CANARY not in "".join(seen.values()), what
    assert {k for k in seen if not k.startswith("FAKETIME_")} <= ALLOWED, (what, sorted(seen))


def test_no_lab_process_sees_the_apps_secrets(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LOCKVIZ_SECRET_KEY", CANARY)
    monkeypatch.setenv("LOCKVIZ_DATABASE_URL", f"postgresql://app:{CANARY}@db/lockviz")
    given: list[tuple[str, dict[str, str]]] = []
    original = subprocess.Popen

    class Recorded(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, args: list[str], **popen: Any) -> None:
            given.append((args[0], popen.get("env") or dict(os.environ)))
            super().__init__(args, **popen)

    monkeypatch.setattr(subprocess, "Popen", Recorded)
    with LocalLab(str(tmp_path)).servers(["redis-1", "storage"]):
        pass
    monkeypatch.setattr(subprocess, "Popen", original)
    servers = [env for program, env in given if program.endswith("redis-server")]
    assert len(servers) == 2
    for env in servers:
        assert CANARY not in "".join(env.values())
        assert {k for k in env if not k.startswith("FAKETIME_")} <= ALLOWED, sorted(env)
    forks = ForkServer()  # a fork server of its own, started now, with the secret about
    try:
        forks._ensure_started()
        assert forks.proc is not None
        assert_clean(forks.proc.pid, "the fork server")
        for role in (children.WORKER, children.PROXY):
            child = forks.fork(role)
            try:
                assert_clean(child.pid, role)
            finally:
                child.kill()
                child.wait(5)
    finally:
        forks._forget()
