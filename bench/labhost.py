"""``manage.py labhost`` in a child process, as bench/labhosts.py and tests/deploy/ start it.

Each host runs, as root, under a host name of its own (``unshare --uts``, as the replicas of
tests/deploy/conftest.py do), so that nobody can learn its death from the kernel's process
table: a killed host is found by its heartbeat lapsing, as across machines.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.app import ROOT
from lockviz.lab import procs

SEPARATE_HOSTS = os.geteuid() == 0  # unshare --uts needs CAP_SYS_ADMIN


def turns(seconds: int, title: str) -> dict[str, Any]:
    """A scenario: two clients taking turns for ``seconds``, a run that plays on by itself."""
    return {
        "format": 1, "title": title, "backend": "redis", "fencing": True, "ttl_ms": 3000,
        "clients": ["alice", "bob"],
        "steps": [
            {"at_ms": 1000 * i, "client": ("alice", "bob")[i // 2 % 2],
             "do": ("acquire", "release")[i % 2]}
            for i in range(seconds + 1)
        ],
    }  # fmt: skip


class LabHost:
    """One ``manage.py labhost``, taking runs once constructed (its self-test passed)."""

    def __init__(
        self, name: str, workdir: Path, env: dict[str, str], timeout_s: float = 90
    ) -> None:
        self.name = name
        self.env = env
        self.log_path = workdir / f"{name}.log"
        self.log = open(self.log_path, "a+")  # noqa: SIM115 (closed when it has ended)
        full = {**os.environ, **env}
        full.pop("DJANGO_SETTINGS_MODULE", None)
        wrap = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', name]
        self.proc = procs.spawn(
            [*(wrap if SEPARATE_HOSTS else []), sys.executable, "manage.py", "labhost"],
            cwd=ROOT, env=full, stdin=subprocess.DEVNULL, stdout=self.log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + timeout_s
        while not (found := re.search(r"lab host (\S+): taking runs", self.output())):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"lab host {name} did not start:\n{self.output()}")
            time.sleep(0.2)
        self.identity = found.group(1)  # "<host name>:<pid>:<start ticks>", as runs name it

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def output(self) -> str:
        return self.log_path.read_text()

    def started(self, run_id: str) -> int:
        """How many times this host started ``run_id``."""
        return self.output().count(f"run {run_id}: started here")

    def kill(self) -> None:
        """``kill -9``: nothing of its own shutdown runs."""
        if self.alive:
            self.proc.kill()
        self.proc.wait()
        self.log.close()

    def term(self) -> None:
        """SIGTERM, as an upgrade or ``docker compose stop`` sends: it drains."""
        self.proc.send_signal(signal.SIGTERM)

    def stop(self, timeout_s: float = 30) -> None:
        """Ctrl-C; SIGKILL if it has not ended in time."""
        procs.stop(self.proc, grace_s=timeout_s, signals=(signal.SIGINT,))
        self.log.close()
