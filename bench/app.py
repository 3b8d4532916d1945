"""The app as the benchmarks and the tests start it: ``manage.py serve`` (what ``make run``
runs) in a child process, on a free port, with a database and a log of the caller's choosing
(the tests' replicas of a deployment too, each under a host name of its own).

Reading the process table goes through :mod:`lockviz.lab.procs`, the lab's own reader.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence

from lockviz.lab import procs
from lockviz.lab.ports import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class PortTaken(Exception):
    """The port the app was given was taken before it could listen on it."""


class App:
    """One ``manage.py serve`` process, answering on :attr:`url` once constructed."""

    def __init__(
        self,
        db: str,
        log: str,
        env: dict[str, str] | None = None,
        *,
        root: str = ROOT,
        timeout_s: float = 90,
        wrap: Sequence[str] = (),
        probe: str = "/",
        port: int | None = None,
    ) -> None:
        """Start it on ``db`` (SQLite), appending its output to ``log``, from the checkout
        ``root`` (``wrap``: a command it runs under, which execs it); raises RuntimeError with
        what it printed if ``probe`` does not answer in time (``port``: the one to listen on, else a
        free one). It dies with the caller."""
        self.db = db  # its SQLite file: a test may run manage.py on it (createteacher)
        full = {**os.environ, "LOCKVIZ_DB": db, **(env or {})}
        full.pop("DJANGO_SETTINGS_MODULE", None)
        self.log = open(log, "a+")  # noqa: SIM115 (closed in stop() or kill())
        for attempt in range(3):
            try:
                self._start(port or free_port(), full, root, timeout_s, wrap, probe)
                return
            except PortTaken:
                # A free port is free when asked, not when bound: another process on the
                # machine (a test's server) may take it in between (seen in a fresh-clone CI).
                if port is not None or attempt == 2:
                    raise RuntimeError(f"the app did not start:\n{self.output()}") from None

    def _start(
        self,
        port: int,
        full: dict[str, str],
        root: str,
        timeout_s: float,
        wrap: Sequence[str],
        probe: str,
    ) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{self.port}"
        told = len(self.output())  # what earlier runs with this log printed
        self.proc = procs.spawn(
            [*wrap, sys.executable, "manage.py", "serve", "--port", str(self.port)],
            cwd=root, env=full, stdin=subprocess.DEVNULL, stdout=self.log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with urllib.request.urlopen(self.url + probe, timeout=5):
                    return
            except OSError:
                if f"Couldn't listen on 127.0.0.1:{self.port}" in self.output()[told:]:
                    procs.stop(self.proc, grace_s=30, signals=(signal.SIGINT,))  # log kept open
                    raise PortTaken(self.port) from None
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"the app did not start:\n{self.output()}") from None
                time.sleep(0.2)

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def output(self) -> str:
        """What it has printed so far (this run's and any earlier run's with the same log)."""
        with open(self.log.name) as f:
            return f.read()

    def children(self) -> list[int]:
        """Pids of live processes whose parent is the app."""
        return procs.children(self.proc.pid)

    def descendants(self) -> dict[int, int]:
        """``{pid: start ticks}`` of every live process below the app, at any depth (the fork
        server's clients, the lab's servers and proxies, the channel layer's redis-server)."""
        every = procs.every_process()
        found: dict[int, int] = {}
        parents = {self.proc.pid}
        while parents:
            below = [s for s in every if s.ppid in parents and s.alive and s.pid not in found]
            found.update({s.pid: s.start_ticks for s in below})
            parents = {s.pid for s in below}
        return found

    def freeze(self) -> None:
        """SIGSTOP: it can start nothing more while its processes are counted."""
        os.kill(self.proc.pid, signal.SIGSTOP)

    def kill(self) -> None:
        """``kill -9``: nothing of its own shutdown runs."""
        self.proc.kill()
        self.proc.wait()
        self.log.close()

    def stop(self, timeout_s: float = 30) -> None:
        """Ctrl-C, as a person stops ``make run``; SIGKILL if it has not ended in time."""
        procs.stop(self.proc, grace_s=timeout_s, signals=(signal.SIGINT,))
        self.log.close()
